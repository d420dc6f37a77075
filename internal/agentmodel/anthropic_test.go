package agentmodel

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func postAnthropic(t *testing.T, s *AnthropicServer, path, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sseEvents reads a server-sent event stream into its events' data, by name.
func sseEvents(t *testing.T, r io.Reader) (names []string, data []map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l := sc.Text()
		if name, ok := strings.CutPrefix(l, "event: "); ok {
			names = append(names, name)
		}
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			var v map[string]any
			if err := json.Unmarshal([]byte(d), &v); err != nil {
				t.Fatalf("event data is not JSON: %q", d)
			}
			data = append(data, v)
		}
	}
	return names, data
}

// The script's turn is chosen by the conversation's position; a tool_use streams
// its arguments as one input_json_delta; the tool result that comes back is
// recorded with its text.
func TestAnthropic_PlaysTheScriptAndRecords(t *testing.T) {
	s := NewAnthropic(
		AnthropicTurn{Tool: "mcp__airlock__notes__list_notes", Input: map[string]any{"all": true}},
		AnthropicTurn{Reply: func(r AnthropicRequest) AnthropicTurn {
			res, _ := r.LastToolResult()
			return AnthropicTurn{Text: "saw: " + res.Text}
		}},
	)
	defer s.Close()
	tools := `"tools":[{"name":"mcp__airlock__notes__list_notes","input_schema":{"type":"object"}}]`

	resp := postAnthropic(t, s, "/v1/messages", `{"model":"m","stream":true,`+tools+`,"messages":[{"role":"user","content":"list"}]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	names, data := sseEvents(t, resp.Body)
	want := "message_start content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	block := data[1]["content_block"].(map[string]any)
	delta := data[2]["delta"].(map[string]any)
	stop := data[4]["delta"].(map[string]any)["stop_reason"]
	if block["type"] != "tool_use" || block["name"] != "mcp__airlock__notes__list_notes" || delta["partial_json"] != `{"all":true}` || stop != "tool_use" {
		t.Fatalf("tool_use turn: %v %v %v", block, delta, stop)
	}
	id := block["id"].(string)

	// Turn two, not streamed: the reply reads the tool result.
	body := `{"model":"m",` + tools + `,"messages":[{"role":"user","content":"list"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"` + id + `","name":"mcp__airlock__notes__list_notes","input":{"all":true}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","is_error":true,"content":[{"type":"text","text":"denied: no"}]}]}]}`
	resp = postAnthropic(t, s, "/v1/messages", body)
	var msg struct {
		Content []struct{ Type, Text string }
		Stop    string `json:"stop_reason"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != "saw: denied: no" || msg.Stop != "end_turn" {
		t.Fatalf("text turn: %+v", msg)
	}

	// A request without tools is an aside; count_tokens and other paths answer.
	resp = postAnthropic(t, s, "/v1/messages", `{"model":"m","messages":[{"role":"user","content":"title?"}]}`)
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil || msg.Content[0].Text != "ok" {
		t.Fatalf("aside: %+v %v", msg, err)
	}
	if resp := postAnthropic(t, s, "/v1/messages/count_tokens", `{"model":"m","messages":[]}`); resp.StatusCode != 200 {
		t.Fatalf("count_tokens: %s", resp.Status)
	}

	conv := s.Conversation()
	if len(s.Requests()) != 4 || len(conv) != 2 {
		t.Fatalf("recorded %d requests, %d of the conversation", len(s.Requests()), len(conv))
	}
	if names := conv[0].ToolNames(); len(names) != 1 || names[0] != "mcp__airlock__notes__list_notes" {
		t.Errorf("offered tools %v", names)
	}
	res, ok := conv[1].LastToolResult()
	if !ok || !res.IsError || res.Text != "denied: no" || res.ToolUseID != id {
		t.Errorf("recorded tool result %+v", res)
	}
	if !conv[0].Stream || conv[1].Stream {
		t.Errorf("stream flags %v %v", conv[0].Stream, conv[1].Stream)
	}
}
