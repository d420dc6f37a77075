package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

// A prompt nobody answers before the approval timeout (or that the caller withdraws)
// is no answer of the person's: Approve returns the context's error, so the engine
// records a timeout (or a withdrawal) with why it asked, never "denied by the person".
func TestPrompter_UnansweredIsNotThePersonsDenial(t *testing.T) {
	pd := &model.Pending{
		Request:    model.CallRequest{Server: "mail", Tool: "send_email", Args: json.RawMessage(`{}`)},
		Tool:       model.ToolInfo{Ref: trust.Ref{Server: "mail", Tool: "send_email"}, Class: trust.Classification{Tier: trust.TierWrite}},
		Verdict:    trust.Verdict{Action: trust.Ask, By: trust.DecidedByPolicy, Reasons: []string{"tier write: policy ask"}},
		ArgsSHA256: trust.ArgsSHA256([]byte(`{}`)),
	}
	in, w := io.Pipe() // a terminal nobody types on
	defer w.Close()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	resp, err := Prompter{In: in, Out: &out, Interactive: true}.Approve(ctx, pd)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Approve = %+v, %v; want the context's deadline error, not an answer", resp, err)
	}
}
