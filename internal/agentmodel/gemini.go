package agentmodel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// GeminiModel is a scripted Gemini API endpoint on 127.0.0.1, for running the real
// Gemini CLI with no network: point the CLI at URL (GOOGLE_GEMINI_BASE_URL) with any
// API key. It answers the methods the CLI calls under /v1beta/models/MODEL:
// streamGenerateContent (?alt=sse: the conversation, answered by the script),
// generateContent (the CLI's utility calls, such as its model router: answered with
// the least JSON its response schema accepts, or the text "ok") and countTokens.
// Every request is recorded, an unknown one too (answered 404), so that a test can
// see what the CLI offered the model and what reached it.
//
// Close is idempotent; the methods are safe for concurrent use.
type GeminiModel struct {
	// URL is the base URL, without a trailing slash: http://127.0.0.1:PORT.
	URL string

	script GeminiScript
	srv    *http.Server
	ln     net.Listener
	once   sync.Once

	recorder[GeminiRequest]
}

// GeminiScript decides the model's reply to one streamGenerateContent request.
type GeminiScript func(GeminiRequest) GeminiReply

// GeminiReply is the model's turn: a function call when Call is set, else Text.
type GeminiReply struct {
	Text string
	Call *GeminiFunctionCall
}

// GeminiFunctionCall is a call the model asks the CLI to make.
type GeminiFunctionCall struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

// GeminiFunctionResponse is what the CLI sent back for a function call.
type GeminiFunctionResponse struct {
	Name     string          `json:"name"`
	ID       string          `json:"id,omitempty"`
	Response json.RawMessage `json:"response"`
}

// Text is the response's "output" (or, failing that, "error") string, else its JSON.
func (r GeminiFunctionResponse) Text() string {
	var v struct {
		Output *string `json:"output"`
		Error  any     `json:"error"`
	}
	if json.Unmarshal(r.Response, &v) == nil {
		if v.Output != nil {
			return *v.Output
		}
		if s, ok := v.Error.(string); ok {
			return s
		}
	}
	return string(r.Response)
}

// GeminiRequest is one request the CLI made, as the model endpoint read it.
type GeminiRequest struct {
	// Method is streamGenerateContent, generateContent or countTokens, or
	// "unknown" for anything else (then Path says what).
	Method string
	Path   string
	// Model is the model named in the path.
	Model string
	// APIKey is the x-goog-api-key header.
	APIKey string
	// Declarations are the names of the function declarations offered, in order.
	Declarations []string
	// ModelTurns counts the model's turns already in the conversation: 0 for the
	// first request of a prompt, 1 after one function call was answered, and so on.
	ModelTurns int
	// Responses are the function responses in the conversation's last content.
	Responses []GeminiFunctionResponse
	// UserText is the text of the conversation's last user content that has text.
	UserText string
	// Body is the request body as sent.
	Body json.RawMessage
}

// Offers reports whether the request offered a function declaration named name.
func (r GeminiRequest) Offers(name string) bool {
	for _, d := range r.Declarations {
		if d == name {
			return true
		}
	}
	return false
}

// GeminiSteps is a script that answers the Nth model turn of a conversation with
// steps[N] (see GeminiRequest.ModelTurns), and with the text "done" past the last.
// Counting turns, not requests, keeps a retried request on the same step.
func GeminiSteps(steps ...GeminiReply) GeminiScript {
	return func(r GeminiRequest) GeminiReply {
		if r.ModelTurns < len(steps) {
			return steps[r.ModelTurns]
		}
		return GeminiReply{Text: "done"}
	}
}

// NewGeminiModel starts the endpoint on 127.0.0.1 with an OS-chosen port.
func NewGeminiModel(script GeminiScript) (*GeminiModel, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the Gemini model: %w", err)
	}
	m := &GeminiModel{URL: "http://" + ln.Addr().String(), script: script, ln: ln}
	m.srv = &http.Server{Handler: http.HandlerFunc(m.serve), ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

// Close stops the endpoint.
func (m *GeminiModel) Close() error {
	var err error
	m.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = m.srv.Shutdown(ctx)
	})
	return err
}

// Conversation returns the streamGenerateContent requests recorded so far.
func (m *GeminiModel) Conversation() []GeminiRequest {
	return m.conversation(func(r GeminiRequest) bool { return r.Method == "streamGenerateContent" })
}

// geminiBody is the part of a request body the endpoint reads.
type geminiBody struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             *string                 `json:"text"`
			FunctionResponse *GeminiFunctionResponse `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
	} `json:"generationConfig"`
}

// maxGeminiBody bounds one request body (the CLI's are tens of kilobytes).
const maxGeminiBody = 32 << 20

func (m *GeminiModel) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := readAll(w, r, maxGeminiBody)
	rec := GeminiRequest{Method: "unknown", Path: r.URL.Path, APIKey: r.Header.Get("x-goog-api-key"), Body: raw}
	model, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":")
	if ok && r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1beta/models/") {
		switch method {
		case "streamGenerateContent", "generateContent", "countTokens":
			rec.Method, rec.Model = method, model
		}
	}
	var body geminiBody
	if err == nil && rec.Method != "unknown" {
		err = json.Unmarshal(raw, &body)
	}
	if err == nil {
		rec.fill(&body)
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, rec)
	m.mu.Unlock()
	switch {
	case rec.Method == "unknown":
		geminiError(w, http.StatusNotFound, "the scripted Gemini model does not serve "+r.Method+" "+r.URL.Path)
	case err != nil:
		geminiError(w, http.StatusBadRequest, "reading the request: "+err.Error())
	case rec.Method == "countTokens":
		writeJSON(w, map[string]any{"totalTokens": max(1, len(raw)/4)})
	case rec.Method == "generateContent":
		schema := body.GenerationConfig.ResponseJSONSchema
		if len(schema) == 0 {
			schema = body.GenerationConfig.ResponseSchema
		}
		text := "ok" // the CLI retries an empty reply
		if len(schema) > 0 {
			b, _ := json.Marshal(GeminiLeastValue(schema))
			text = string(b)
		}
		writeJSON(w, geminiResponse(GeminiReply{Text: text}))
	default:
		reply := m.script(rec)
		w.Header().Set("Content-Type", "text/event-stream")
		b, _ := json.Marshal(geminiResponse(reply))
		fmt.Fprintf(w, "data: %s\n\n", b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// fill sets what the request says from its body.
func (rec *GeminiRequest) fill(b *geminiBody) {
	for _, t := range b.Tools {
		for _, d := range t.FunctionDeclarations {
			rec.Declarations = append(rec.Declarations, d.Name)
		}
	}
	for i, c := range b.Contents {
		if c.Role == "model" {
			rec.ModelTurns++
		}
		var text strings.Builder
		for _, p := range c.Parts {
			if p.Text != nil {
				text.WriteString(*p.Text)
			}
			if i == len(b.Contents)-1 && p.FunctionResponse != nil {
				rec.Responses = append(rec.Responses, *p.FunctionResponse)
			}
		}
		if c.Role != "model" && text.Len() > 0 {
			rec.UserText = text.String()
		}
	}
}

func geminiResponse(r GeminiReply) map[string]any {
	part := map[string]any{"text": r.Text}
	if r.Call != nil {
		args := r.Call.Args
		if args == nil {
			args = map[string]any{}
		}
		part = map[string]any{"functionCall": map[string]any{"name": r.Call.Name, "args": args}}
	}
	return map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
		"modelVersion":  "airlock-scripted",
	}
}

func geminiError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": http.StatusText(code)}})
	_, _ = w.Write(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func readAll(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// GeminiLeastValue is the least value a JSON schema (as the Gemini API takes it in
// responseJsonSchema or responseSchema) accepts: an object with its required
// properties, each the least value of its own schema; a string's first enum value
// or ""; a number's minimum, or 1 where the schema has none; false; an empty array
// (or minItems least items). The CLI's utility calls parse the reply against the
// schema they sent, and some check more than it says: the router's complexity_score
// is an integer with no minimum in its schema, but must be 1 to 100.
func GeminiLeastValue(schema json.RawMessage) any {
	var s struct {
		Type       any                        `json:"type"`
		Enum       []any                      `json:"enum"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		Items      json.RawMessage            `json:"items"`
		MinItems   any                        `json:"minItems"`
		Minimum    *float64                   `json:"minimum"`
		AnyOf      []json.RawMessage          `json:"anyOf"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	if len(s.AnyOf) > 0 {
		return GeminiLeastValue(s.AnyOf[0])
	}
	typ, _ := s.Type.(string)
	if list, ok := s.Type.([]any); ok && len(list) > 0 {
		typ, _ = list[0].(string)
	}
	switch strings.ToLower(typ) {
	case "object":
		out := map[string]any{}
		for _, name := range s.Required {
			out[name] = GeminiLeastValue(s.Properties[name])
		}
		return out
	case "string":
		return ""
	case "number", "integer":
		if s.Minimum != nil {
			return *s.Minimum
		}
		return 1
	case "boolean":
		return false
	case "array":
		n := 0
		switch v := s.MinItems.(type) {
		case float64:
			n = int(v)
		case string: // responseSchema writes int64 as a string
			fmt.Sscan(v, &n)
		}
		out := make([]any, 0, n)
		for range min(n, 16) {
			out = append(out, GeminiLeastValue(s.Items))
		}
		return out
	}
	return nil
}
