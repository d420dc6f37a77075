//go:build unix

package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds the gateway token to every request of the agent's client.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// freeAddr picks a free port on 127.0.0.1.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// connectAgent connects a go-sdk client to the demo's gateway with the token from
// the run's state directory, as an AI agent would.
func connectAgent(t *testing.T, s *screen, addr string) *mcp.ClientSession {
	t.Helper()
	// `airlock demo` keeps its token in the demo folder of the state dir; a
	// config's run in the state dir itself.
	path := filepath.Join(s.state, "airlock", "demo", "gateway.token")
	other := filepath.Join(s.state, "airlock", "gateway.token")
	var token string
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err != nil {
			b, _ = os.ReadFile(other)
		}
		if len(strings.TrimSpace(string(b))) >= 32 {
			token = strings.TrimSpace(string(b))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no gateway token at %s: %v", path, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "1"}, nil)
	var cs *mcp.ClientSession
	var err error
	for time.Now().Before(deadline) {
		cs, err = client.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: "http://" + addr + "/mcp", HTTPClient: &http.Client{Transport: bearer(token)},
		}, nil)
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("connecting to the gateway: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type callResult struct {
	res *mcp.CallToolResult
	err error
}

// agentCall sends one call from the agent; its outcome arrives on the channel.
func agentCall(cs *mcp.ClientSession, tool string, args map[string]any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		ch <- callResult{res, err}
	}()
	return ch
}

// wantDenied waits up to 10 s for the answer to the agent's call on done and fails
// the test unless the call was denied: with allowed when it was answered
// otherwise, with unanswered (and the screen) when no answer came.
func (s *screen) wantDenied(done <-chan callResult, allowed, unanswered string) {
	s.t.Helper()
	select {
	case r := <-done:
		if r.err == nil && (r.res == nil || !r.res.IsError) {
			s.t.Fatalf("%s: %+v", allowed, r.res)
		}
	case <-time.After(10 * time.Second):
		s.t.Fatalf("%s:\n%s", unanswered, s.text())
	}
}

func notesText(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "notes__list_notes"})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

// burst types s one key at a time, 25 ms apart: a person typing fast, as the
// call arrives.
func (s *screen) burst(keys ...string) {
	for _, k := range keys {
		if _, err := s.pty.Write([]byte(k)); err != nil {
			s.t.Fatal(err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// callForm is on screen while a call form is open (its help line).
const callForm = "ctrl+s submit"

func runes(s string) []string {
	var out []string
	for _, r := range s {
		out = append(out, string(r))
	}
	return out
}

// TestE2E_KeysTypedAsAgentCallArrivesNeverApprove (the input guard, on the real
// binary): an agent's destructive call arrives through the gateway while the
// person types; the keys written in the same burst never approve it, neither on
// the main screen nor in a call form. The upstream notes server is the judge:
// note-2 must survive until the person deliberately allows its deletion.
func TestE2E_KeysTypedAsAgentCallArrivesNeverApprove(t *testing.T) {
	addr := freeAddr(t)
	s := startScreen(t, "demo", "--gateway", addr)
	s.waitFor("mail__send_email")
	cs := connectAgent(t, s, addr)
	if !strings.Contains(notesText(t, cs), "note-2") {
		t.Fatal("the demo's notes lack note-2")
	}

	// 1. On the main screen: "ask my employer", tab, enter, ctrl+y and y o c in
	// the same burst as the call arrives.
	done := agentCall(cs, "notes__delete_note", map[string]any{"id": "note-2"})
	s.burst(append(runes("ask my employer"), "\t", "\r", "\x19", "o", "y", "c", "\t", "\r", "\x19")...)
	select {
	case r := <-done:
		t.Fatalf("the call was answered by keys typed as it arrived: %+v %v\n%s", r.res, r.err, s.text())
	case <-time.After(1500 * time.Millisecond):
	}
	if !strings.Contains(notesText(t, cs), "note-2") {
		t.Fatal("note-2 was deleted by stray keys")
	}
	// The person now reads the dialog; once armed, esc denies.
	if strings.Contains(s.text(), "call docs") || strings.Contains(s.text(), "call notes") {
		s.keys(keyEsc) // a form the typing opened
	}
	s.waitGone("arming", "allow this call?")
	s.keys(keyEsc)
	s.wantDenied(done, "esc on the armed dialog did not deny", "the denial never reached the agent")

	// 2. Typing into a call form: the question waits behind the badge. The burst
	// above also drove the main screen's own keys (l opens the logs): back out.
	for i := 0; i < 6 && !strings.Contains(s.text(), "Tools · "); i++ {
		s.keys(keyEsc)
		time.Sleep(200 * time.Millisecond)
	}
	s.waitGone("allow this call?", "Tools · ")
	s.keys("c")
	s.waitFor(callForm) // not "call ": the status line's "last call" has it too
	done = agentCall(cs, "notes__delete_note", map[string]any{"id": "note-2"})
	s.burst(append(runes("ask my empl"), append(runes("oyer"), "\t", "\x19", "y")...)...)
	s.waitFor("press a")
	select {
	case r := <-done:
		t.Fatalf("the call was answered by typing into a form: %+v %v", r.res, r.err)
	case <-time.After(1500 * time.Millisecond):
	}
	if !strings.Contains(s.text(), callForm) {
		t.Fatalf("the question took focus from the form:\n%s", s.text())
	}
	if !strings.Contains(notesText(t, cs), "note-2") {
		t.Fatal("note-2 was deleted by typing into a form")
	}

	// 3. The person leaves the form and opens the question with a; it arms, and
	// tab, enter denies it. Asked again, a deliberate →, enter, ctrl+y allows.
	// esc and a written back to back can reach the terminal as one read, which
	// reads as alt+a: the main screen is back before a is pressed.
	s.keys(keyEsc)
	s.waitFor("Tools · ")
	s.keys("a")
	s.waitFor("allow this call?")
	s.waitGone("arming", "allow this call?")
	// tab, enter (the main screen's "next pane", "open") after it armed: tab
	// moves no focus, so enter presses Deny.
	s.keys(keyTab)
	s.keys("\r")
	s.waitGone("allow this call?", "Tools · ")
	s.wantDenied(done, "tab, enter on the armed dialog allowed the call", "tab, enter neither allowed nor denied")
	if !strings.Contains(notesText(t, cs), "note-2") {
		t.Fatal("tab, enter on the armed dialog deleted note-2")
	}
	// The agent asks again; the keyboard is quiet, so it opens and arms.
	done = agentCall(cs, "notes__delete_note", map[string]any{"id": "note-2"})
	s.allowDestructive()
	select {
	case r := <-done:
		if r.err != nil || r.res.IsError {
			t.Fatalf("the deliberately allowed call failed: %+v %v", r.res, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the allowed call never returned:\n%s", s.text())
	}
	if strings.Contains(notesText(t, cs), "note-2") {
		t.Fatal("note-2 survived a deliberate allow")
	}

	// 4. Two calls queued: o o, tab, enter, ctrl+y in one burst allow neither, and
	// answering the first never answers the second.
	first := agentCall(cs, "notes__delete_note", map[string]any{"id": "note-1"})
	time.Sleep(100 * time.Millisecond)
	second := agentCall(cs, "notes__delete_note", map[string]any{"id": "note-3"})
	s.burst("o", "o", "\t", "\r", "\x19", "\t", "\r", "\x19")
	for i, ch := range []<-chan callResult{first, second} {
		select {
		case r := <-ch:
			t.Fatalf("queued call %d was answered by the burst: %+v %v\n%s", i+1, r.res, r.err, s.text())
		case <-time.After(750 * time.Millisecond):
		}
	}
	s.waitGone("arming", "allow this call?")
	s.keys(keyEsc)                // deny the front one, deliberately
	var waiting <-chan callResult // the one not answered yet
	select {
	case <-first:
		waiting = second
	case <-second:
		waiting = first
	case <-time.After(10 * time.Second):
		t.Fatalf("the denial never reached the agent:\n%s", s.text())
	}
	s.keys(keyEsc) // the same key stream again: the next question is not armed yet
	select {
	case r := <-waiting:
		t.Fatalf("the second esc answered the next question: %+v %v", r.res, r.err)
	case <-time.After(300 * time.Millisecond):
	}
	s.waitFor("allow this call?")
	s.waitGone("arming", "allow this call?")
	s.keys(keyEsc)
	select {
	case <-waiting:
	case <-time.After(10 * time.Second):
		t.Fatalf("the second denial never reached the agent:\n%s", s.text())
	}
	if txt := notesText(t, cs); !strings.Contains(txt, "note-1") || !strings.Contains(txt, "note-3") {
		t.Fatalf("a queued call ran: %s", txt)
	}
}
