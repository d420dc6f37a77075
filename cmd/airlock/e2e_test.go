//go:build unix

package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
)

// screen runs the real airlock binary (this test binary, as main) in a pseudo-terminal
// of 80x24 and keeps a virtual terminal of what it drew, plus every raw byte it wrote.
type screen struct {
	t    *testing.T
	pty  *os.File
	emu  *vt.Emulator // guarded by mu, but for Read (its answers pipe)
	cmd  *exec.Cmd
	mu   sync.Mutex
	raw  bytes.Buffer
	done chan error
	// state is the run's XDG_STATE_HOME (airlock's state is under state/airlock).
	state string
}

func startScreen(t *testing.T, args ...string) *screen {
	t.Helper()
	return startScreenIn(t, t.TempDir(), args...)
}

// startScreenIn is startScreen with XDG_STATE_HOME (and XDG_CONFIG_HOME) at state.
func startScreenIn(t *testing.T, state string, args ...string) *screen {
	t.Helper()
	return startScreenSized(t, state, 80, 24, args...)
}

// startScreenSized is startScreenIn in a terminal of cols x rows.
func startScreenSized(t *testing.T, state string, cols, rows int, args ...string) *screen {
	t.Helper()
	return startScreenAt(t, "", state, cols, rows, args...)
}

// startScreenAt is startScreenSized run in the folder dir ("": the test's), so
// that a config named relative to it is shown as given.
func startScreenAt(t *testing.T, dir, state string, cols, rows int, args ...string) *screen {
	t.Helper()
	cmd := asAirlock(t, nil, []string{"TERM=xterm-256color", "XDG_STATE_HOME=" + state, "XDG_CONFIG_HOME=" + state}, args...)
	cmd.Dir = dir
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)})
	if err != nil {
		t.Fatal(err)
	}
	s := &screen{t: t, pty: f, emu: vt.NewEmulator(cols, rows), cmd: cmd, done: make(chan error, 1), state: state}
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				s.mu.Lock()
				s.raw.Write(buf[:n])
				_, _ = s.emu.Write(buf[:n])
				s.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { // the terminal's answers to the program's queries
		_, _ = io.Copy(f, s.emu)
	}()
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		f.Close()
		// The emulator is not closed: vt v0.1.0's Close races with a pending Read of
		// its answers, and the test process ends soon anyway.
	})
	return s
}

func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.String()
}

// waitFor waits until the screen shows want.
func (s *screen) waitFor(want string) {
	s.t.Helper()
	deadline := time.Now().Add(screenGuard)
	for !strings.Contains(s.text(), want) {
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %q; it shows:\n%s", want, s.text())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// screenGuard is how long waitFor and waitGone wait before they call the screen
// stuck: only a "did not hang" guard. An agent CLI behind a question starts Node
// and talks to its model first; on a loaded 2-core machine that took over 20 s.
const screenGuard = 60 * time.Second

// waitGone waits until the screen no longer shows gone (and still shows stay).
func (s *screen) waitGone(gone, stay string) {
	s.t.Helper()
	deadline := time.Now().Add(screenGuard)
	held := false
	for {
		txt := s.text()
		if !strings.Contains(txt, gone) && strings.Contains(txt, stay) {
			// Twice, 200 ms apart: a frame read half-way can show the top of a
			// dialog (stay) before the line below it that still says gone
			// ("arming…"); a key sent then is rightly ignored by the guard.
			if held {
				return
			}
			held = true
			time.Sleep(200 * time.Millisecond)
			continue
		}
		held = false
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %q without %q; it shows:\n%s", stay, gone, txt)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// allowDestructive allows the question on screen as a person does: it arms, →
// moves to the allow button, enter presses it, ctrl+y confirms.
func (s *screen) allowDestructive() {
	s.t.Helper()
	s.waitFor("allow this call?")
	s.waitGone("arming", "allow this call?")
	s.keys(keyRight)
	s.keys("\r")
	s.waitFor("ctrl+y")
	s.keys(keyCtrlY)
}

// denyWithReason denies the question on screen with a typed reason: d, the
// reason, enter.
func (s *screen) denyWithReason(reason string) {
	s.t.Helper()
	s.waitFor("allow this call?")
	s.waitGone("arming", "allow this call?")
	s.keys("d")
	s.keys(reason)
	s.keys("\r")
}

// waitExit waits for the process on the screen (name, in failures) to end, with
// no error, within the given time.
func (s *screen) waitExit(name string, within time.Duration) {
	s.t.Helper()
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Fatalf("%s exited with %v; screen:\n%s", name, err, s.text())
		}
	case <-time.After(within):
		s.t.Fatalf("%s did not end within %v; screen:\n%s", name, within, s.text())
	}
}

func (s *screen) keys(k string) {
	s.t.Helper()
	if _, err := s.pty.Write([]byte(k)); err != nil {
		s.t.Fatal(err)
	}
	time.Sleep(80 * time.Millisecond)
}

const (
	keyDown = "\x1b[B"
	// keyRight moves focus onto a question's next button (tab does not).
	keyRight = "\x1b[C"
	// keyCtrlY is the chord that allows, after enter on an allow button.
	keyCtrlY = "\x19"
	// keyEsc is the escape key as CSI u (fixterms, the kitty keyboard protocol)
	// writes it: a lone ESC is the escape key only when nothing follows within the
	// program's escape timeout of its reading it, and on a busy machine the
	// program reads it late, together with the next key (esc then q read as
	// alt+q). The lone ESC's timing is the terminal library's; these tests are
	// about what airlock does with the key.
	keyEsc   = "\x1b[27u"
	keyTab   = "\t"
	keyCtrlS = "\x13"
)

// The end-to-end run: on `airlock demo`, reach mail's send_email, open a call,
// see "claims read-only" in the dialog, deny, quit cleanly. On the way, fetch the
// injection page and check that its escapes never reached the terminal raw.
func TestTUIEndToEndInPseudoTerminal(t *testing.T) {
	s := startScreen(t, "demo")
	s.waitFor("LETHAL TRIFECTA")
	s.waitFor("mail__send_email")

	// Tools pane, by server: docs__get_doc, docs__search_docs, mail__send_email. A
	// cursor nobody moved stays on the first row as servers become ready
	// (ui.TestToolsPane_UntouchedCursorStaysOnTheFirstRow), whichever is ready first.
	s.waitFor("4/4 servers ready")
	s.keys(keyDown)
	s.keys(keyDown)
	s.keys("c")
	s.waitFor("call mail")
	s.keys("boss@example.com")
	s.keys(keyTab)
	s.keys("hello")
	s.keys(keyTab)
	s.keys("see attached")
	s.keys(keyCtrlS)
	s.waitFor("allow this call?")
	s.waitFor("claims read-only")
	s.waitGone("arming", "allow this call?") // the input guard: keys count once it is armed
	s.keys(keyEsc)                           // deny
	s.waitFor("DENIED")
	s.keys(keyEsc)

	// web__fetch_url is the last tool; fetch the page that carries terminal escapes.
	for range 6 {
		s.keys(keyDown)
	}
	s.keys("c")
	s.waitFor("call web")
	s.keys("https://blog.example.com/mcp-tips")
	s.keys(keyCtrlS)
	s.waitFor("TAINTED")
	for range 10 {
		s.keys("j")
	}
	s.waitFor("⟨ESC⟩]0;pwned⟨BEL⟩")
	s.mu.Lock()
	raw := s.raw.String()
	s.mu.Unlock()
	for _, bad := range []string{"\x1b]0;pwned", "\x1b[8m<IMPORTANT>", "\x1b[2K\r✓ airlock"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the page's %q reached the terminal raw", bad)
		}
	}
	s.keys(keyEsc)

	s.keys("q")
	s.waitExit("airlock", 15*time.Second)
}

// `airlock demo` keeps its gateway token and audit log in the demo folder of the state
// dir and never touches a person's own; `gateway snippet --demo`, `bridge --demo` and
// `audit verify --demo` (or no config at all) find the demo's files.
func TestDemo_KeepsItsStateInADemoFolder(t *testing.T) {
	state := t.TempDir()
	real := filepath.Join(state, "airlock")
	realToken := strings.Repeat("a1", 32) + "\n"
	if err := os.MkdirAll(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "gateway.token"), []byte(realToken), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := audit.Open(filepath.Join(real, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append(audit.Record{Kind: "decision", CallID: "mine", Args: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	realLog, _ := os.ReadFile(filepath.Join(real, "audit.jsonl"))
	realHead, _ := os.ReadFile(filepath.Join(real, "audit.jsonl.head"))

	s := startScreenIn(t, state, "demo", "--gateway", "127.0.0.1:0")
	s.waitFor("LETHAL TRIFECTA")
	s.keys("q")
	s.waitExit("airlock", 15*time.Second)

	if b, _ := os.ReadFile(filepath.Join(real, "gateway.token")); string(b) != realToken {
		t.Errorf("the demo changed the person's gateway token: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(real, "audit.jsonl")); !bytes.Equal(b, realLog) {
		t.Errorf("the demo wrote to the person's audit log:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(real, "audit.jsonl.head")); !bytes.Equal(b, realHead) {
		t.Errorf("the demo changed the person's audit head: %s", b)
	}
	demoToken, err := os.ReadFile(filepath.Join(real, "demo", "gateway.token"))
	if err != nil {
		t.Fatalf("the demo's token is not in the demo folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(real, "demo", "audit.jsonl")); err != nil {
		t.Errorf("the demo's audit log is not in the demo folder: %v", err)
	}

	tok := strings.TrimSpace(string(demoToken))
	for _, args := range [][]string{{"gateway", "snippet", "claude", "--demo"}, {"gateway", "snippet", "claude"}} {
		r := airlockIn(t, state, "", args...)
		if r.code != 0 || !strings.Contains(r.stdout, tok) || strings.Contains(r.stdout, strings.TrimSpace(realToken)) {
			t.Errorf("%v: exit %d, want the demo's token:\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	r := airlockIn(t, state, "", "audit", "verify", "--demo")
	if r.code != 0 || !strings.Contains(r.stdout, filepath.Join(real, "demo", "audit.jsonl")+": 0 records, chain intact") {
		t.Errorf("audit verify --demo: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}
