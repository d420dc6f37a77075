package ui

// What-if: the person's live changes for this session (a server's trust, a
// tool's policy, a tool turned off). The session recomputes tiers, policies and
// hazards; the root takes the new snapshot and hands it to every child. The
// changes are never written into the person's config: E exports them as a
// fragment to merge by hand.

import (
	"errors"
	"os"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/question"
	"github.com/airlock-mcp/airlock/ui/screens/hazards"
)

// whatIfMsg reports that a live change was applied (or why not).
type whatIfMsg struct {
	what string // what changed, in airlock's words, escaped
	err  error
}

// whatIfCmd applies one live change in a Cmd; it captures the Manager, never
// the model.
func whatIfCmd(m *session.Manager, what string, apply func(*session.Manager) error) tea.Cmd {
	return func() tea.Msg { return whatIfMsg{what: what, err: apply(m)} }
}

// nextTrust is the trust T moves a server to: trusted → untrusted → blocked →
// trusted. Three presses always come back to where the server started, so the
// config's value is reached again (and the change removed).
func nextTrust(t trust.ServerTrust) trust.ServerTrust {
	switch t {
	case trust.Trusted:
		return trust.Untrusted
	case trust.Untrusted:
		return trust.BlockedServer
	}
	return trust.Trusted
}

// nextPolicy is the policy override p moves a tool to: none → ask → deny →
// none. An allow override (set elsewhere, such as by the tour) moves to ask.
func nextPolicy(a trust.Action) trust.Action {
	switch a {
	case trust.ActionUnset:
		return trust.Ask
	case trust.Ask:
		return trust.Deny
	case trust.Allow:
		return trust.Ask
	}
	return trust.ActionUnset
}

// toggleDisabled turns a tool off for this session, or back on. Turning it back on
// lets its calls run again (perhaps unasked), so that asks first, guarded, unless
// its policy would deny them anyway.
func (m *Model) toggleDisabled(ref trust.Ref) tea.Cmd {
	off := !m.over.Disabled[ref]
	name := common.Inline(m.St, ref.Qualified(), 40)
	what := name + " turned off for this session"
	if !off {
		what = name + " turned back on"
	}
	apply := func(s *session.Manager) error { return s.SetDisabled(ref, off) }
	if !off {
		then := trust.Allow // a tool not in the snapshot: assume it would run
		if t, ok := m.snap.Tool(ref.Server, ref.Tool); ok {
			if cfg := m.sess.Config(); cfg != nil {
				in := t.Input()
				in.Disabled = false
				then = trust.Classify(in, cfg.Policy).Action
			}
		}
		if strictness(then) < strictness(trust.Deny) {
			lines := []string{
				name + " · off → on (policy " + then.String() + ")",
				"",
				"Its calls may run again, for this session, some unasked. x turns it off again; U undoes every what-if change.",
			}
			return m.askLoosen("Turn "+name+" back on?", lines, "Turn it on",
				loosening{what: what, kept: "kept " + name + " off", apply: apply})
		}
	}
	return whatIfCmd(m.sess, what, apply)
}

// strictness orders policies by how little they let run: allow 0, ask 1, deny 2
// (-1 for no override, whose effect the tier's policy decides).
func strictness(a trust.Action) int {
	switch a {
	case trust.Allow:
		return 0
	case trust.Ask:
		return 1
	case trust.Deny:
		return 2
	}
	return -1
}

// trustRank orders server trust by how much it believes: blocked 0, untrusted 1,
// trusted 2.
func trustRank(t trust.ServerTrust) int {
	switch t {
	case trust.Trusted:
		return 2
	case trust.Untrusted:
		return 1
	}
	return 0
}

// heldLead starts the status line of a what-if step the team policy refused: the
// status line leads with it (statusLine), so that what happened is on screen at
// any width.
const heldLead = "⊘ nothing changed: "

// heldByPolicy says on the status line that a what-if step was refused because
// the team policy holds the value (the session's sentence, FILE:LINE in it):
// nothing changed, and neither U nor the config can loosen it.
func (m *Model) heldByPolicy(h *session.PolicyHold) {
	m.status = heldLead + common.Inline(m.St, h.Error(), 0)
}

// choiceLoosen prefixes the tag of the question before a what-if change that
// loosens what runs; a sequence number follows it (Model.loosen holds the change).
const choiceLoosen = "loosen:"

// loosening is a what-if change that waits for the person's guarded yes: exactly
// what the question showed is applied.
type loosening struct {
	what  string // the change, for the status line
	kept  string // the status line when the person keeps things as they are
	apply func(*session.Manager) error
}

// askLoosen asks before a what-if change that lets more run (a stray key must not
// loosen): the question's safe button keeps things as they are, and only the chord
// (→ enter ctrl+y) makes the change. Tightening changes take one key.
func (m *Model) askLoosen(title string, lines []string, yes string, l loosening) tea.Cmd {
	m.loosenSeq++
	tag := choiceLoosen + strconv.Itoa(m.loosenSeq)
	if m.loosen == nil {
		m.loosen = map[string]loosening{}
	}
	m.loosen[tag] = l
	return m.q.AskChoice(tag, title, lines, [2]string{"Keep it", yes}, question.GuardedChoiceKeys("keep", strings.ToLower(yes)))
}

// applyLoosen carries out the answer of an askLoosen question.
func (m *Model) applyLoosen(tag string, yes bool) (*Model, tea.Cmd) {
	l, ok := m.loosen[tag]
	delete(m.loosen, tag)
	if !ok {
		return m, nil
	}
	if !yes {
		m.status = l.kept
		return m, nil
	}
	return m, whatIfCmd(m.sess, l.what, l.apply)
}

// policyEffect is what the tool's policy decides now and what it would decide
// with the override next (ActionUnset: the config's tool policy, else its
// tier's), as the engine classifies it: a tool turned off or blocked stays denied
// either way. A tool not in the snapshot is taken as denied now, so any change to
// it counts as loosening.
func (m *Model) policyEffect(ref trust.Ref, next trust.Action) (now, then trust.Action) {
	t, ok := m.snap.Tool(ref.Server, ref.Tool)
	cfg := m.sess.Config()
	if !ok || cfg == nil {
		return trust.Deny, next
	}
	in := t.Input()
	now = trust.Classify(in, cfg.Policy).Action
	in.ToolPolicy = next
	if next == trust.ActionUnset {
		for _, s := range cfg.Servers {
			if s.Name == ref.Server {
				in.ToolPolicy = s.Tools[ref.Tool].Policy
			}
		}
	}
	return now, trust.Classify(in, cfg.Policy).Action
}

// cyclePolicy moves a tool's policy override one step. A step that lets more run
// than the tool's policy now does (deny → its tier's allow, or ask over a tier
// that denies) asks first, guarded; a step that runs less is one key.
func (m *Model) cyclePolicy(ref trust.Ref) tea.Cmd {
	cur, ok := m.over.Policy[ref]
	if !ok {
		cur = trust.ActionUnset
	}
	next := nextPolicy(cur)
	word := next.String()
	if next == trust.ActionUnset {
		word = "its tier's (no override)"
	}
	if h := m.sess.ToolPolicyHeld(ref, next); h != nil {
		m.heldByPolicy(h)
		return nil
	}
	name := common.Inline(m.St, ref.Qualified(), 40)
	what := name + " policy → " + word
	apply := func(s *session.Manager) error { return s.SetToolPolicy(ref, next) }
	now, then := m.policyEffect(ref, next)
	if strictness(then) < strictness(now) {
		lines := []string{
			name + " · " + now.String() + " → " + then.String() + " (policy → " + word + ")",
			"",
			"This lets more of its calls run, for this session: they may run unasked. p moves it on; U undoes every what-if change.",
		}
		return m.askLoosen("Loosen "+name+"'s policy?", lines, "Loosen it",
			loosening{what: what, kept: "kept " + name + "'s policy " + now.String(), apply: apply})
	}
	return whatIfCmd(m.sess, what, apply)
}

// cycleTrust moves a server's trust one step, through the trusts the team policy
// lets it have (held at untrusted, blocked steps back to untrusted; held at
// blocked, there is no step, and the status line says so). Raising it (blocked →
// trusted) makes airlock believe the server's claims and run what it blocked, so
// it asks first, guarded; lowering it is one key.
func (m *Model) cycleTrust(server string) tea.Cmd {
	sv, ok := m.snap.Server(server)
	if !ok {
		return nil
	}
	next := nextTrust(sv.Trust)
	var skipped *session.PolicyHold // the first trust the policy holds away
	var skippedTrust trust.ServerTrust
	for next != sv.Trust {
		h := m.sess.TrustHeld(server, next)
		if h == nil {
			break
		}
		if skipped == nil {
			skipped, skippedTrust = h, next
		}
		next = nextTrust(next)
	}
	if next == sv.Trust {
		if skipped != nil {
			m.heldByPolicy(skipped)
		}
		return nil
	}
	name := common.Inline(m.St, server, 32)
	what := name + " trust " + sv.Trust.String() + " → " + next.String()
	if next == m.configTrust[server] {
		what += " (the config's)"
	}
	if note := hazards.BelievedNote(m.snap, server, next); note != "" {
		what += " · " + common.Inline(m.St, note, 160)
	}
	apply := func(s *session.Manager) error { return s.SetServerTrust(server, next) }
	if trustRank(next) > trustRank(sv.Trust) {
		lines := []string{
			name + " · trust " + sv.Trust.String() + " → " + next.String(),
			"",
			"Its tools' tiers are recomputed, for this session: what was blocked may run, and what it claims about its tools may be believed, so calls may run unasked. T moves it on; U undoes every what-if change.",
		}
		if skipped != nil {
			lines = append(lines, "", skippedTrust.String()+" is skipped: "+common.Inline(m.St, skipped.Source.String(), 200)+" holds "+name+" at "+skipped.At+".")
		}
		if note := hazards.BelievedNote(m.snap, server, next); note != "" {
			lines = append(lines, "", common.Inline(m.St, note, 300))
		}
		return m.askLoosen("Raise "+name+"'s trust to "+next.String()+"?", lines, "Raise it",
			loosening{what: what, kept: "kept " + name + " " + sv.Trust.String(), apply: apply})
	}
	return whatIfCmd(m.sess, what, apply)
}

// applyWhatIf takes the new snapshot after a live change and says what changed.
func (m *Model) applyWhatIf(msg whatIfMsg) {
	if h := (*session.PolicyHold)(nil); errors.As(msg.err, &h) {
		// The session refused a change the team policy holds: its sentence, whole.
		m.heldByPolicy(h)
		return
	}
	if msg.err != nil {
		m.status = "✗ could not change: " + common.Inline(m.St, msg.err.Error(), 100)
		return
	}
	before := m.snap
	m.setSnapshot(m.sess.Snapshot())
	m.status = "what-if: " + msg.what
	if note := hazards.RemainsNote(before, m.snap); note != "" {
		m.status += " · " + common.Inline(m.St, note, 200)
	}
	if n := hazards.OverrideCount(m.over); n > 0 {
		m.status += " · E exports the changes"
	}
}

// configTrusts maps each configured server to the trust the config gives it.
func configTrusts(m *session.Manager) map[string]trust.ServerTrust {
	out := map[string]trust.ServerTrust{}
	if cfg := m.Config(); cfg != nil {
		for _, s := range cfg.Servers {
			out[s.Name] = s.Trust
		}
	}
	return out
}

// changedSets lists the tools and servers a live change touches, for the marks
// in the tools and servers panes.
func changedSets(o model.Overrides) (map[trust.Ref]bool, map[string]bool) {
	tools := map[trust.Ref]bool{}
	for r := range o.Policy {
		tools[r] = true
	}
	for r, off := range o.Disabled {
		if off {
			tools[r] = true
		}
	}
	servers := map[string]bool{}
	for s := range o.Trust {
		servers[s] = true
	}
	return tools, servers
}

// exportedMsg reports the fragment written by WriteOverrides.
type exportedMsg struct {
	path     string
	fragment string
	err      error
}

// exportCmd writes the live changes next to the config (or in the state dir) and
// reads the file back, so the view shows exactly what was written.
func exportCmd(m *session.Manager) tea.Cmd {
	return func() tea.Msg {
		path, err := m.WriteOverrides()
		if err != nil {
			return exportedMsg{err: err}
		}
		b, err := os.ReadFile(path)
		return exportedMsg{path: path, fragment: string(b), err: err}
	}
}

// unsavedText is the status line's note of live changes not in the config.
func unsavedText(n int) string {
	return "* " + strconv.Itoa(n) + " unsaved change" + common.Plural(n)
}
