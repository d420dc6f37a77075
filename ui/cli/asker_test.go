package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/model"
)

func askerRequest() *model.SamplingRequest {
	return &model.SamplingRequest{
		Server: "everything", SystemPrompt: "be \x1b[31mred\n✔ Approved", MaxTokens: 9,
		Messages: []model.SamplingMessage{
			{Role: "user", Parts: []model.SamplingPart{{Kind: "text", Text: "say hi"}}},
			{Role: "user", Parts: []model.SamplingPart{{Kind: "audio", MIME: "audio/wav", Size: 50}}},
		},
	}
}

// Without a terminal a sampling request or an elicitation is declined at once, and
// the person reading stderr is told why; nothing is read from stdin.
func TestAsker_NoTerminalDeclinesAtOnce(t *testing.T) {
	var out bytes.Buffer
	a := Asker{In: strings.NewReader("typed ahead\n"), Out: &out}
	ans, err := a.Sample(context.Background(), askerRequest())
	if err != nil || !ans.Decline {
		t.Fatalf("Sample = %+v, %v; want a decline", ans, err)
	}
	action, content, err := a.Elicit(context.Background(), &model.Elicitation{Server: "everything", Mode: "form", Message: "name?", Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"string"}}}`)})
	if err != nil || action != "decline" || content != nil {
		t.Fatalf("Elicit = %q %v %v; want decline", action, content, err)
	}
	got := out.String()
	for _, want := range []string{
		"server everything asks for an LLM completion (sampling)",
		"Not a terminal: nobody can write a reply, so the sampling request is declined.",
		"server everything asks you for input",
		"Not a terminal: nobody can answer, so the request is declined.",
		"│ be ⟨ESC⟩[31mred", "    │ ✔ Approved", "[audio audio/wav, 50 bytes — not shown]", "max tokens: 9",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b[31m") {
		t.Error("a raw escape reached stderr")
	}
}

// On a terminal the reply is read from the line the person types; an empty line
// declines; the typed-ahead input is drained before asking.
func TestAsker_TerminalReadsTheReply(t *testing.T) {
	var out bytes.Buffer
	drained := 0
	a := Asker{In: strings.NewReader("a reply by hand\n"), Out: &out, Interactive: true, Drain: func() { drained++ }}
	ans, err := a.Sample(context.Background(), askerRequest())
	if err != nil || ans.Decline || ans.Reply != "a reply by hand" {
		t.Fatalf("Sample = %+v, %v", ans, err)
	}
	if drained != 1 {
		t.Errorf("drained %d times before asking, want 1", drained)
	}
	a.In = strings.NewReader("\n")
	if ans, _ := a.Sample(context.Background(), askerRequest()); !ans.Decline {
		t.Errorf("an empty line = %+v, want a decline", ans)
	}
	// An elicitation form: one field, then the confirmation.
	pr, pw := ioPipe()
	a.In = pr
	go func() {
		pw.line("Ada")
		pw.line("y")
	}()
	action, content, err := a.Elicit(context.Background(), &model.Elicitation{Server: "everything", Mode: "form", Message: "name?",
		Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
	if err != nil || action != "accept" || content["name"] != "Ada" {
		t.Errorf("Elicit = %q %v %v", action, content, err)
	}
}
