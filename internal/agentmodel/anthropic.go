package agentmodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
)

// AnthropicTurn is one answer of the model in an Anthropic Messages conversation:
// a call of Tool with Input when Tool is set (stop_reason tool_use), else Text
// (stop_reason end_turn). Reply, when set, decides the turn from the request instead
// (e.g. from the last tool result).
type AnthropicTurn struct {
	Text  string
	Tool  string
	Input map[string]any
	Reply func(AnthropicRequest) AnthropicTurn
}

// AnthropicRequest is one recorded request to the endpoint.
type AnthropicRequest struct {
	Method, Path string
	// Header holds the request's headers (the API key arrives as x-api-key).
	Header http.Header
	// Body is the request's body as sent.
	Body []byte
	// Model, Stream, Tools and Messages are read from a Messages API body; they are
	// zero for other paths.
	Model    string
	Stream   bool
	Tools    []AnthropicTool
	Messages []AnthropicMessage
}

// AnthropicTool is a tool the agent offered the model.
type AnthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// AnthropicMessage is one message of the conversation the agent sent.
type AnthropicMessage struct {
	Role   string
	Blocks []AnthropicBlock
}

// AnthropicBlock is one content block. For a tool_result, Text is its text content
// joined and ToolUseID the call it answers; for a tool_use, ID, Name and Input.
type AnthropicBlock struct {
	Type      string
	ID        string
	Text      string
	ToolUseID string
	IsError   bool
	Name      string
	Input     json.RawMessage
}

// ToolNames lists the names of the tools offered in the request.
func (r AnthropicRequest) ToolNames() []string {
	out := make([]string, 0, len(r.Tools))
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// ToolResults lists every tool_result block of the conversation, oldest first.
func (r AnthropicRequest) ToolResults() []AnthropicBlock {
	var out []AnthropicBlock
	for _, m := range r.Messages {
		for _, b := range m.Blocks {
			if b.Type == "tool_result" {
				out = append(out, b)
			}
		}
	}
	return out
}

// LastToolResult is the newest tool_result of the conversation (ok false if none).
func (r AnthropicRequest) LastToolResult() (AnthropicBlock, bool) {
	res := r.ToolResults()
	if len(res) == 0 {
		return AnthropicBlock{}, false
	}
	return res[len(res)-1], true
}

// assistantTurns counts the assistant's messages so far: the position of the turn
// the model is asked for.
func (r AnthropicRequest) assistantTurns() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// AnthropicServer is a scripted Anthropic Messages API endpoint on 127.0.0.1. A
// request that offers tools is the agent's conversation: it gets the script's turn
// for its position (the number of assistant messages it holds), or "done." past the
// script's end. A request without tools (a title, a summary, a probe) gets Aside.
// count_tokens gets a small count; any other path an empty JSON object.
type AnthropicServer struct {
	// URL is the base URL to give the agent (ANTHROPIC_BASE_URL).
	URL string
	// Aside is the text answered to requests that offer no tools.
	Aside string

	srv   *httptest.Server
	turns []AnthropicTurn
	recorder[AnthropicRequest]
}

// NewAnthropic starts an endpoint that plays turns. Close it when done.
func NewAnthropic(turns ...AnthropicTurn) *AnthropicServer {
	s := &AnthropicServer{turns: turns, Aside: "ok"}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the endpoint.
func (s *AnthropicServer) Close() { s.srv.Close() }

// SetTurns replaces the script (for the next conversation on the same endpoint).
func (s *AnthropicServer) SetTurns(turns ...AnthropicTurn) {
	s.mu.Lock()
	s.turns = turns
	s.mu.Unlock()
}

// Conversation returns the recorded Messages requests that offered tools: the
// agent's own turns, oldest first.
func (s *AnthropicServer) Conversation() []AnthropicRequest {
	return s.conversation(func(r AnthropicRequest) bool { return len(r.Tools) > 0 })
}

func (s *AnthropicServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := AnthropicRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	isMessages := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages")
	if isMessages || strings.HasSuffix(r.URL.Path, "/count_tokens") {
		if err := parseAnthropicBody(body, &req); err != nil {
			http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad JSON"}}`, http.StatusBadRequest)
			return
		}
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	n := len(s.reqs)
	turns := s.turns
	aside := s.Aside
	s.mu.Unlock()

	switch {
	case isMessages:
		turn := AnthropicTurn{Text: aside}
		if len(req.Tools) > 0 {
			turn = AnthropicTurn{Text: "done."}
			if i := req.assistantTurns(); i < len(turns) {
				turn = turns[i]
			}
		}
		if turn.Reply != nil {
			turn = turn.Reply(req)
		}
		writeAnthropicTurn(w, req, turn, n)
	case strings.HasSuffix(r.URL.Path, "/count_tokens"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"input_tokens":%d}`, 1+len(body)/4)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	}
}

// parseAnthropicBody reads the fields of a Messages body that tests look at.
func parseAnthropicBody(body []byte, req *AnthropicRequest) error {
	var raw struct {
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		Tools    []AnthropicTool `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return err
	}
	req.Model, req.Stream, req.Tools = raw.Model, raw.Stream, raw.Tools
	for _, m := range raw.Messages {
		msg := AnthropicMessage{Role: m.Role}
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			msg.Blocks = []AnthropicBlock{{Type: "text", Text: text}}
		} else {
			var blocks []struct {
				Type      string          `json:"type"`
				ID        string          `json:"id"`
				Text      string          `json:"text"`
				ToolUseID string          `json:"tool_use_id"`
				IsError   bool            `json:"is_error"`
				Name      string          `json:"name"`
				Input     json.RawMessage `json:"input"`
				Content   json.RawMessage `json:"content"`
			}
			if err := json.Unmarshal(m.Content, &blocks); err != nil {
				return err
			}
			for _, b := range blocks {
				blk := AnthropicBlock{Type: b.Type, ID: b.ID, Text: b.Text, ToolUseID: b.ToolUseID, IsError: b.IsError, Name: b.Name, Input: b.Input}
				if b.Type == "tool_result" {
					blk.Text = anthropicContentText(b.Content)
				}
				msg.Blocks = append(msg.Blocks, blk)
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	return nil
}

// anthropicContentText joins a tool_result's content: a string, or text blocks.
func anthropicContentText(c json.RawMessage) string {
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(c, &blocks)
	var b strings.Builder
	for _, blk := range blocks {
		if blk.Type == "text" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(blk.Text)
		}
	}
	return b.String()
}

// writeAnthropicTurn answers one Messages request with turn: a server-sent event
// stream when the request asked for one, else one JSON message.
func writeAnthropicTurn(w http.ResponseWriter, req AnthropicRequest, turn AnthropicTurn, n int) {
	model := req.Model
	if model == "" {
		model = "scripted"
	}
	msgID := fmt.Sprintf("msg_scripted_%d", n)
	var block map[string]any
	stop := "end_turn"
	input := turn.Input
	if input == nil {
		input = map[string]any{}
	}
	inputJSON, _ := json.Marshal(input)
	if turn.Tool != "" {
		stop = "tool_use"
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_scripted_%d", n), "name": turn.Tool, "input": json.RawMessage(inputJSON)}
	} else {
		block = map[string]any{"type": "text", "text": turn.Text}
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if fl != nil {
			fl.Flush()
		}
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}})
	if turn.Tool != "" {
		start := map[string]any{"type": "tool_use", "id": block["id"], "name": turn.Tool, "input": map[string]any{}}
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(inputJSON)}})
	} else {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": turn.Text}})
	}
	event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	event("message_stop", map[string]any{"type": "message_stop"})
}
