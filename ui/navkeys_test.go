package ui

// Update-level tests of the rule that no sequence of the keys the screens behind a
// question use can allow anything: a person who looked away while a question opened
// and armed, and who then goes on navigating (tab, enter, j, space…), never allows
// the call, the changed definition or the clearing of a taint.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/dialog"
	"github.com/airlock-mcp/airlock/ui/internal/keytest"
	"github.com/airlock-mcp/airlock/ui/question"
	"github.com/airlock-mcp/airlock/ui/screens/activity"
	"github.com/airlock-mcp/airlock/ui/screens/call"
	"github.com/airlock-mcp/airlock/ui/screens/channels"
	"github.com/airlock-mcp/airlock/ui/screens/detail"
	"github.com/airlock-mcp/airlock/ui/screens/export"
	"github.com/airlock-mcp/airlock/ui/screens/grants"
	"github.com/airlock-mcp/airlock/ui/screens/hazards"
	"github.com/airlock-mcp/airlock/ui/screens/helpview"
	"github.com/airlock-mcp/airlock/ui/screens/logs"
	"github.com/airlock-mcp/airlock/ui/screens/output"
	"github.com/airlock-mcp/airlock/ui/screens/panes"
	"github.com/airlock-mcp/airlock/ui/screens/queue"
	"github.com/airlock-mcp/airlock/ui/screens/result"
	"github.com/airlock-mcp/airlock/ui/screens/rules"
	"github.com/airlock-mcp/airlock/ui/screens/serverinfo"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// screenKeyMaps is every key map of the screens a question can open over (the main
// screen's panes, the global keys and every view reached from them). The call form,
// the typed filter and an elicitation form are not among them: while they take text
// a question never opens (it waits behind the badge), so their keys (the form's
// ←/→ among them) never reach one.
func screenKeyMaps() []any {
	return []any{
		DefaultGlobalKeyMap(), panes.DefaultServersKeyMap(), panes.DefaultToolsKeyMap(), detail.DefaultKeyMap(),
		result.DefaultKeyMap(), logs.DefaultKeyMap(), helpview.DefaultKeyMap(), hazards.DefaultKeyMap(),
		queue.DefaultKeyMap(), export.DefaultKeyMap(), DefaultTourKeyMap(), activity.DefaultKeyMap(),
		grants.DefaultKeyMap(), rules.DefaultKeyMap(), output.DefaultKeyMap(), channels.DefaultPromptsKeyMap(),
		channels.DefaultResourcesKeyMap(), serverinfo.DefaultKeyMap(), call.DefaultKeyMap(),
		common.DefaultScrollKeyMap().ViewportKeys(),
	}
}

// bindingKeys collects the keys of every key.Binding in v, walking nested structs.
func bindingKeys(v reflect.Value, into map[string]bool) {
	if b, ok := v.Interface().(key.Binding); ok {
		for _, k := range b.Keys() {
			into[k] = true
		}
		return
	}
	if v.Kind() != reflect.Struct {
		return
	}
	for i := range v.NumField() {
		if v.Type().Field(i).IsExported() {
			bindingKeys(v.Field(i), into)
		}
	}
}

// screenKeys is every key the screens behind a question bind, sorted, in the names
// keytest.Press takes.
func screenKeys(t testing.TB) []string {
	t.Helper()
	set := map[string]bool{}
	for _, km := range screenKeyMaps() {
		bindingKeys(reflect.ValueOf(km), set)
	}
	var out []string
	for k := range set {
		func() {
			defer func() {
				if recover() != nil {
					t.Fatalf("screen key %q has no keytest name", k)
				}
			}()
			keytest.Press(k)
		}()
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestAllowKeys_NoneIsAScreenKey: the keys that move focus onto an allow button,
// accept or clear, and the chord that allows, are keys no screen behind a question
// binds. A person navigating the screen never types them. Nor the key that shows a
// call's secrets as sent: navigating never puts one on screen.
func TestAllowKeys_NoneIsAScreenKey(t *testing.T) {
	screen := map[string]bool{}
	for _, k := range screenKeys(t) {
		screen[k] = true
	}
	dk := dialog.DefaultKeyMap()
	for _, c := range []struct {
		what string
		b    key.Binding
	}{
		{"approval: next button", dk.Next},
		{"approval: previous button", dk.Prev},
		{"approval: allow chord", dk.Confirm},
		{"approval: reveal the secrets", dk.Reveal},
		{"accept: move", question.AcceptKeyMap().Next},
		{"accept: chord", question.AcceptKeyMap().Confirm},
		{"clear taint: move", question.ClearTaintKeyMap().Next},
		{"clear taint: chord", question.ClearTaintKeyMap().Confirm},
		{"revoke a remembered rule: move", question.GuardedChoiceKeys("keep", "revoke").Next},
		{"revoke a remembered rule: chord", question.GuardedChoiceKeys("keep", "revoke").Confirm},
	} {
		if len(c.b.Keys()) == 0 {
			t.Errorf("%s: no keys", c.what)
		}
		for _, k := range c.b.Keys() {
			if screen[k] {
				t.Errorf("%s is %q, which the screens behind the dialog bind", c.what, k)
			}
		}
	}
}

// navSequences are the main screen's most common key sequences, and the keys the
// issue names: each is sent to an armed question as a person who resumes navigating.
var navSequences = [][]string{
	{"tab", "enter"}, {"tab", "tab", "enter"}, {"shift+tab", "enter"}, {"j", "j", "enter"},
	{"down", "enter"}, {"space"}, {"y"}, {"a"}, {"l", "enter"}, {"right", "enter"}, {"ctrl+y"},
	{"tab", "enter", "enter"}, {"enter", "enter"}, {"tab", "space"}, {"tab", "j", "enter"},
	{"k", "enter", "tab", "enter"}, {"tab", "ctrl+y"}, {"a", "enter", "tab", "enter"},
	{"/", "d", "e", "l", "enter"}, {"tab", "tab", "tab", "tab", "enter", "enter"},
}

// argsFor is the arguments repoServer's tool takes.
func argsFor(tool string) string {
	if tool == "repo__delete_repo" {
		return `{"repo":"prod"}`
	}
	return `{"text":"x"}`
}

// allowedNow reports whether the root's status says a call was just allowed.
func allowedNow(m Model) bool { return strings.HasPrefix(m.status, "✓ allowed") }

// pauseAndTick lets the keyboard rest for d and delivers the guard's timer.
func (h *harness) pauseAndTick(d time.Duration) {
	h.advance(d)
	h.send(h.m.q.PendingTick())
}

// drain feeds the messages that are already waiting to Update.
func (h *harness) drain() {
	for {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		default:
			return
		}
	}
}

// TestNav_CommonSequencesAfterAPauseNeverAllow: an agent's call opens and arms while
// the person looks away; the person comes back and goes on navigating. For each of
// the main screen's common sequences, sent at once, with the guard's pause between
// every key, and for a destructive and a write call, nothing is allowed and nothing
// reaches the server.
func TestNav_CommonSequencesAfterAPauseNeverAllow(t *testing.T) {
	for _, tool := range []string{"repo__write_note", "repo__delete_repo"} {
		for _, paced := range []bool{false, true} {
			for _, seq := range navSequences {
				name := fmt.Sprintf("%s/paced=%v/%s", tool, paced, strings.Join(seq, "_"))
				t.Run(name, func(t *testing.T) {
					h, r := repoHarness(t)
					done := agentCall(context.Background(), h.sess, tool, argsFor(tool))
					h.waitAsked(1)
					h.armQuestion() // the person looked away: it opened and armed
					for _, k := range seq {
						if paced {
							h.pauseAndTick(2 * question.MinQuiet)
						}
						h.keys(k)
						h.drain()
						if allowedNow(h.m) {
							t.Fatalf("%v allowed the call (status %q):\n%s", seq, h.m.status, h.plain())
						}
					}
					select {
					case err := <-done:
						if err == nil {
							t.Fatalf("%v: the call was allowed and ran", seq)
						}
					case <-time.After(20 * time.Millisecond):
					}
					if n := r.writes.Load() + r.deletes.Load(); n != 0 {
						t.Fatalf("%v: the server ran %d calls", seq, n)
					}
				})
			}
		}
	}
}

// TestNav_RandomScreenKeysNeverAllow: seeded random sequences of the keys the
// screens bind, with random pauses (some long enough for the guard to open and arm
// a question), never allow an agent's call.
func TestNav_RandomScreenKeysNeverAllow(t *testing.T) {
	keys := screenKeys(t)
	rng := rand.New(rand.NewPCG(30, 5))
	pauses := []time.Duration{0, 120 * time.Millisecond, question.MinQuiet, 3 * question.MinQuiet}
	common := []string{"tab", "shift+tab", "enter", "j", "k", "up", "down", "space"}
	const runs, length = 40, 25
	for run := range runs {
		tool := "repo__write_note"
		if run%2 == 1 {
			tool = "repo__delete_repo"
		}
		h, r := repoHarness(t)
		done := agentCall(context.Background(), h.sess, tool, argsFor(tool))
		h.waitAsked(1)
		h.armQuestion()
		var seq []string
		for range length {
			h.pauseAndTick(pauses[rng.IntN(len(pauses))])
			k := keys[rng.IntN(len(keys))]
			if rng.IntN(2) == 0 {
				k = common[rng.IntN(len(common))] // how a person moves about most
			}
			seq = append(seq, k)
			h.keys(k)
			h.drain()
			if allowedNow(h.m) {
				t.Fatalf("run %d: %v allowed the call (status %q)", run, seq, h.m.status)
			}
		}
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("run %d: %v: the call was allowed and ran", run, seq)
			}
		case <-time.After(5 * time.Millisecond):
		}
		if n := r.writes.Load() + r.deletes.Load(); n != 0 {
			t.Fatalf("run %d: %v: the server ran %d calls", run, seq, n)
		}
	}
}

// TestNav_RandomScreenKeysNeverAcceptOrClear: the same for accepting a changed
// definition, clearing a taint and revoking a remembered rule, at the overlay: seeded random sequences of the
// screens' keys, after the question armed, never accept or clear.
func TestNav_RandomScreenKeysNeverAcceptOrClear(t *testing.T) {
	keys := screenKeys(t)
	rng := rand.New(rand.NewPCG(30, 6))
	var clock time.Time
	now := func() time.Time { return clock }
	for run := range 400 {
		o := question.New(theme.New(false, false), question.MinQuiet, now, false, approval.Rules{})
		kind := [3]string{"accept", "clear", "revoke"}[run%3]
		switch kind {
		case "accept":
			o.AskAccept(trust.Ref{Server: "notes", Tool: "delete_note"}, "notes__delete_note", strings.Repeat("ab", 32))
		case "clear":
			o.AskClearTaint("agent-1", trust.Taint{}, "agent-1", nil)
		default:
			o.AskChoice("revoke", "Revoke remembered rule r1?", nil, [2]string{"Keep it", "Revoke"}, question.GuardedChoiceKeys("keep", "revoke the rule"))
		}
		clock = clock.Add(question.MinQuiet)
		o, _ = o.Tick(o.PendingTick().(question.TickMsg), false)
		if !o.Armed() {
			t.Fatal("the question did not arm")
		}
		var seq []string
		for range 20 {
			k := keys[rng.IntN(len(keys))]
			seq = append(seq, k)
			var out question.Outcome
			o, out, _ = o.Update(keytest.Press(k))
			switch a := out.(type) {
			case question.AcceptAnswer:
				if a.Accept {
					t.Fatalf("%s: %v accepted the changed definition", kind, seq)
				}
			case question.ClearTaintAnswer:
				if a.Clear {
					t.Fatalf("%s: %v cleared the taint", kind, seq)
				}
			case question.Chose:
				if a.Second {
					t.Fatalf("%s: %v revoked the rule", kind, seq)
				}
			}
			if out != nil {
				break
			}
		}
	}
}

// TestNav_DeliberateKeysAllow: the documented sequences still allow, after the
// guard armed: → enter ctrl+y allows once, → → enter ctrl+y for the context, and a
// destructive call takes → enter ctrl+y too (it offers no grant for the context).
func TestNav_DeliberateKeysAllow(t *testing.T) {
	for _, c := range []struct {
		tool   string
		keys   []string
		status string
	}{
		{"repo__write_note", []string{"right", "enter", "ctrl+y"}, "✓ allowed: repo__write_note"},
		{"repo__write_note", []string{"right", "right", "enter", "ctrl+y"}, "✓ allowed for this context: repo__write_note"},
		{"repo__delete_repo", []string{"right", "enter", "ctrl+y"}, "✓ allowed: repo__delete_repo"},
		{"repo__delete_repo", []string{"right", "right", "left", "enter", "ctrl+y"}, "✓ allowed: repo__delete_repo"},
	} {
		t.Run(c.tool+"/"+strings.Join(c.keys, "_"), func(t *testing.T) {
			h, r := repoHarness(t)
			done := agentCall(context.Background(), h.sess, c.tool, argsFor(c.tool))
			h.waitAsked(1)
			h.armQuestion()
			last := len(c.keys) - 1
			h.keys(c.keys[:last]...)
			if allowedNow(h.m) {
				t.Fatalf("%v allowed before the chord", c.keys[:last])
			}
			screenHas(t, h.plain(), "ctrl+y")
			h.keys(c.keys[last])
			if h.m.status != c.status {
				t.Fatalf("status %q, want %q", h.m.status, c.status)
			}
			if err := outcome(t, done); err != nil {
				t.Fatalf("the deliberately allowed call: %v", err)
			}
			if n := r.writes.Load() + r.deletes.Load(); n != 1 {
				t.Fatalf("the server ran %d calls, want 1", n)
			}
		})
	}
}

// TestNav_ElicitationNeedsSubmit: a server's request for input is never accepted by
// the screens' keys: enter on its last field (or on a request without fields) does
// not send; ctrl+s does.
func TestNav_ElicitationNeedsSubmit(t *testing.T) {
	h, _ := repoHarness(t)
	asked := agentCall(context.Background(), h.sess, "repo__ask", `{}`)
	h.waitFor("the request for input", func(m Model) bool { return m.q.Count(question.KindElicitation) == 1 })
	h.armQuestion()
	h.keys("j", "j", "enter", "tab", "enter", "enter")
	select {
	case err := <-asked:
		t.Fatalf("j j enter answered the request for input (err %v):\n%s", err, h.plain())
	case <-time.After(50 * time.Millisecond):
	}
	if !frontIs(h.m, question.KindElicitation) {
		t.Fatalf("the request for input closed:\n%s", h.plain())
	}
	h.send(keytest.Press("ctrl+s"))
	if err := outcome(t, asked); err != nil {
		t.Fatalf("the accepted request's call: %v", err)
	}
}

// TestNav_ChoiceGolden: the accept question once armed, with focus moved onto
// Accept, and after enter (it asks for ctrl+y), at 60x20, 80x24 and 120x40: the help
// says ←/→ and, while it waits, only ctrl+y and "any other key".
func TestNav_ChoiceGolden(t *testing.T) {
	var clock time.Time
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		o := question.New(theme.New(false, true), question.MinQuiet, func() time.Time { return clock }, false, approval.Rules{})
		o.SetSize(size[0], size[1])
		o.AskAccept(trust.Ref{Server: "notes", Tool: "create_note"}, "notes__create_note", strings.Repeat("ab", 32))
		clock = clock.Add(question.MinQuiet)
		o, _ = o.Tick(o.PendingTick().(question.TickMsg), false)
		o, _, _ = o.Update(keytest.Press("right"))
		name := func(what string) string {
			return "accept_" + what + "_" + itoa(size[0]) + "x" + itoa(size[1]) + ".golden"
		}
		v := ansi.Strip(o.View())
		if !strings.Contains(v, "←/→ move") || strings.Contains(v, "tab") {
			t.Errorf("%dx%d: the help does not say ←/→:\n%s", size[0], size[1], v)
		}
		keytest.Fits(t, o.View(), size[0], size[1], "accept question")
		golden(t, name("focused"), v)
		o, _, _ = o.Update(keytest.Press("enter"))
		v = ansi.Strip(o.View())
		if !strings.Contains(v, "Press ctrl+y to accept the new definition") || !strings.Contains(v, "ctrl+y accept the new definition") || strings.Contains(v, "enter press") {
			t.Errorf("%dx%d: waiting for the chord is not what the question says:\n%s", size[0], size[1], v)
		}
		keytest.Fits(t, o.View(), size[0], size[1], "accept question waiting")
		golden(t, name("chord"), v)
	}
}
