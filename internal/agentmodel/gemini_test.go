package agentmodel

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func geminiPost(t *testing.T, m *GeminiModel, path, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, m.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-goog-api-key", "dummy")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var sb strings.Builder
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		sb.WriteString(sc.Text() + "\n")
	}
	return res, sb.String()
}

// sseParts is the parts of the one SSE event in out.
func sseParts(t *testing.T, out string) []map[string]any {
	t.Helper()
	data, ok := strings.CutPrefix(strings.TrimSpace(out), "data: ")
	if !ok {
		t.Fatalf("not an SSE event: %q", out)
	}
	var v struct {
		Candidates []struct {
			Content struct {
				Role  string
				Parts []map[string]any
			}
			FinishReason string
		}
	}
	if err := json.Unmarshal([]byte(data), &v); err != nil || len(v.Candidates) != 1 || v.Candidates[0].Content.Role != "model" || v.Candidates[0].FinishReason != "STOP" {
		t.Fatalf("not one finished model candidate (%v): %s", err, data)
	}
	return v.Candidates[0].Content.Parts
}

// A conversation of two turns: the first request gets the scripted function call,
// the second (carrying its function response) the scripted text; both are recorded
// with what the CLI offered and what reached the model.
func TestGeminiModel_ScriptedConversationIsRecorded(t *testing.T) {
	m, err := NewGeminiModel(GeminiSteps(
		GeminiReply{Call: &GeminiFunctionCall{Name: "mcp_airlock_notes__list_notes", Args: map[string]any{"limit": 2}}},
		GeminiReply{Text: "two notes"},
	))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const decls = `"tools":[{"functionDeclarations":[{"name":"read_file"},{"name":"mcp_airlock_notes__list_notes"}]}]`
	res, out := geminiPost(t, m, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"text":"ctx"},{"text":"list my notes"}]}],`+decls+`}`)
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	if diff := cmp.Diff([]map[string]any{{"functionCall": map[string]any{"name": "mcp_airlock_notes__list_notes", "args": map[string]any{"limit": float64(2)}}}}, sseParts(t, out)); diff != "" {
		t.Errorf("first turn (-want +got):\n%s", diff)
	}
	_, out = geminiPost(t, m, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"text":"list my notes"}]},{"role":"model","parts":[{"functionCall":{"name":"mcp_airlock_notes__list_notes","args":{}}}]},`+
			`{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"mcp_airlock_notes__list_notes","response":{"output":"note-1: Groceries"}}}]}],`+decls+`}`)
	if diff := cmp.Diff([]map[string]any{{"text": "two notes"}}, sseParts(t, out)); diff != "" {
		t.Errorf("second turn (-want +got):\n%s", diff)
	}

	conv := m.Conversation()
	if len(conv) != 2 {
		t.Fatalf("%d requests recorded, want 2", len(conv))
	}
	if conv[0].Model != "gemini-2.5-flash" || conv[0].APIKey != "dummy" || conv[0].ModelTurns != 0 || conv[0].UserText != "ctxlist my notes" {
		t.Errorf("first request recorded as %+v", conv[0])
	}
	if !conv[0].Offers("mcp_airlock_notes__list_notes") || conv[0].Offers("mcp_airlock_notes__delete_note") {
		t.Errorf("declarations recorded as %v", conv[0].Declarations)
	}
	if conv[1].ModelTurns != 1 || len(conv[1].Responses) != 1 || conv[1].Responses[0].Name != "mcp_airlock_notes__list_notes" || conv[1].Responses[0].Text() != "note-1: Groceries" {
		t.Errorf("second request recorded as %+v", conv[1])
	}
	// Past the script: "done".
	_, out = geminiPost(t, m, "/v1beta/models/x:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"model","parts":[]},{"role":"model","parts":[]},{"role":"user","parts":[{"text":"more"}]}]}`)
	if diff := cmp.Diff([]map[string]any{{"text": "done"}}, sseParts(t, out)); diff != "" {
		t.Errorf("past the script (-want +got):\n%s", diff)
	}
}

// The CLI's utility calls get JSON their schema accepts; countTokens a count; an
// unknown request a 404, recorded.
func TestGeminiModel_UtilityCallsAndUnknownRequests(t *testing.T) {
	m, err := NewGeminiModel(GeminiSteps())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// The CLI's router and next-speaker schemas as 0.61.0 sends them (its router's
	// score must be 1 to 100, which its schema does not say), and a minimum.
	res, out := geminiPost(t, m, "/v1beta/models/gemini-3.5-flash-lite:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"route"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":`+
			`{"type":"OBJECT","properties":{"complexity_reasoning":{"type":"STRING"},"complexity_score":{"type":"INTEGER"},`+
			`"next_speaker":{"type":"string","enum":["user","model"]},"retries":{"type":"integer","minimum":3},"optional":{"type":"string"}},`+
			`"required":["complexity_reasoning","complexity_score","next_speaker","retries"]}}}`)
	if res.StatusCode != 200 {
		t.Fatalf("generateContent: %d %s", res.StatusCode, out)
	}
	var gen struct {
		Candidates []struct {
			Content struct{ Parts []struct{ Text string } }
		}
	}
	if err := json.Unmarshal([]byte(out), &gen); err != nil || len(gen.Candidates) != 1 || len(gen.Candidates[0].Content.Parts) != 1 {
		t.Fatalf("generateContent answered %q (%v)", out, err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(gen.Candidates[0].Content.Parts[0].Text), &got); err != nil {
		t.Fatalf("the reply is not JSON: %v", err)
	}
	if diff := cmp.Diff(map[string]any{"complexity_reasoning": "", "complexity_score": float64(1), "next_speaker": "user", "retries": float64(3)}, got); diff != "" {
		t.Errorf("least value (-want +got):\n%s", diff)
	}

	_, out = geminiPost(t, m, "/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[{"role":"user","parts":[{"text":"summarise"}]}]}`)
	if !strings.Contains(out, `"text":"ok"`) {
		t.Errorf("generateContent without a schema answered %s, want the text ok (the CLI retries an empty one)", out)
	}

	_, out = geminiPost(t, m, "/v1beta/models/gemini-2.5-flash:countTokens", `{"contents":[{"role":"user","parts":[{"text":"count me"}]}]}`)
	var ct struct{ TotalTokens int }
	if json.Unmarshal([]byte(out), &ct) != nil || ct.TotalTokens < 1 {
		t.Errorf("countTokens answered %q", out)
	}

	res, _ = geminiPost(t, m, "/v1beta/cachedContents", `{}`)
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown request got %d, want 404", res.StatusCode)
	}
	var methods []string
	for _, r := range m.Requests() {
		methods = append(methods, r.Method+" "+r.Path)
	}
	want := []string{"generateContent /v1beta/models/gemini-3.5-flash-lite:generateContent", "generateContent /v1beta/models/gemini-2.5-flash:generateContent", "countTokens /v1beta/models/gemini-2.5-flash:countTokens", "unknown /v1beta/cachedContents"}
	if diff := cmp.Diff(want, methods); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
	if len(m.Conversation()) != 0 {
		t.Errorf("utility calls were recorded as the conversation")
	}
}
