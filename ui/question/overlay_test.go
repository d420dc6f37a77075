package question

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	engine "github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/dialog"
	"github.com/airlock-mcp/airlock/ui/internal/keytest"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// clock is the guard's injected clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newOverlay(bell bool) (*Overlay, *clock) {
	c := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	o := New(theme.New(true, true), 0, c.now, bell, engine.Rules{})
	o.SetSize(80, 24)
	return &o, c
}

func writePending(id uint64) *model.Pending {
	no := false
	return &model.Pending{
		ID:      id,
		Request: model.CallRequest{Server: "notes", Tool: "create_note", Client: "agent", Context: "a1", Args: json.RawMessage(`{"title":"x"}`)},
		Tool: model.ToolInfo{
			Ref: trust.Ref{Server: "notes", Tool: "create_note"}, ServerTrust: trust.Trusted,
			Declared: trust.Declared{Hints: trust.Hints{ReadOnly: &no, Destructive: &no}},
			Class:    trust.Classification{Tier: trust.TierWrite, Action: trust.Ask},
		},
		Verdict: trust.Verdict{Action: trust.Ask, By: trust.DecidedByPolicy},
	}
}

// key sends one key as the root does: Input first, then Update.
func (o *Overlay) key(t *testing.T, name string) Outcome {
	t.Helper()
	o.Input()
	var out Outcome
	*o, out, _ = o.Update(keytest.Press(name))
	return out
}

// tick delivers the guard's current timer.
func (o *Overlay) tick(typing bool) {
	*o, _ = o.Tick(o.PendingTick().(TickMsg), typing)
}

func TestGuard_OpensWhenIdleAndArmsAfterQuietOnScreen(t *testing.T) {
	o, c := newOverlay(false)
	o.AddApproval(writePending(1), false)
	if o.Open() {
		t.Fatal("a question opened before the guard's timer")
	}
	o.tick(false)
	if !o.Open() || o.Armed() {
		t.Fatalf("idle keyboard: open %v armed %v, want open and arming", o.Open(), o.Armed())
	}
	if v := ansi.Strip(o.View()); !strings.Contains(v, "arming… keys are ignored") {
		t.Fatalf("arming is not shown:\n%s", v)
	}
	c.advance(250 * time.Millisecond)
	if out := o.key(t, "tab"); out != nil {
		t.Fatalf("tab while arming answered %#v", out)
	}
	c.advance(300 * time.Millisecond) // 550 ms on screen, 300 ms after the last key
	o.tick(false)
	if o.Armed() {
		t.Fatal("armed although a key came 300 ms ago: a key must restart the guard")
	}
	if out := o.key(t, "enter"); out != nil {
		t.Fatalf("enter while arming answered %#v", out)
	}
	c.advance(MinQuiet)
	o.tick(false)
	if !o.Armed() {
		t.Fatal("not armed after the keyboard was quiet for the guard")
	}
	// Focus is still on Deny: the tab typed while arming was ignored.
	if out := o.key(t, "enter"); out == nil {
		t.Fatal("enter after arming did nothing")
	} else if _, deny := out.(Approved).Action.(dialog.DenyCall); !deny {
		t.Fatalf("enter on the first armed key = %#v, want Deny (focus starts there)", out)
	}
}

func TestGuard_StaleTickIgnored(t *testing.T) {
	o, c := newOverlay(false)
	o.AddApproval(writePending(1), false)
	o.tick(false)
	stale := o.PendingTick().(TickMsg)
	o.AddApproval(writePending(2), false)
	c.advance(MinQuiet)
	o.tick(false) // arms 1
	o.key(t, "esc")
	if o.Len() != 1 || o.Open() {
		t.Fatalf("after denying 1: %d questions, open %v; want 2 waiting, closed", o.Len(), o.Open())
	}
	c.advance(time.Hour)
	*o, _ = o.Tick(stale, false)
	if o.Open() {
		t.Fatal("a tick of an earlier question opened the next one")
	}
}

func TestGuard_QuestionWaitsWhileTyping(t *testing.T) {
	o, c := newOverlay(false)
	o.AddApproval(writePending(1), false)
	for range 20 {
		c.advance(2 * time.Second) // long pauses between words
		o.tick(true)
		if o.Open() {
			t.Fatal("the question opened over text being typed")
		}
	}
	if !strings.Contains(o.Badge(), "1 approval waiting — press a") {
		t.Errorf("badge = %q", o.Badge())
	}
	o.Show()
	if !o.Open() || o.Armed() {
		t.Fatal("a opened the question armed, or did not open it")
	}
}

func TestGuard_EachQuestionArmsAfresh(t *testing.T) {
	o, c := newOverlay(false)
	o.AddApproval(writePending(1), false)
	o.AddApproval(writePending(2), false)
	o.tick(false)
	c.advance(MinQuiet)
	o.tick(false)
	o.key(t, "right")
	if out := o.key(t, "enter"); out != nil {
		t.Fatalf("right, enter answered before the chord: %#v", out)
	}
	if out, ok := o.key(t, "ctrl+y").(Approved); !ok {
		t.Fatalf("a deliberate right, enter, ctrl+y did not allow the first: %#v", out)
	}
	for _, k := range []string{"tab", "enter", "tab", "enter"} {
		c.advance(50 * time.Millisecond)
		if out := o.key(t, k); out != nil {
			t.Fatalf("%s after answering the first answered the second: %#v", k, out)
		}
		o.tick(false)
	}
	if o.Len() != 1 {
		t.Fatalf("%d questions left, want the second still waiting", o.Len())
	}
}

func TestGuard_AcceptAndQuitAreGuarded(t *testing.T) {
	o, c := newOverlay(false)
	o.AskAccept(trust.Ref{Server: "notes", Tool: "create_note"}, "notes__create_note", strings.Repeat("ab", 32))
	if !o.Open() || o.Armed() {
		t.Fatal("the accept question must open at once, arming")
	}
	for _, k := range []string{"y", "tab", "enter"} {
		if out := o.key(t, k); out != nil {
			t.Fatalf("%s while arming answered %#v", k, out)
		}
	}
	c.advance(MinQuiet)
	o.tick(false)
	if out := o.key(t, "y"); out != nil {
		t.Fatalf("y accepted a changed definition: %#v", out)
	}
	o.key(t, "tab")
	if out, ok := o.key(t, "enter").(AcceptAnswer); !ok || out.Accept {
		t.Fatalf("tab, enter after arming = %#v, want keep blocked (tab moves no focus)", out)
	}
	o.AskAccept(trust.Ref{Server: "notes", Tool: "create_note"}, "notes__create_note", strings.Repeat("ab", 32))
	c.advance(MinQuiet)
	o.tick(false)
	o.key(t, "right")
	if out := o.key(t, "enter"); out != nil {
		t.Fatalf("right, enter accepted before the chord: %#v", out)
	}
	if !strings.Contains(o.View(), "Press ctrl+y to accept the new definition") {
		t.Fatalf("the chord is not asked for:\n%s", o.View())
	}
	if out, ok := o.key(t, "ctrl+y").(AcceptAnswer); !ok || !out.Accept {
		t.Fatalf("right, enter, ctrl+y after arming = %#v, want accept", out)
	}

	o.AskQuit([]string{"• 1 approval waiting"})
	if out := o.key(t, "y"); out != nil {
		t.Fatalf("y quit while arming: %#v", out)
	}
	c.advance(MinQuiet)
	o.tick(false)
	if out, ok := o.key(t, "y").(QuitAnswer); !ok || !out.Quit {
		t.Fatalf("y after arming = %#v, want quit", out)
	}
}

func TestGuard_BellRingsOnArrival(t *testing.T) {
	rings := func(bell bool) bool {
		o, _ := newOverlay(bell)
		_, cmd := o.AddApproval(writePending(1), false)
		return hasBell(cmd)
	}
	if !rings(true) {
		t.Error("no bell with the bell on")
	}
	if rings(false) {
		t.Error("a bell with the bell off")
	}
}

// hasBell runs cmd's batch (not its timers) and reports whether it rings.
func hasBell(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(2 * MinQuiet):
		return false // a timer
	}
	switch m := msg.(type) {
	case tea.BatchMsg:
		for _, c := range m {
			if hasBell(c) {
				return true
			}
		}
	case tea.RawMsg:
		return m.Msg == "\a"
	}
	return false
}

// TestGuard_RefocusRearms: keys buffered while the terminal was in the background
// (claude-code #68526) never answer a question armed meanwhile.
func TestGuard_RefocusRearms(t *testing.T) {
	o, c := newOverlay(false)
	o.AddApproval(writePending(1), false)
	o.tick(false)
	c.advance(MinQuiet)
	o.tick(false)
	if !o.Armed() {
		t.Fatal("not armed")
	}
	o.Refocus()
	if out := o.key(t, "esc"); out != nil || o.Armed() {
		t.Fatalf("a key right after regaining focus answered %#v (armed %v)", out, o.Armed())
	}
	c.advance(MinQuiet)
	o.tick(false)
	if !o.Armed() {
		t.Fatal("did not arm again after the keyboard was quiet")
	}
}

func TestGuard_BellRingsOncePerBurst(t *testing.T) {
	o, c := newOverlay(true)
	n := 0
	for i := range 50 {
		if _, cmd := o.AddApproval(writePending(uint64(i+1)), false); hasBell(cmd) {
			n++
		}
		c.advance(10 * time.Millisecond)
	}
	if n != 1 {
		t.Errorf("50 arrivals within half a second rang %d times, want 1", n)
	}
	c.advance(bellEvery)
	if _, cmd := o.AddApproval(writePending(99), false); !hasBell(cmd) {
		t.Error("a later arrival did not ring")
	}
}

// A two-button question that arms again (the terminal regained focus, the approval
// queue closed over it) starts on its safe button: a focus moved to Accept before
// never lets the first Enter after the new quiet period accept.
func TestGuard_ChoiceShownAgainStartsOnItsSafeButton(t *testing.T) {
	for name, again := range map[string]func(o *Overlay){
		"refocus": func(o *Overlay) { o.Refocus() },
		"rearm":   func(o *Overlay) { o.Rearm() },
	} {
		o, c := newOverlay(false)
		o.AskAccept(trust.Ref{Server: "notes", Tool: "create_note"}, "notes__create_note", strings.Repeat("ab", 32))
		c.advance(MinQuiet)
		o.tick(false)
		o.key(t, "right") // focus on Accept
		again(o)
		if o.Armed() {
			t.Fatalf("%s: the question did not arm again", name)
		}
		c.advance(MinQuiet)
		o.tick(false)
		if out, ok := o.key(t, "enter").(AcceptAnswer); !ok || out.Accept {
			t.Fatalf("%s: enter after arming again = %#v, want keep blocked", name, out)
		}
	}
}

// TestGuard_KeysWaitingUnreadKeepItArming: on a busy machine the program reads
// the terminal late, and the guard's timer could arm a question while keys typed
// during its wait still sat unread in the terminal: read after the tick, they
// answered the armed question (the pty test typed "early" into a sampling
// question as it appeared, and under load "early" became the reply). Keys waiting
// unread are input the guard has not seen yet: while there are any, the question
// neither opens nor arms.
func TestGuard_KeysWaitingUnreadKeepItArming(t *testing.T) {
	o, c := newOverlay(false)
	unread := true
	o.SetUnread(func() bool { return unread })
	o.AddApproval(writePending(1), false)
	o.tick(false)
	if o.Open() {
		t.Fatal("a waiting question opened while typed keys were still unread")
	}
	unread = false
	o.tick(false)
	if !o.Open() {
		t.Fatal("the question did not open once the keys were read")
	}
	unread = true
	c.advance(MinQuiet + time.Second)
	o.tick(false)
	if o.Armed() {
		t.Fatal("armed while typed keys were still unread")
	}
	// The keys are read now: they restart the wait like any key.
	unread = false
	if out := o.key(t, "e"); out != nil {
		t.Fatalf("a key read late answered %#v", out)
	}
	o.tick(false)
	if o.Armed() {
		t.Fatal("armed at once after the late keys were read")
	}
	c.advance(MinQuiet)
	o.tick(false)
	if !o.Armed() {
		t.Fatal("not armed after the keyboard was quiet with nothing unread")
	}
}

// TestGuard_RefocusDropsAWaitingChord: enter was pressed on an allow (or accept)
// button and the question waits for ctrl+y; the terminal loses and regains focus.
// The question arms afresh with focus on its safe button, and ctrl+y after it armed
// again allows nothing.
func TestGuard_RefocusDropsAWaitingChord(t *testing.T) {
	for _, kind := range []string{"approval", "accept"} {
		o, c := newOverlay(false)
		if kind == "approval" {
			o.AddApproval(writePending(1), true)
		} else {
			o.AskAccept(trust.Ref{Server: "notes", Tool: "create_note"}, "notes__create_note", strings.Repeat("ab", 32))
		}
		c.advance(MinQuiet)
		o.tick(false)
		if !o.Armed() {
			t.Fatalf("%s: did not arm", kind)
		}
		for _, k := range []string{"right", "enter"} {
			if out := o.key(t, k); out != nil {
				t.Fatalf("%s: %s answered %#v", kind, k, out)
			}
		}
		if o.KeysFree() {
			t.Errorf("%s: KeysFree while the chord waits", kind)
		}
		o.Refocus()
		c.advance(MinQuiet)
		o.tick(false)
		if !o.Armed() {
			t.Fatalf("%s: did not arm again", kind)
		}
		switch out := o.key(t, "ctrl+y").(type) {
		case nil:
		case AcceptAnswer:
			if out.Accept {
				t.Fatalf("%s: ctrl+y after refocus accepted", kind)
			}
		default:
			t.Fatalf("%s: ctrl+y after refocus answered %#v", kind, out)
		}
	}
}
