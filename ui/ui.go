// Package ui is airlock's terminal interface: one Bubble Tea v2 root [Model] that
// routes. It owns the layout, the focus, the global keys ([GlobalKeyMap]) and the
// one stack of screens that esc walks back, and it carries out the intents its
// screens return; [Run] runs it against a session's Manager.
//
// Every screen is its own package under ui/screens (servers and tools, details,
// the running call and its result, logs, activity, hazards, resources and prompts,
// server info, rules, grants, the approval queue, what-if export, help) behind one
// interface, ui/screen: a KeyMap, SetSize, an Update that returns an intent, and
// View, over ui/common's shared styles and sizes, ui/list's list and ui/pager's
// scrolling body. Every question (approvals, elicitation, sampling, pins, taint,
// quitting) is one overlay, ui/question, with its input guard; its dialogs
// (ui/dialog) and forms (ui/form) are pure, turning keys into actions.
//
// Everything the session reports arrives as typed events pumped by a re-armed Cmd;
// every server-controlled string passes ui/safetext before it is rendered. ui never
// starts goroutines of its own beyond Bubble Tea Cmds, never decides a call (the
// session's approval engine does), and never imports the demo servers; the screens
// under it never import session.
package ui

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/ui/internal/unread"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// Options configures Run.
type Options struct {
	// Title names the session in the title line, e.g. "demo" or the config path.
	Title string
	// Demo, when set, is called by the demo key (R) to trigger the demo's rug pull.
	// The key exists, and is listed in help, only when Demo is set.
	Demo func()
	// Tour opens the guided demo tour: captioned steps the presenter advances
	// with a key, each driving the real UI. It needs the demo servers (web,
	// notes, mail), and Demo for its last step (the rug pull); esc leaves it.
	Tour bool
	// GatewayURL is the agent gateway's endpoint (http://HOST:PORT/mcp) when the
	// gateway runs; the title line and the help show it. "" means no gateway.
	GatewayURL string
	// GatewayHint is the command that prints an agent's config block for the
	// gateway, e.g. "airlock gateway snippet claude", shown in the help.
	GatewayHint string
	// Started tells Run that the caller already called Start on the Manager. Run
	// also notices a Manager that has connected before; Started is for a Manager
	// that was started an instant ago.
	Started bool
	// Notice is a sentence for the status line at start (an airlock before this one
	// did not shut down cleanly); "" shows "started".
	Notice string
	// NoBell keeps the terminal bell quiet when an agent's call or a server's
	// request for input arrives (it rings by default: the question may wait
	// behind the badge while the person types).
	NoBell bool
	// NoNotify turns desktop notifications off (--no-notify). NotifyCommand, when
	// set, is run (no shell) with a waiting question's summary as its last argument
	// in place of the terminal's notification ([notify] command).
	NoNotify      bool
	NotifyCommand []string
	// NoColor turns colour off. Run also honours NO_COLOR.
	NoColor bool
	// SaveDir is the folder images, audio and blobs are saved to (s in a
	// result or a read resource); "" is the working directory at the time of
	// saving (docs/explore.md).
	SaveDir string
	// Input and Output replace the terminal (tests); nil uses stdin and stdout.
	Input  io.Reader
	Output io.Writer
	// ProgramOptions are passed to tea.NewProgram after airlock's own (tests).
	ProgramOptions []tea.ProgramOption

	// now returns the time; nil uses time.Now (tests fix it for golden files).
	now func() time.Time
	// guardNow is the input guard's clock; nil uses time.Now (tests move it by
	// hand).
	guardNow func() time.Time
	// noPump leaves the session event pump out of Init (tests pump by hand).
	noPump bool
}

// Run starts m (unless it was started), shows the TUI on the terminal in the
// alternate screen, pumps the session's events into it and returns when the person
// quits (nil) or ctx ends (ctx's error). Closing m is the caller's job: pending
// approvals are denied when it closes.
func Run(ctx context.Context, m *session.Manager, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !opts.Started && !started(m) {
		m.Start()
	}
	if !opts.NoColor {
		opts.NoColor = theme.NoColorFromEnv()
	}
	model := New(ctx, m, opts)
	if opts.Input == nil {
		// Keys typed while the program was too busy to read them still count
		// as typing for the input guard (docs/approval.md).
		model.q.SetUnread(unread.Input(os.Stdin))
	}
	// Frames are flushed at bubbletea's highest rate: at its default (60) a frame
	// ready just after a flush waited up to 16 ms for the next one, the first
	// screen and every key's answer too. A flush without a change writes nothing.
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithFPS(120)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	popts = append(popts, opts.ProgramOptions...)
	final, err := tea.NewProgram(&model, popts...).Run()
	if fm, ok := final.(*Model); ok && fm.call.Cancel != nil {
		fm.call.Cancel() // a call still running when the person quit
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, tea.ErrProgramKilled) {
			return context.Cause(ctx)
		}
		return err
	}
	return nil
}

// started reports whether a server of m has ever begun connecting: every connection
// attempt raises its server's generation above zero.
func started(m *session.Manager) bool {
	for _, s := range m.Snapshot().Servers {
		if s.Gen > 0 {
			return true
		}
	}
	return false
}
