package ui

// The root's part of the Grants view (ui/screens/grants): per context — the person
// ("you") and each agent — its taint and its standing grants. x (or d) revokes the
// selected grant at once: revoking only brings questions back, so a key pressed by
// mistake costs a question, never an allow. C asks, through the question overlay and
// its input guard, whether to clear the selected context's taint: clearing makes
// airlock less careful, so it is answered like an allow (no letter clears; →, enter,
// then ctrl+y), and it clears only the taint the question showed.

import (
	"maps"
	"slices"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/question"
	"github.com/airlock-mcp/airlock/ui/screens/grants"
)

// grantsData collects every context with a grant or a taint from the engine, the
// person's context first (always listed, so its taint can be cleared here).
func grantsData(e *approval.Engine) []grants.Context {
	by := map[string]*grants.Context{model.PersonContext: {Name: model.PersonContext}}
	get := func(k string) *grants.Context {
		c := by[k]
		if c == nil {
			c = &grants.Context{Name: k, Client: e.ContextClient(k)}
			by[k] = c
		}
		return c
	}
	for k, t := range e.Taints() {
		get(k).Taint = t
	}
	for _, g := range e.Grants() {
		c := get(g.Context)
		c.Grants = append(c.Grants, grants.Grant{Context: g.Context, Ref: g.Ref, Scope: g.Scope, At: g.At, By: g.By, CallID: g.CallID,
			Fingerprint: g.Fingerprint, Tier: g.Tier, Trust: g.Trust, Policy: g.Policy})
	}
	out := make([]grants.Context, 0, len(by))
	for _, c := range by {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Name == model.PersonContext) != (out[j].Name == model.PersonContext) {
			return out[i].Name == model.PersonContext
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// taintClearedMsg reports the end of clearing a context's taint.
type taintClearedMsg struct {
	ctx string
	err error
}

// openGrants shows the Grants view over the current screen; esc returns to it.
func (m *Model) openGrants() {
	m.grants.Reset()
	m.refreshGrants()
	m.push(screenGrants)
}

// refreshGrants gives the view (and the status line) the engine's grants and
// taint as they are now.
func (m *Model) refreshGrants() {
	m.grants.SetData(grantsData(m.sess.Engine()))
	m.taint = m.sess.Engine().Taint("")
}

// revokeGrant revokes g at once, without a question: it only makes the next call
// of that tool in that context ask again.
func (m *Model) revokeGrant(g grants.Grant) (*Model, tea.Cmd) {
	name := common.Inline(m.St, g.Ref.Qualified(), 40)
	if err := m.sess.Engine().Revoke(g.Context, g.Ref); err != nil {
		m.status = "✗ could not revoke " + name + ": " + common.Inline(m.St, err.Error(), 80)
	} else {
		m.status = "✓ revoked " + name + " for " + common.Inline(m.St, g.Context, 32) + ": its next call asks again"
	}
	m.refreshGrants()
	return m, nil
}

// clearTaintCmd clears the taint the person was shown, off the UI's goroutine:
// taint.json is written under a lock another airlock process may hold.
func clearTaintCmd(e *approval.Engine, a question.ClearTaintAnswer) tea.Cmd {
	return func() tea.Msg {
		return taintClearedMsg{ctx: a.Context, err: e.ClearTaintShown(a.Context, a.Taint)}
	}
}

// applyClearTaint carries out the answer of the clear-taint question.
func (m *Model) applyClearTaint(a question.ClearTaintAnswer) (*Model, tea.Cmd) {
	if !a.Clear {
		m.status = "kept " + common.Inline(m.St, a.Context, 32) + " tainted"
		return m, nil
	}
	if m.clearing == nil {
		m.clearing = map[string]int{}
	}
	m.clearing[a.Context]++
	m.status = "" // an earlier word ("kept you tainted") is not this answer's
	return m, clearTaintCmd(m.sess.Engine(), a)
}

// clearingLine is what the status line says of the clears under way ("" for none).
func (m *Model) clearingLine() string {
	if len(m.clearing) == 0 {
		return ""
	}
	names := make([]string, 0, len(m.clearing))
	for _, c := range slices.Sorted(maps.Keys(m.clearing)) {
		names = append(names, common.Inline(m.St, c, 32))
	}
	return "clearing the taint of " + strings.Join(names, ", ") + "…"
}

// taintCleared reports how clearing ended and refreshes what shows taint.
func (m *Model) taintCleared(msg taintClearedMsg) (*Model, tea.Cmd) {
	if n := m.clearing[msg.ctx]; n > 1 {
		m.clearing[msg.ctx] = n - 1
	} else {
		delete(m.clearing, msg.ctx) // a no-op on a nil map: never a panic
	}
	name := common.Inline(m.St, msg.ctx, 32)
	if msg.err != nil {
		m.status = "✗ the taint of " + name + " was not cleared: " + common.Inline(m.St, msg.err.Error(), 120)
	} else {
		m.status = "✓ cleared the taint of " + name + " (audited)"
	}
	m.taint = m.sess.Engine().Taint("")
	if m.screen == screenGrants {
		m.refreshGrants()
	}
	return m, nil
}
