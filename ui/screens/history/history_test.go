package history

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/internal/keytest"
	"github.com/airlock-mcp/airlock/ui/screen"
	"github.com/airlock-mcp/airlock/ui/screens/content"
	"github.com/airlock-mcp/airlock/ui/theme"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// sample is a short session with server-everything: the handshake, a call and its
// answer, a progress and a log notification (whose method a hostile server chose to
// hold an escape), list_changed and an error.
func sample() model.History {
	at := time.Date(2026, 12, 3, 14, 20, 0, 0, time.UTC)
	var h model.History
	h.Server = "everything"
	h.Dropped = 3
	add := func(out bool, kind, method, id, raw string) {
		at = at.Add(1234 * time.Millisecond)
		h.Messages = append(h.Messages, model.HistoryMessage{Seq: uint64(len(h.Messages) + 4), At: at, Out: out, Kind: kind,
			Method: method, ID: id, Size: len(raw), Raw: []byte(raw)})
		h.Bytes += len(raw)
	}
	add(true, "request", "initialize", "1", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	add(false, "response", "initialize", "1", `{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"everything"}}}`)
	add(true, "notification", "notifications/initialized", "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	add(true, "request", "tools/call", "2", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"longRunningOperation","arguments":{"duration":2,"steps":2}}}`)
	add(false, "notification", "notifications/progress", "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"total":2}}`)
	add(false, "notification", "notifications/message", "", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"step \u001b[2J done"}}`)
	add(false, "notification", "notifications/\x1b[2Jevil", "", `{"jsonrpc":"2.0","method":"notifications/\u001b[2Jevil"}`)
	add(false, "response", "tools/call", "2", `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Long running operation completed."}]}}`)
	add(false, "notification", "notifications/tools/list_changed", "", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	add(true, "request", "resources/read", "3", `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://static/resource/999"}}`)
	add(false, "error", "resources/read", "3", `{"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"Resource not found"}}`)
	return h
}

func newModel(w, h int) *Model {
	st := theme.New(true, true)
	m := New(&common.Common{St: &st})
	m.SetSize(w, h)
	m.Open(sample())
	return &m
}

// The list at 80x24 and 60x20, and one message's bytes: goldens, every line fitting,
// and no server escape reaching the terminal.
func TestHistory_Goldens(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {60, 20}} {
		w, h := size[0], size[1]
		m := newModel(w, h)
		v := m.View()
		keytest.Fits(t, v, w, h, "history")
		if strings.Contains(v, "\x1b[2J") {
			t.Error("a server's escape reached the screen raw")
		}
		name := filepath.Join("testdata", "history-"+itoa(w)+"x"+itoa(h)+".golden")
		keytest.Golden(t, name, ansi.Strip(v)+"\n", *update)

		// The call's request, its bytes indented.
		for range 7 {
			m.Update(keytest.Press("up"))
		}
		if in, _ := m.Update(keytest.Press("enter")); in != nil || m.Raw == nil || m.Raw.Method != "tools/call" || !m.Raw.Out {
			t.Fatalf("enter on the call: intent %v, raw %+v", in, m.Raw)
		}
		v = m.View()
		keytest.Fits(t, v, w, h, "history message")
		keytest.Golden(t, filepath.Join("testdata", "history-raw-"+itoa(w)+"x"+itoa(h)+".golden"), ansi.Strip(v)+"\n", *update)
		if in, _ := m.Update(keytest.Press("esc")); in != nil || m.Raw != nil {
			t.Fatalf("esc from the message: intent %v, back to the list %v", in, m.Raw == nil)
		}
	}
}

func itoa(n int) string { return fmtInt(n) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// d filters by direction, m by method (in name order, then all again); s asks the
// root to save the message under the cursor as JSON named by airlock; esc goes back.
func TestHistory_FiltersSaveBack(t *testing.T) {
	m := newModel(80, 24)
	m.Update(keytest.Press("d"))
	if m.Dir != Sent || len(m.shown) != 4 {
		t.Fatalf("d: %v with %d shown, want sent with 4", m.Dir, len(m.shown))
	}
	m.Update(keytest.Press("d"))
	if m.Dir != Received || len(m.shown) != 7 {
		t.Fatalf("d d: %v with %d shown, want received with 7", m.Dir, len(m.shown))
	}
	m.Update(keytest.Press("d"))
	m.Update(keytest.Press("m"))
	if m.Method != "initialize" || len(m.shown) != 2 {
		t.Fatalf("m: method %q with %d shown", m.Method, len(m.shown))
	}
	for m.Method != "tools/call" {
		m.Update(keytest.Press("m"))
	}
	if len(m.shown) != 2 || !strings.Contains(keytest.Flat(m.View()), "both ways · tools/call · 2 of 11 kept") {
		t.Fatalf("tools/call: %d shown; %s", len(m.shown), keytest.Flat(m.View()))
	}
	in, _ := m.Update(keytest.Press("s"))
	sv, ok := in.(content.Save)
	if !ok || len(sv.Blobs) != 1 || sv.Blobs[0].MIME != "application/json" || !strings.Contains(string(sv.Blobs[0].Data), "Long running operation completed.") {
		t.Fatalf("s: intent %#v", in)
	}
	if got := content.SaveName(sv.Server, sv.What, "application/json", time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC), sv.Blobs[0].N); got != "airlock-everything-tools-call-20261203-140000-11.json" {
		t.Errorf("the file's name: %s", got)
	}
	for range 20 {
		m.Update(keytest.Press("m"))
		if m.Method == "" {
			break
		}
	}
	if m.Method != "" || len(m.shown) != 11 {
		t.Errorf("m past the last method: %q with %d shown, want every method", m.Method, len(m.shown))
	}
	if in, _ := m.Update(keytest.Press("esc")); in != (screen.Back{}) {
		t.Errorf("esc: intent %#v, want screen.Back", in)
	}
}

// A newer history keeps the cursor on its message, or follows the newest.
func TestHistory_RefreshFollows(t *testing.T) {
	m := newModel(80, 24)
	h := sample()
	h.Messages = append(h.Messages, model.HistoryMessage{Seq: 99, At: time.Now(), Kind: "notification", Method: "notifications/resources/updated", Raw: []byte(`{}`), Size: 2})
	m.Refresh(h)
	if e, _ := m.cursorMsg(); e.Seq != 99 {
		t.Errorf("at the newest, a refresh follows: cursor on %d", e.Seq)
	}
	m.Update(keytest.Press("up"))
	m.Refresh(sample())
	if e, _ := m.cursorMsg(); e.Seq != 14 {
		t.Errorf("a refresh keeps the cursor's message: on %d, want 14", e.Seq)
	}
}

// An agent session's history says whose it is, its number first so a cut never
// makes two sessions alike, and that it ended; tab asks for the next source.
func TestHistory_AgentSession(t *testing.T) {
	h := sample()
	h.Server, h.Agent, h.Ended = "session 12 · claude-code-with-a-long-client-name · token:ci-bot", "sid-1", true
	st := theme.New(true, true)
	m := New(&common.Common{St: &st})
	m.SetSize(60, 20)
	m.Open(h)
	v := m.View()
	keytest.Fits(t, v, 60, 20, "agent history")
	keytest.Golden(t, filepath.Join("testdata", "history-agent-60x20.golden"), ansi.Strip(v)+"\n", *update)
	if !strings.Contains(keytest.Flat(v), "History · ended agent session 12 · ") {
		t.Errorf("the heading does not name the session first:\n%s", ansi.Strip(v))
	}
	if in, _ := m.Update(keytest.Press("tab")); in != (NextSource{Server: h.Server, Agent: "sid-1"}) {
		t.Errorf("tab: intent %#v", in)
	}
	if in, _ := m.Update(keytest.Press("s")); in.(content.Save).Server != "agent" {
		t.Errorf("s: the file is not named for an agent: %#v", in)
	}
}

// A method too long for its column at 60 columns is cut in the middle, so that its
// end (what tells list_changed from another) and the id stay on screen.
func TestHistory_LongMethodKeepsItsEnd(t *testing.T) {
	m := newModel(60, 20)
	v := ansi.Strip(m.View())
	if !strings.Contains(v, "s/list_changed 61 bytes") {
		t.Errorf("the list_changed row lost its end:\n%s", v)
	}
}
