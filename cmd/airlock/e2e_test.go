//go:build unix

package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

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
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	state := t.TempDir()
	cmd.Env = append(os.Environ(), "AIRLOCK_AS_MAIN=1", "TERM=xterm-256color", "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+state)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		t.Fatal(err)
	}
	s := &screen{t: t, pty: f, emu: vt.NewEmulator(80, 24), cmd: cmd, done: make(chan error, 1), state: state}
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
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(s.text(), want) {
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %q; it shows:\n%s", want, s.text())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitGone waits until the screen no longer shows gone (and still shows stay).
func (s *screen) waitGone(gone, stay string) {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		txt := s.text()
		if !strings.Contains(txt, gone) && strings.Contains(txt, stay) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %q without %q; it shows:\n%s", stay, gone, txt)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *screen) keys(k string) {
	s.t.Helper()
	if _, err := s.pty.Write([]byte(k)); err != nil {
		s.t.Fatal(err)
	}
	time.Sleep(80 * time.Millisecond) // let a lone ESC be read as the escape key
}

const (
	keyDown  = "\x1b[B"
	keyEsc   = "\x1b"
	keyTab   = "\t"
	keyCtrlS = "\x13"
)

// Issue 3's end-to-end run: on `airlock demo`, reach mail's send_email, open a call,
// see "claims read-only" in the dialog, deny, quit cleanly. On the way, fetch the
// injection page and check that its escapes never reached the terminal raw.
func TestTUIEndToEndInPseudoTerminal(t *testing.T) {
	s := startScreen(t, "demo")
	s.waitFor("LETHAL TRIFECTA")
	s.waitFor("mail__send_email")

	// Tools pane, by server: docs__get_doc, docs__search_docs, mail__send_email.
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
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("airlock exited with %v; screen:\n%s", err, s.text())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("airlock did not quit; screen:\n%s", s.text())
	}
}
