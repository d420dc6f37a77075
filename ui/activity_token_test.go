package ui

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/airlock-mcp/airlock/internal/model"
)

// Two agents that both call themselves "claude-code" with different tokens are
// told apart in Activity and on the last-call strip: the client name is the agent's
// own choice, the token (its context) is who it is.
func TestActivity_AgentRowsNameTheToken(t *testing.T) {
	h := newHarness(t, 120, 24, true)
	for _, ctx := range []string{"token:ci-bot", "token:laptop"} {
		if _, err := h.sess.Call(context.Background(), model.CallRequest{Context: ctx, Client: "claude-code", Server: "notes", Tool: "list_notes", Args: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	h.waitFor("both calls in the activity", func(m Model) bool { return m.acts.Calls == 2 })
	screenHas(t, h.plain(), "last call", "claude-code · token:laptop")
	h.keys("v")
	screenHas(t, h.plain(), "claude-code · token:ci-bot", "claude-code · token:laptop")
}
