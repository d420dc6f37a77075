package ui

// Desktop notifications: when a question arrives while the terminal is not focused
// (focus reporting: tea.BlurMsg, tea.FocusMsg), or the terminal loses focus while
// one waits, the person is told outside the terminal: by the terminal's own notification (OSC 9, OSC 777), or by the
// configured command run with the summary as its last argument (no shell). The
// summary is airlock's sentence around server text (a server's, a tool's, an
// agent's name), made safe for an escape sequence and an argument: escaped, no
// control bytes, bounded length.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/question"
	"github.com/airlock-mcp/airlock/ui/screens/logs"
)

// notifyEvery is the shortest time between two notifications: a burst of questions
// notifies once (as it rings the bell once).
const notifyEvery = 2 * time.Second

// maxNotifyBytes bounds a notification's text.
const maxNotifyBytes = 200

// notifyTimeout is how long the notify command may run before it is stopped.
const notifyTimeout = 10 * time.Second

// oscKind says which terminal notifications are written.
type oscKind uint8

const (
	osc9   oscKind = 1 << iota // ESC ] 9 ; TEXT BEL: iTerm2, kitty, WezTerm, Ghostty, Windows Terminal
	osc777                     // ESC ] 777 ; notify ; TITLE ; TEXT BEL: foot, urxvt, WezTerm, Ghostty
)

// oscFor picks the sequences for the terminal the environment names: one where
// the terminal is known to show it (a terminal that shows both would show the
// notification twice), both otherwise.
func oscFor(getenv func(string) string) oscKind {
	term, prog := getenv("TERM"), getenv("TERM_PROGRAM")
	switch {
	case prog == "iTerm.app" || prog == "WezTerm" || prog == "ghostty" || term == "xterm-kitty" || term == "xterm-ghostty":
		return osc9
	case strings.HasPrefix(term, "foot") || strings.HasPrefix(term, "rxvt"):
		return osc777
	}
	return osc9 | osc777
}

// notifier is the root's state of desktop notifications.
type notifier struct {
	off     bool
	command []string
	osc     oscKind
	// blurred says the terminal reported that it lost focus (and not yet that it
	// regained it). A terminal that never reports focus is taken as focused.
	blurred bool
	last    time.Time
	// failed says the command's failure was said once (in the log and the status
	// line); later failures are not repeated.
	failed bool
}

// newNotifier is the notifier opts ask for, writing the sequences of the terminal
// the environment names.
func newNotifier(opts Options) notifier {
	return notifier{off: opts.NoNotify, command: opts.NotifyCommand, osc: oscFor(os.Getenv)}
}

// notifiedMsg is the notify command's outcome (err nil: it ran and exited 0).
type notifiedMsg struct{ err error }

// notifyText is s as a notification says it: escaped (⟨ESC⟩, ⟨LF⟩), every control
// character left a space, at most maxNotifyBytes.
func notifyText(s string) string {
	s = common.PlainInline(s)
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError || unicode.Is(unicode.Cf, r) {
			r = ' '
		}
		if b.Len()+utf8.RuneLen(r) > maxNotifyBytes-len(common.Ellipsis) {
			b.WriteString(common.Ellipsis)
			break
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// notify tells the person outside the terminal that a question waits, when the
// terminal is not focused and notifications are on. It is called once when the
// question arrives, never from a redraw.
func (m *Model) notify(summary string) tea.Cmd {
	n := &m.notifier
	if n.off || !n.blurred {
		return nil
	}
	now := m.now()
	if !n.last.IsZero() && now.Sub(n.last) < notifyEvery && !now.Before(n.last) {
		return nil
	}
	n.last = now
	text := notifyText(summary)
	if len(n.command) > 0 {
		return runNotify(n.command, text)
	}
	// The text starts with airlock's own word, never with a digit: OSC 9 followed
	// by a number and ';' is ConEmu's and Windows Terminal's command (9;4 is
	// progress). OSC 777 splits its fields at ';', so the text keeps none.
	var seq string
	if n.osc&osc9 != 0 {
		seq += "\x1b]9;" + text + "\a"
	}
	if n.osc&osc777 != 0 {
		seq += "\x1b]777;notify;airlock;" + strings.ReplaceAll(text, ";", ",") + "\a"
	}
	return tea.Raw(seq)
}

// runNotify runs the notify command (no shell) with text as its last argument,
// its standard streams away from the terminal, stopped after notifyTimeout.
func runNotify(command []string, text string) tea.Cmd {
	name := command[0]
	args := append(append([]string(nil), command[1:]...), text)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.WaitDelay = time.Second
		var stderr boundedBuffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		switch {
		case err == nil:
			return notifiedMsg{}
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			err = fmt.Errorf("still running after %v: stopped", notifyTimeout)
		case stderr.Len() > 0:
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
		}
		return notifiedMsg{fmt.Errorf("%s: %w", name, err)}
	}
}

// notified says the notify command's first failure in the log and the status line.
func (m *Model) notified(msg notifiedMsg) {
	if msg.err == nil || m.notifier.failed {
		return
	}
	m.notifier.failed = true
	m.ring.Add(logs.Entry{Server: "airlock", Source: "notify", Text: "the [notify] command failed: " + msg.err.Error() + " (later failures are not shown)"})
	m.status = "✗ the [notify] command failed (logs: l)"
}

// boundedBuffer keeps the first 512 bytes written to it.
type boundedBuffer struct{ strings.Builder }

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := 512 - b.Len(); room > 0 {
		b.Builder.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// stillWaiting notifies, as the terminal loses focus, of the questions that wait
// (a call's, a server's request for input or for sampling): one that arrived while
// the person looked still needs an answer once they have gone to another window.
// Nothing when none waits.
func (m *Model) stillWaiting() tea.Cmd {
	pending := m.sess.Engine().Pending()
	calls := max(len(pending), m.q.Count(question.KindApproval))
	n := calls + m.q.Count(question.KindElicitation) + m.q.Count(question.KindSampling)
	switch {
	case n == 0:
		return nil
	case n == 1 && len(pending) == 1:
		return m.notify(approvalSummary(pending[0]) + "; it still waits for your answer")
	case n == 1:
		return m.notify("airlock: a request from a server still waits for your answer")
	}
	return m.notify("airlock: " + strconv.Itoa(n) + " questions wait for your answer")
}

// approvalSummary is a waiting call's one line: who asks, and which tool.
func approvalSummary(p *model.Pending) string {
	tool := p.Tool.Ref.Qualified()
	c := p.Request.Client
	if c == "" {
		return "airlock: your call of " + tool + " waits for your answer"
	}
	if ctx := p.Request.Context; ctx != "" {
		c += " (" + ctx + ")"
	}
	return "airlock: agent " + c + " asks to run " + tool
}
