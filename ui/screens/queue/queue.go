// Package queue is the approval queue, the modal that a opens over an armed
// question: every call that waits for the person, oldest first, with who asks,
// the tool and how long it has waited. Enter asks the root to bring one call's
// question to the front (Answer); the root owns the questions and hands the
// queue the waiting calls on every draw.
package queue

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/list"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// Model is the approval queue: every call that waits for the person, oldest
// first, with who asks (the agent client and its context, or "you"), the tool and
// how long it has waited. Enter brings one call's dialog to the front. It is a
// modal over the screen; the root gives it the pending calls on every draw.
type Model struct {
	*common.Common
	keys KeyMap
	// Open says the queue is shown.
	Open bool
	// list.Model's Cursor is the selected call's index in the oldest-first
	// order; the window is drawn from it (View), not kept.
	list.Model
	width, height int
}

// New returns the queue over the root's Common.
func New(com *common.Common) Model {
	q := Model{Common: com, keys: DefaultKeyMap(), Model: list.New()}
	q.Cursor = 0
	q.Keys = common.ScrollKeyMap{Up: q.keys.Up, Down: q.keys.Down}
	return q
}

// SetSize sets the space the modal may take.
func (q *Model) SetSize(w, h int) { q.width, q.height = w, h }

// TickMsg redraws the open queue so that the ages move.
type TickMsg struct{}

// Tick is the next TickMsg, a second from now.
func Tick() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return TickMsg{} })
}

// Action is what a key in the queue asks the root to do.
type Action int

// The queue's actions.
const (
	None Action = iota
	Close
	Answer // bring the selected call's dialog to the front
)

// Update handles a key over n waiting calls.
func (q Model) Update(msg tea.Msg, n int) (Model, Action, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return q, None, nil
	}
	act := None
	q.SetRows(n, nil)
	switch {
	case key.Matches(k, q.keys.Close):
		act = Close
	case q.Model.Update(k):
	case key.Matches(k, q.keys.Open) && n > 0:
		act = Answer
	}
	q.SetCount(n)
	return q, act, nil
}

// SetCount keeps the cursor within n waiting calls and enables the keys that
// move it.
func (q *Model) SetCount(n int) {
	q.Cursor = min(max(q.Cursor, 0), max(n-1, 0))
	q.keys.Up.SetEnabled(q.Cursor > 0)
	q.keys.Down.SetEnabled(q.Cursor < n-1)
	q.keys.Open.SetEnabled(n > 0)
	q.Keys.Up, q.Keys.Down = q.keys.Up, q.keys.Down
}

// Order sorts waiting calls oldest first (then by ID, which increases).
func Order(ps []*model.Pending) []*model.Pending {
	out := slices.Clone(ps)
	slices.SortStableFunc(out, func(a, b *model.Pending) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

// KeyMap is the queue's keys, for the footer.
func (q Model) KeyMap() help.KeyMap { return q.keys }

// View renders the queue box over the pending calls at time now.
func (q Model) View(items []*model.Pending, now time.Time, h help.Model) string {
	st := q.St
	w := min(q.width, 100)
	iw, _ := common.PaneInner(w, 3)
	lines := []string{
		st.Title.Render(common.Fit("Approval queue · "+strconv.Itoa(len(items))+" waiting · oldest first", iw)),
	}
	toolW := 4
	for _, p := range items {
		toolW = max(toolW, len(p.Tool.Ref.Qualified()))
	}
	toolW = min(toolW, 32)
	lines = append(lines, st.Muted.Render(common.Fit("  "+common.Fit("age", queueAgeW)+common.Fit("who (agent · context)", queueWhoW)+common.Fit("tool", toolW)+" tier", iw)))
	room := max(q.height-2-len(lines)-2, 1)
	start := 0
	if q.Cursor >= room {
		start = q.Cursor - room + 1
	}
	for i := start; i < len(items) && i < start+room; i++ {
		lines = append(lines, q.row(items[i], i == q.Cursor, now, iw, toolW))
	}
	if len(items) == 0 {
		lines = append(lines, st.Muted.Render("  nothing waits"))
	}
	if hidden := len(items) - min(len(items), start+room); hidden > 0 {
		lines = append(lines, st.Muted.Render("  ↓ "+strconv.Itoa(hidden)+" more"))
	}
	lines = append(lines, "", common.HelpLine(h, q.keys.ShortHelp(), iw))
	return common.PaneBox(st, true, w, len(lines)+2, lines)
}

// row is one waiting call: age, who (agent client · context, or you), the tool
// with its tier, and when it is denied unless answered. The client name and the
// context come from the agent and are escaped.
func (q Model) row(p *model.Pending, selected bool, now time.Time, w, toolW int) string {
	st := q.St
	who := "you"
	if c := p.Request.Client; c != "" {
		ctx := p.Request.Context
		if ctx == "" {
			ctx = model.PersonContext
		}
		who = common.Inline(st, c, 14) + " · " + common.Inline(st, ctx, 14)
	}
	tier := theme.TierLabel(p.Tool.Class.Tier)
	if p.Verdict.By == trust.DecidedByTaint {
		tier += " ⚠ tainted"
	}
	left := ""
	if !p.Deadline.IsZero() {
		left = "  denied in " + shortAge(p.Deadline.Sub(now))
	}
	text := common.Fit(shortAge(now.Sub(p.Created)), queueAgeW) + common.Fit(who, queueWhoW-1) + " " +
		common.Fit(common.Inline(st, p.Tool.Ref.Qualified(), toolW), toolW) + " " + tier + left
	if selected {
		return st.Selected.Render(common.Fit("▸ "+ansi.Strip(text), w))
	}
	return common.Fit("  "+text, w)
}

// The queue's column widths.
const (
	queueAgeW = 6
	queueWhoW = 32
)

// shortAge is a duration in at most two units: "12s", "3m04s", "1h02m".
func shortAge(d time.Duration) string {
	d = max(d, 0).Truncate(time.Second)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		s := int(d.Seconds())
		return strconv.Itoa(s/60) + "m" + pad2(s%60) + "s"
	}
	m := int(d.Minutes())
	return strconv.Itoa(m/60) + "h" + pad2(m%60) + "m"
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// KeyMap holds the keys of the approval queue.
type KeyMap struct {
	Up    key.Binding
	Down  key.Binding
	Open  key.Binding
	Close key.Binding
}

// DefaultKeyMap returns the approval queue's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:    key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:  key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Open:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "answer this one")),
		Close: key.NewBinding(key.WithKeys("esc", "a"), key.WithHelp("esc", "back to the oldest")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Down, k.Open, k.Close} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down}, {k.Open, k.Close}}
}
