package agentmodel

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// openAIPost sends one Responses request and returns the streamed events' data, in
// order, or the one JSON body when not streamed.
func openAIPost(t *testing.T, s *OpenAIServer, body string) []map[string]any {
	t.Helper()
	resp, err := http.Post(s.URL+"/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var out []map[string]any
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return append(out, m)
	}
	sc := bufio.NewScanner(resp.Body)
	var event string
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
			continue
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("event %s: %v", event, err)
			}
			if m["type"] != event {
				t.Errorf("event %q carries type %v", event, m["type"])
			}
			out = append(out, m)
		}
	}
	return out
}

const openAITools = `"tools":[{"type":"function","name":"exec_command","parameters":{}},{"type":"web_search"},
	{"type":"namespace","name":"mcp__airlock","tools":[{"type":"function","name":"notes__list_notes","parameters":{}}]}]`

// A conversation plays the script by its position: the first request gets the
// call, streamed as Codex reads it (created, output_item.added/done, completed);
// the request that carries the call's output gets the next turn, whose Reply sees
// that output; past the script, "done.". A request without function tools gets
// Aside, and each request is recorded with the tools it offered.
func TestOpenAI_PlaysTheScriptByPosition(t *testing.T) {
	var seen string
	s := NewOpenAI(
		OpenAITurn{Namespace: "mcp__airlock", Tool: "notes__list_notes", Input: map[string]any{"limit": 2}},
		OpenAITurn{Reply: func(r OpenAIRequest) OpenAITurn {
			out, _ := r.LastOutput()
			seen = out.Output
			return OpenAITurn{Text: "the notes: " + out.Output}
		}},
	)
	defer s.Close()

	evs := openAIPost(t, s, `{"model":"m","stream":true,`+openAITools+`,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"list"}]}]}`)
	var types []string
	for _, e := range evs {
		types = append(types, e["type"].(string))
	}
	if types[0] != "response.created" || types[len(types)-1] != "response.completed" || !strings.Contains(strings.Join(types, " "), "response.output_item.added") {
		t.Errorf("event order %v", types)
	}
	var done map[string]any
	for _, e := range evs {
		if e["type"] == "response.output_item.done" {
			done = e["item"].(map[string]any)
		}
	}
	if done["type"] != "function_call" || done["name"] != "notes__list_notes" || done["namespace"] != "mcp__airlock" || done["arguments"] != `{"limit":2}` {
		t.Fatalf("the call item: %v", done)
	}
	callID := done["call_id"].(string)

	second := `{"model":"m","stream":false,` + openAITools + `,"input":[
		{"role":"user","content":"list"},
		{"type":"function_call","namespace":"mcp__airlock","name":"notes__list_notes","call_id":"` + callID + `","arguments":"{}"},
		{"type":"function_call_output","call_id":"` + callID + `","output":[{"type":"input_text","text":"3 notes"},{"type":"input_text","text":"note-1"}]}]}`
	body := openAIPost(t, s, second)[0]
	msg := body["output"].([]any)[0].(map[string]any)
	text := msg["content"].([]any)[0].(map[string]any)["text"]
	if body["status"] != "completed" || msg["type"] != "message" || text != "the notes: 3 notes\nnote-1" || seen != "3 notes\nnote-1" {
		t.Errorf("second turn: %v (Reply saw %q)", body, seen)
	}

	third := strings.Replace(second, `"output":[`, `"output":"x"},{"type":"message","role":"assistant","content":"ok"},{"type":"function_call_output","call_id":"c2","output":[`, 1)
	if got := openAIPost(t, s, third)[0]["output"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; got != "done." {
		t.Errorf("past the script: %v", got)
	}
	if got := openAIPost(t, s, `{"model":"m","input":"a title please"}`)[0]["output"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; got != "ok" {
		t.Errorf("aside: %v", got)
	}

	reqs := s.Requests()
	if len(reqs) != 4 || len(s.Conversation()) != 3 {
		t.Fatalf("recorded %d requests, %d of the conversation", len(reqs), len(s.Conversation()))
	}
	if got := strings.Join(reqs[0].ToolNames(), ","); got != "exec_command,mcp__airlock/notes__list_notes" {
		t.Errorf("tools offered: %s", got)
	}
	if got := reqs[0].ToolsIn("mcp__airlock"); len(got) != 1 || got[0] != "notes__list_notes" {
		t.Errorf("tools in mcp__airlock: %v", got)
	}
	if in := reqs[1].Input; len(in) != 3 || in[0].Type != "message" || in[0].Text != "list" || in[1].Namespace != "mcp__airlock" {
		t.Errorf("second request's input: %+v", in)
	}
	if out, ok := reqs[0].LastOutput(); ok {
		t.Errorf("the first request has an output: %+v", out)
	}
}

// A body that is not JSON is refused with 400 and recorded nowhere.
func TestOpenAI_RefusesABadBody(t *testing.T) {
	s := NewOpenAI()
	defer s.Close()
	resp, err := http.Post(s.URL+"/responses", "application/json", strings.NewReader("{"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || len(s.Requests()) != 0 {
		t.Errorf("status %d, %d recorded", resp.StatusCode, len(s.Requests()))
	}
	resp, err = http.Get(s.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct{ Data []struct{ ID string } }
	_ = json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if len(models.Data) != 1 || models.Data[0].ID != "scripted" {
		t.Errorf("/v1/models: %+v", models)
	}
}
