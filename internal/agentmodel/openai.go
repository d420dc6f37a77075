package agentmodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
)

// OpenAITurn is one answer of the model in an OpenAI Responses conversation: a
// function_call of Tool with Input when Tool is set, else an assistant message of
// Text. Reply, when set, decides the turn from the request instead (e.g. from the
// last function_call_output).
type OpenAITurn struct {
	Text string
	// Namespace is the namespace of Tool when the agent offered it inside one
	// (Codex offers an MCP server's tools in the namespace mcp__SERVER).
	Namespace string
	Tool      string
	Input     map[string]any
	Reply     func(OpenAIRequest) OpenAITurn
}

// OpenAIRequest is one recorded request to the endpoint.
type OpenAIRequest struct {
	Method, Path string
	// Header holds the request's headers (the API key arrives as Authorization).
	Header http.Header
	// Body is the request's body as sent.
	Body []byte
	// Model, Stream, Tools and Input are read from a Responses body; they are zero
	// for other paths.
	Model  string
	Stream bool
	Tools  []OpenAITool
	Input  []OpenAIItem
}

// OpenAITool is a function tool the agent offered the model, or another kind (a
// built-in such as web_search) whose Type says what it is and whose Name is empty.
// A function offered inside a namespace (Codex offers each MCP server's tools in
// one, mcp__SERVER) is listed by itself with its Namespace.
type OpenAITool struct {
	Type        string          `json:"type"`
	Namespace   string          `json:"-"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// OpenAIItem is one item of the conversation's input. For a message, Role and Text
// (its text parts joined); for a function_call, Namespace, Name, CallID and
// Arguments; for a function_call_output, CallID and Output (its text, joined when it
// is a list of content parts).
type OpenAIItem struct {
	Type      string
	Role      string
	Text      string
	Namespace string
	Name      string
	CallID    string
	Arguments string
	Output    string
}

// ToolNames lists the function tools offered in the request, a namespaced one as
// NAMESPACE/NAME.
func (r OpenAIRequest) ToolNames() []string {
	out := make([]string, 0, len(r.Tools))
	for _, t := range r.Tools {
		switch {
		case t.Name == "":
		case t.Namespace != "":
			out = append(out, t.Namespace+"/"+t.Name)
		default:
			out = append(out, t.Name)
		}
	}
	return out
}

// ToolsIn lists the names of the function tools offered inside namespace.
func (r OpenAIRequest) ToolsIn(namespace string) []string {
	var out []string
	for _, t := range r.Tools {
		if t.Name != "" && t.Namespace == namespace {
			out = append(out, t.Name)
		}
	}
	return out
}

// Outputs lists every function_call_output of the conversation, oldest first.
func (r OpenAIRequest) Outputs() []OpenAIItem {
	var out []OpenAIItem
	for _, it := range r.Input {
		if it.Type == "function_call_output" {
			out = append(out, it)
		}
	}
	return out
}

// LastOutput is the newest function_call_output of the conversation (ok false if
// none).
func (r OpenAIRequest) LastOutput() (OpenAIItem, bool) {
	res := r.Outputs()
	if len(res) == 0 {
		return OpenAIItem{}, false
	}
	return res[len(res)-1], true
}

// assistantTurns counts the model's answers the conversation holds (each
// function_call and each assistant message): the position of the turn asked for.
func (r OpenAIRequest) assistantTurns() int {
	n := 0
	for _, it := range r.Input {
		if it.Type == "function_call" || it.Type == "message" && it.Role == "assistant" {
			n++
		}
	}
	return n
}

// OpenAIServer is a scripted OpenAI Responses API endpoint on 127.0.0.1 (POST
// /v1/responses, answered as a server-sent event stream when asked for one, else
// one JSON response). A request that offers function tools is the agent's
// conversation: it gets the script's turn for its position (the number of model
// answers its input holds), or "done." past the script's end. A request without
// function tools (a title, a summary, a probe) gets Aside. GET /v1/models lists one
// model; any other path gets an empty JSON object.
type OpenAIServer struct {
	// URL is the base URL to give the agent, ending in /v1 (a provider's base_url).
	URL string
	// Aside is the text answered to requests that offer no function tools.
	Aside string

	srv   *httptest.Server
	turns []OpenAITurn
	recorder[OpenAIRequest]
	seen chan struct{} // closed and replaced on every request
}

// NewOpenAI starts an endpoint that plays turns. Close it when done.
func NewOpenAI(turns ...OpenAITurn) *OpenAIServer {
	s := &OpenAIServer{turns: turns, Aside: "ok", seen: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close stops the endpoint.
func (s *OpenAIServer) Close() { s.srv.Close() }

// SetTurns replaces the script (for the next conversation on the same endpoint).
func (s *OpenAIServer) SetTurns(turns ...OpenAITurn) {
	s.mu.Lock()
	s.turns = turns
	s.mu.Unlock()
}

// Conversation returns the recorded Responses requests that offered function
// tools: the agent's own turns, oldest first.
func (s *OpenAIServer) Conversation() []OpenAIRequest {
	return s.conversation(func(r OpenAIRequest) bool { return len(r.ToolNames()) > 0 })
}

// Seen returns a channel closed at the next request.
func (s *OpenAIServer) Seen() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen
}

func (s *OpenAIServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := OpenAIRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	isResponses := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses")
	if isResponses {
		if err := parseOpenAIBody(body, &req); err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"type":"invalid_request_error","message":"bad JSON"}}`)
			return
		}
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	n := len(s.reqs)
	close(s.seen)
	s.seen = make(chan struct{})
	turns := s.turns
	aside := s.Aside
	s.mu.Unlock()

	switch {
	case isResponses:
		turn := OpenAITurn{Text: aside}
		if len(req.ToolNames()) > 0 {
			turn = OpenAITurn{Text: "done."}
			if i := req.assistantTurns(); i < len(turns) {
				turn = turns[i]
			}
		}
		if turn.Reply != nil {
			turn = turn.Reply(req)
		}
		writeOpenAITurn(w, req, turn, n)
	case strings.HasSuffix(r.URL.Path, "/models"):
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"scripted","object":"model","created":0,"owned_by":"airlock-tests"}]}`)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	}
}

// parseOpenAIBody reads the fields of a Responses body that tests look at.
func parseOpenAIBody(body []byte, req *OpenAIRequest) error {
	var raw struct {
		Model  string            `json:"model"`
		Stream bool              `json:"stream"`
		Tools  []json.RawMessage `json:"tools"`
		Input  json.RawMessage   `json:"input"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return err
	}
	req.Model, req.Stream = raw.Model, raw.Stream
	for _, t := range raw.Tools {
		var tool struct {
			OpenAITool
			Tools []OpenAITool `json:"tools"`
		}
		if err := json.Unmarshal(t, &tool); err != nil {
			return err
		}
		if tool.Type == "namespace" {
			for _, in := range tool.Tools {
				if in.Type != "function" {
					in.Name = ""
				}
				in.Namespace = tool.Name
				req.Tools = append(req.Tools, in)
			}
			continue
		}
		if tool.Type != "function" {
			tool.Name = "" // a built-in or custom tool: its type says what it is
		}
		req.Tools = append(req.Tools, tool.OpenAITool)
	}
	var text string
	if len(raw.Input) == 0 || json.Unmarshal(raw.Input, &text) == nil {
		if text != "" {
			req.Input = []OpenAIItem{{Type: "message", Role: "user", Text: text}}
		}
		return nil
	}
	var items []struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		Namespace string          `json:"namespace"`
		Name      string          `json:"name"`
		CallID    string          `json:"call_id"`
		Arguments string          `json:"arguments"`
		Output    json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(raw.Input, &items); err != nil {
		return err
	}
	for _, it := range items {
		item := OpenAIItem{Type: it.Type, Role: it.Role, Namespace: it.Namespace, Name: it.Name, CallID: it.CallID, Arguments: it.Arguments}
		if item.Type == "" && it.Role != "" {
			item.Type = "message" // the easy input message form
		}
		switch item.Type {
		case "message":
			item.Text = openAIContentText(it.Content)
		case "function_call_output":
			item.Output = openAIContentText(it.Output)
		}
		req.Input = append(req.Input, item)
	}
	return nil
}

// openAIContentText joins a message's content or a call's output: a string, or a
// list of parts whose text is joined with newlines.
func openAIContentText(c json.RawMessage) string {
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(c, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// writeOpenAITurn answers one Responses request with turn: a server-sent event
// stream when the request asked for one, else one JSON response.
func writeOpenAITurn(w http.ResponseWriter, req OpenAIRequest, turn OpenAITurn, n int) {
	model := req.Model
	if model == "" {
		model = "scripted"
	}
	respID := fmt.Sprintf("resp_scripted_%d", n)
	var item map[string]any
	if turn.Tool != "" {
		input := turn.Input
		if input == nil {
			input = map[string]any{}
		}
		args, _ := json.Marshal(input)
		item = map[string]any{
			"type": "function_call", "id": fmt.Sprintf("fc_scripted_%d", n), "call_id": fmt.Sprintf("call_scripted_%d", n),
			"name": turn.Tool, "arguments": string(args), "status": "completed",
		}
		if turn.Namespace != "" {
			item["namespace"] = turn.Namespace
		}
	} else {
		item = map[string]any{
			"type": "message", "id": fmt.Sprintf("msg_scripted_%d", n), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": turn.Text, "annotations": []any{}}},
		}
	}
	usage := map[string]any{
		"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15,
	}
	response := func(status string, output []any) map[string]any {
		return map[string]any{"id": respID, "object": "response", "created_at": 0, "status": status, "model": model, "output": output, "usage": usage}
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(response("completed", []any{item}))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	seq := 0
	event := func(name string, data map[string]any) {
		data["type"] = name
		data["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if fl != nil {
			fl.Flush()
		}
	}
	event("response.created", map[string]any{"response": response("in_progress", []any{})})
	event("response.in_progress", map[string]any{"response": response("in_progress", []any{})})
	if turn.Tool != "" {
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["arguments"], added["status"] = "", "in_progress"
		event("response.output_item.added", map[string]any{"output_index": 0, "item": added})
		event("response.function_call_arguments.delta", map[string]any{"output_index": 0, "item_id": item["id"], "delta": item["arguments"]})
		event("response.function_call_arguments.done", map[string]any{"output_index": 0, "item_id": item["id"], "arguments": item["arguments"]})
	} else {
		event("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
			"type": "message", "id": item["id"], "role": "assistant", "status": "in_progress", "content": []any{},
		}})
		part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
		event("response.content_part.added", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "part": part})
		event("response.output_text.delta", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "delta": turn.Text})
		event("response.output_text.done", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0, "text": turn.Text})
		event("response.content_part.done", map[string]any{"output_index": 0, "item_id": item["id"], "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": turn.Text, "annotations": []any{}}})
	}
	event("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	event("response.completed", map[string]any{"response": response("completed", []any{item})})
}
