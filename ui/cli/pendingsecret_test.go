package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

// `airlock call`'s question prints the arguments with the secrets found in them
// masked, as the dialog first shows them.
func TestWritePending_SecretsMasked(t *testing.T) {
	const token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	args := json.RawMessage(`{"body":"` + token + `"}`)
	pd := &model.Pending{
		Request:    model.CallRequest{Server: "mail", Tool: "send", Args: args},
		Tool:       model.ToolInfo{Ref: trust.Ref{Server: "mail", Tool: "send"}},
		Verdict:    trust.Verdict{Action: trust.Ask, By: trust.DecidedBySecret, Reasons: []string{"body holds something shaped like a GitHub token"}},
		Secrets:    []model.SecretFinding{{Path: "body", Sentence: "body holds something shaped like a GitHub token"}},
		ArgsMasked: json.RawMessage(`{"body":"ghp_…(40 chars)"}`),
		ArgsSHA256: trust.ArgsSHA256(args),
	}
	var b bytes.Buffer
	WritePending(&b, pd)
	if out := b.String(); strings.Contains(out, token) || !strings.Contains(out, "ghp_…(40 chars)") || !strings.Contains(out, "secrets masked") {
		t.Errorf("the question prints:\n%s", out)
	}
}
