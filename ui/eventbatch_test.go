package ui

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
)

// A busy gateway cost the TUI one frame (a View) per call, because
// the pump delivered each call's end as its own message. Calls that end close together
// now arrive as one batch; any other event (a question, a status) ends the batch at
// once and is never held back behind it.
func TestEventPump_CallsBatchedQuestionsNot(t *testing.T) {
	sess, _ := newDemo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Drain what connecting reported.
	for {
		dctx, dcancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, ok := sess.Next(dctx)
		dcancel()
		if !ok {
			break
		}
	}
	for range 5 {
		if _, err := sess.Call(ctx, model.CallRequest{Server: "docs", Tool: "get_doc", Args: json.RawMessage(`{"id":"mcp-overview"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	msg := waitEvent(ctx, sess)()
	batch, ok := msg.(eventsMsg)
	if !ok {
		t.Fatalf("five calls' ends came as %T, want one eventsMsg", msg)
	}
	calls := 0
	for _, e := range batch {
		if _, ok := e.(model.CallFinished); ok {
			calls++
		}
	}
	if calls != 5 {
		t.Errorf("the batch holds %d CallFinished of 5: %#v", calls, batch)
	}

	// A call's end followed by a question: the question ends the batch and comes
	// with it, without waiting out the window.
	if _, err := sess.Call(ctx, model.CallRequest{Server: "docs", Tool: "get_doc", Args: json.RawMessage(`{"id":"mcp-overview"}`)}); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, _ = sess.Call(ctx, model.CallRequest{Server: "notes", Tool: "create_note", Args: json.RawMessage(`{"title":"t","body":"b"}`)})
	}()
	start := time.Now()
	var got []model.Event
	for len(got) == 0 || !isQuestion(got[len(got)-1]) {
		switch msg := waitEvent(ctx, sess)().(type) {
		case eventsMsg:
			got = append(got, msg...)
		case eventMsg:
			got = append(got, msg.event)
		default:
			t.Fatalf("pump: %T", msg)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the question took %v to come through", took)
	}
}

func isQuestion(e model.Event) bool {
	_, ok := e.(model.ApprovalRequested)
	return ok
}
