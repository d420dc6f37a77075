package ui

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/session/pins"
	"github.com/airlock-mcp/airlock/ui/internal/keytest"
	"github.com/airlock-mcp/airlock/ui/question"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// fixedNow is the clock of every test, so pins and golden files do not move.
var fixedNow = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

// harness drives the root model the way Bubble Tea would, without a terminal:
// send calls Update and starts every returned Cmd in a goroutine; their messages
// and the session's events come back on msgs and are fed to Update by waitFor.
type harness struct {
	t    testing.TB
	m    Model
	sess *session.Manager
	set  *demo.Set
	msgs chan tea.Msg
	// guard is how far the input guard's clock has moved past fixedNow.
	guard atomic.Int64
}

// newDemo starts the four demo servers in-process (as `airlock demo` does, with a
// fixed clock) and waits until every one has connected.
func newDemo(t testing.TB) (*session.Manager, *demo.Set) {
	t.Helper()
	set := demo.NewSet()
	inproc := map[string]*mcp.Server{}
	for _, n := range demo.Names() {
		inproc[n] = set.Server(n)
	}
	return startManager(t, demo.Config(), inproc), set
}

// startManager starts a Manager over in-process servers and waits for every first
// connection attempt; it is closed when the test ends.
func startManager(t testing.TB, cfg *config.Config, inproc map[string]*mcp.Server) *session.Manager {
	t.Helper()
	pins, err := pins.Open("")
	if err != nil {
		t.Fatal(err)
	}
	return startWithOptions(t, cfg, session.Options{InProcess: inproc, Pins: pins, Now: func() time.Time { return fixedNow }})
}

// startWithOptions starts a Manager with opts and waits (30 s at most) for every
// first connection attempt; it is closed when the test ends.
func startWithOptions(t testing.TB, cfg *config.Config, opts session.Options) *session.Manager {
	t.Helper()
	m := session.New(cfg, opts)
	t.Cleanup(func() { m.Close() })
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return m
}

// newHarness builds the root model over the demo at a window size. pump says whether
// the session's events are fed in (golden tests leave them out: the order in which
// servers report is not deterministic).
func newHarness(t testing.TB, w, h int, pump bool) *harness {
	t.Helper()
	sess, set := newDemo(t)
	hr := newHarnessFor(t, sess, w, h, pump, Options{Title: "demo", Demo: set.Notes().RugPull})
	hr.set = set
	return hr
}

// newHarnessFor builds the root model over any Manager, without colour and with the
// fixed clock.
func newHarnessFor(t testing.TB, sess *session.Manager, w, h int, pump bool, opts Options) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opts.NoColor = true
	opts.now = func() time.Time { return fixedNow }
	opts.noPump = true
	hr := &harness{t: t, sess: sess, msgs: make(chan tea.Msg, 256)}
	opts.guardNow = func() time.Time { return fixedNow.Add(time.Duration(hr.guard.Load())) }
	hr.m = New(ctx, sess, opts)
	if pump {
		go func() {
			for {
				e, ok := sess.Next(ctx)
				if !ok {
					return
				}
				select {
				case hr.msgs <- eventMsg{event: e}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	hr.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hr
}

// advance moves the input guard's clock: the person waits d.
func (h *harness) advance(d time.Duration) { h.guard.Add(int64(d)) }

// armQuestion lets the keyboard rest for the guard and delivers the guard's
// timer, so the question at the front opens (if it may) and arms. It fails unless
// a question is then open and armed.
func (h *harness) armQuestion() {
	h.t.Helper()
	for range 2 { // once to open a waiting question, once to arm it
		h.advance(question.MinQuiet)
		h.send(h.m.q.PendingTick())
	}
	if !h.m.q.Armed() {
		h.t.Fatalf("the question did not arm:\n%s", h.plain())
	}
}

// send calls Update with msg and starts the returned Cmd.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	nm, cmd := h.m.Update(msg)
	h.m = *nm.(*Model)
	h.run(cmd)
}

// keys sends key presses by name: "down", "enter", "esc", "tab", or one character.
func (h *harness) keys(names ...string) {
	h.t.Helper()
	for _, n := range names {
		h.send(keyPress(n))
	}
}

func keyPress(n string) tea.KeyPressMsg { return keytest.Press(n) }

// run starts a Cmd (and each Cmd of a batch) in a goroutine, as Bubble Tea does.
// Spinner ticks are dropped, so a test never waits on an animation.
func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		switch msg := msg.(type) {
		case nil:
			return
		case tea.BatchMsg:
			for _, c := range msg {
				h.run(c)
			}
			return
		case spinner.TickMsg:
			return
		}
		h.msgs <- msg
	}()
}

// waitFor feeds messages to Update until cond holds, failing after a while.
func (h *harness) waitFor(what string, cond func(Model) bool) {
	h.t.Helper()
	deadline := time.After(20 * time.Second)
	for !cond(h.m) {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; screen:\n%s", what, h.plain())
		}
	}
}

// plain is the rendered screen with styling stripped.
func (h *harness) plain() string { return ansi.Strip(h.m.render()) }

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		keytest.WriteGolden(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test ./ui -update to create it): %v", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (go test ./ui -update rewrites it)\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// screenHas fails unless the plain screen contains every string.
func screenHas(t testing.TB, screen string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(screen, s) {
			t.Errorf("screen lacks %q:\n%s", s, screen)
		}
	}
}

// addAskTool adds to s the read-only tool "ask", which asks the person, through an
// elicitation saying message, for the text field field, and answers with what
// answer makes of the reply.
func addAskTool(s *mcp.Server, message, field string, answer func(*mcp.ElicitResult) string) {
	closed := false
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &closed}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
				Message: message,
				RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
					field: {Type: "string"},
				}},
			})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: answer(res)}}}, nil, nil
		})
}
