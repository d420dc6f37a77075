package ui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/dialog"
	"github.com/airlock-mcp/airlock/ui/form"
	"github.com/airlock-mcp/airlock/ui/question"
	"github.com/airlock-mcp/airlock/ui/screens/activity"
	"github.com/airlock-mcp/airlock/ui/screens/call"
	"github.com/airlock-mcp/airlock/ui/screens/channels"
	"github.com/airlock-mcp/airlock/ui/screens/detail"
	"github.com/airlock-mcp/airlock/ui/screens/export"
	"github.com/airlock-mcp/airlock/ui/screens/grants"
	"github.com/airlock-mcp/airlock/ui/screens/hazards"
	"github.com/airlock-mcp/airlock/ui/screens/helpview"
	"github.com/airlock-mcp/airlock/ui/screens/history"
	"github.com/airlock-mcp/airlock/ui/screens/logs"
	"github.com/airlock-mcp/airlock/ui/screens/output"
	"github.com/airlock-mcp/airlock/ui/screens/panes"
	"github.com/airlock-mcp/airlock/ui/screens/queue"
	"github.com/airlock-mcp/airlock/ui/screens/result"
	"github.com/airlock-mcp/airlock/ui/screens/rules"
	"github.com/airlock-mcp/airlock/ui/screens/serverinfo"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// View renders the whole screen in the alternate screen: title, risk banner, body,
// status line and help footer, with the topmost modal drawn over them.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.ReportFocus = true // regaining focus re-arms an open question
	v.WindowTitle = "airlock"
	return v
}

// render is View's content, a string for tests and benchmarks.
func (m *Model) render() string {
	l := m.layout
	var sb strings.Builder
	sb.Grow(l.width * l.height * 3)
	sb.WriteString(m.titleLine())
	sb.WriteByte('\n')
	for i := 0; i < l.bannerH; i++ {
		if i < len(m.banner) {
			sb.WriteString(common.Fit(m.banner[i], l.width))
		} else {
			sb.WriteString(strings.Repeat(" ", l.width))
		}
		sb.WriteByte('\n')
	}
	sb.WriteString(m.bodyView())
	sb.WriteByte('\n')
	if l.stripH > 0 {
		sb.WriteString(common.Fit(m.acts.StripLine(m.St, l.width), l.width))
		sb.WriteByte('\n')
	}
	sb.WriteString(m.statusLine())
	sb.WriteByte('\n')
	var caption []string
	switch {
	case m.tourQuestionOpen():
		// The tour's own question: the caption's rule takes the footer's row
		// (the dialog carries its own keys) and its text the rows below, so the
		// step's words stay beside the question they are about.
		caption = m.captionLines(l.width)
		sb.WriteString(common.Fit(caption[0], l.width))
		caption = caption[1:]
	case m.tour.on && m.modalOpen():
		// Any other modal carries its own keys: the tour's one-line caption takes
		// the footer's row, so that the modal keeps all of its room.
		sb.WriteString(common.Fit(m.captionLines(l.width)[0], l.width))
	default:
		sb.WriteString(common.Fit(m.footerLine(), l.width))
		if l.captionH > 0 {
			caption = m.captionLines(l.width)
		}
	}
	for i := range l.captionH {
		sb.WriteByte('\n')
		if i < len(caption) {
			sb.WriteString(common.Fit(caption[i], l.width))
		} else {
			sb.WriteString(strings.Repeat(" ", l.width))
		}
	}
	base := sb.String()
	if modal := m.modalView(); modal != "" {
		// Centred in the rows above the caption.
		return overlay(base, modal, l.width, l.height-l.captionH)
	}
	return base
}

// bodyView renders the screen under any modal.
func (m *Model) bodyView() string {
	s := m.screen
	if s == screenForm {
		s = m.under()
	}
	if r := m.registered(s); r != nil {
		return r.View()
	}
	switch s {
	}
	return joinColumns(m.servers.View(), m.tools.View())
}

// joinColumns puts two blocks of equal height side by side, line by line.
func joinColumns(left, right string) string {
	ls, rs := strings.Split(left, "\n"), strings.Split(right, "\n")
	var sb strings.Builder
	sb.Grow(len(left) + len(right) + 8)
	for i := range max(len(ls), len(rs)) {
		if i > 0 {
			sb.WriteByte('\n')
		}
		if i < len(ls) {
			sb.WriteString(ls[i])
		}
		if i < len(rs) {
			sb.WriteString(rs[i])
		}
	}
	return sb.String()
}

// modalView renders the topmost modal, or "" when none is open.
func (m *Model) modalView() string {
	switch {
	case m.queue.Open:
		return m.queue.View(m.queueItems(), m.now(), m.help)
	case m.q.Open():
		return m.q.View()
	case m.overlay.Open:
		return m.overlay.View()
	case m.screen == screenForm:
		return m.form.View()
	}
	return ""
}

// overlay draws a modal centred over the base screen.
func overlay(base, modal string, width, height int) string {
	mw, mh := lipgloss.Size(modal)
	x, y := max((width-mw)/2, 0), max((height-mh)/2, 0)
	return lipgloss.NewCompositor(
		lipgloss.NewLayer(base),
		lipgloss.NewLayer(modal).X(x).Y(y).Z(1),
	).Render()
}

// titleLine names airlock and the session and counts servers and tools.
func (m *Model) titleLine() string {
	st := m.St
	title := st.Title.Render("airlock")
	if m.opts.Title != "" {
		title += st.Muted.Render(" · " + common.Inline(st, m.opts.Title, 40))
	}
	ready, failed := 0, 0
	for _, s := range m.snap.Servers {
		switch s.Status {
		case model.StatusReady:
			ready++
		case model.StatusFailed:
			failed++
		}
	}
	counts := strconv.Itoa(ready) + "/" + strconv.Itoa(len(m.snap.Servers)) + " servers ready · " +
		strconv.Itoa(len(m.snap.Tools)) + " tools"
	if failed > 0 {
		counts += " · " + st.ErrorText.Render("✗ "+strconv.Itoa(failed)+" failed")
	}
	if c := m.connecting(); c > 0 {
		counts += " · " + strconv.Itoa(c) + " connecting"
	}
	line := title + "  " + counts
	if m.opts.GatewayURL != "" {
		gw := st.OKText.Render("⇄ gateway ") + common.Inline(st, m.opts.GatewayURL, 60)
		if common.CellWidth(line)+3+common.CellWidth(gw) > m.layout.width {
			// The gateway's address matters more than the counts' words.
			counts = strings.Replace(counts, " servers ready", " ready", 1)
			line = title + "  " + counts
		}
		if over := common.CellWidth(line) + 3 + common.CellWidth(gw) - m.layout.width; over > 0 && m.opts.Title != "" {
			// ...and more than the session's title: the address is never cut
			// while the title can give way (it is in the window title too).
			room := common.CellWidth(common.Inline(st, m.opts.Title, 40)) - over
			title = st.Title.Render("airlock")
			if room >= 4 {
				title += st.Muted.Render(" · " + common.CutMiddle(common.PlainInline(m.opts.Title), room))
			}
			line = title + "  " + counts
		}
		if common.CellWidth(line)+3+common.CellWidth(gw) > m.layout.width {
			gw = st.OKText.Render("⇄ ") + common.Inline(st, m.opts.GatewayURL, 60)
		}
		line += st.Muted.Render(" · ") + gw
	}
	return common.Fit(line, m.layout.width)
}

func (m *Model) connecting() int {
	n := 0
	for _, s := range m.snap.Servers {
		if s.Status == model.StatusConnecting {
			n++
		}
	}
	return n
}

// approvalNeeded begins the status message of a question that arrived.
const approvalNeeded = "⚑ approval needed: "

// statusLine shows the taint of the person's context (naming the call that tainted
// it), the approvals that wait, and the last thing that happened.
func (m *Model) statusLine() string {
	st := m.St
	var parts []string
	if a := m.auditStatus(); a != "" {
		// First: while it lasts nothing runs, whatever the rest says.
		parts = append(parts, a)
	}
	held := strings.HasPrefix(m.status, heldLead)
	if held {
		// The answer to the key just pressed: nothing changed, and why. It leads,
		// so that a narrow screen still says it.
		parts = append(parts, st.StatusBar.Render(m.status))
	}
	if c := m.clearingLine(); c != "" {
		// Under way at the person's word: it leads, so that the taint it is
		// about to lift is not read as the answer.
		parts = append(parts, st.StatusBar.Render(c))
	}
	// The hint offers C on the person's own taint unless its clear is under way.
	clearHint := st.Muted.Render(" (w, C: clear)")
	if m.clearing[model.PersonContext] > 0 {
		clearHint = ""
	}
	// The taint's banner is parts[banner], and bannerForms its forms from the
	// widest: when the line is too wide, the call's id and then the keys give way
	// before anything after the banner is cut (both are in the w view, the keys in
	// the help too).
	banner, bannerForms := -1, []string(nil)
	bannered := func(style lipgloss.Style, text, call string) {
		banner = len(parts)
		bannerForms = []string{style.Render(text+call) + clearHint}
		if call != "" {
			bannerForms = append(bannerForms, style.Render(text)+clearHint)
		}
		if clearHint != "" {
			bannerForms = append(bannerForms, style.Render(text)+st.Muted.Render(" (w)"), style.Render(text))
		}
		parts = append(parts, bannerForms[0])
	}
	if m.taint.Channel == trust.ChannelUnreadable {
		// No server tainted it: airlock cannot read what is tainted, so everything is.
		bannered(st.ErrorText, "✖ "+approval.TaintFile+" unreadable: every context treated as tainted", "")
	} else if m.taint.Tainted() {
		t := "⚠ TAINTED by " + common.Inline(st, m.taint.By.Qualified(), 40)
		if m.taint.Subject != "" {
			// A resource or a prompt: name what it was, not the channel.
			t = "⚠ TAINTED by " + common.Inline(st, m.taint.By.Server, 24) + " " + common.Inline(st, m.taint.Channel, 12) + " " + common.Inline(st, m.taint.Subject, 32)
		}
		call := ""
		if m.taint.CallID != "" {
			call = " (call " + common.Inline(st, m.taint.CallID, 12) + ")"
		}
		bannered(st.WarnText, t, call)
	} else {
		parts = append(parts, st.OKText.Render("● context clean"))
	}
	if m.taintProblem != nil && m.taint.Channel != trust.ChannelUnreadable {
		// The person cleared their own context; the agents' are still tainted.
		parts = append(parts, st.ErrorText.Render("✖ "+approval.TaintFile+" unreadable: other contexts treated as tainted"))
	}
	if m.rulesProblem != nil {
		parts = append(parts, st.ErrorText.Render("✖ "+approval.RulesFile+" unreadable: remembered rules' tools ask")+st.Muted.Render(" (K: rules)"))
	}
	if m.ratesProblem != nil {
		parts = append(parts, st.ErrorText.Render("✖ "+approval.RatesFile+" unusable: calls under a rate limit ask"))
	}
	asking := len(parts)
	if badge := m.q.Badge(); badge != "" && !m.q.Open() {
		// Questions that wait unseen (the person was typing): the badge says
		// how to open them.
		parts = append(parts, st.WarnText.Render(badge))
	} else if n := m.waiting(); n > 1 {
		w := st.WarnText.Render("⚑ " + strconv.Itoa(n) + " approvals waiting")
		if m.q.KeysFree() {
			w += st.Muted.Render(" (a: queue)") // a opens the queue only then
		}
		parts = append(parts, w)
	} else if n == 1 {
		parts = append(parts, st.WarnText.Render("⚑ 1 approval waiting"))
	}
	asked := len(parts) > asking
	if n := hazards.OverrideCount(m.over); n > 0 {
		parts = append(parts, st.WarnText.Render(unsavedText(n)))
	}
	if n := m.q.Count(question.KindElicitation) + m.q.Count(question.KindSampling); n > 0 {
		parts = append(parts, st.WarnText.Render("✎ "+strconv.Itoa(n)+" request"+common.Plural(n)+" for input"))
	}
	if m.status != "" && !held && !(asked && strings.HasPrefix(m.status, approvalNeeded)) {
		// "approval needed" is said by the waiting count or the badge (and the
		// dialog names the call); Activity keeps it.
		parts = append(parts, st.StatusBar.Render(m.status))
	}
	sep := st.Muted.Render(" · ")
	line := strings.Join(parts, sep)
	for i := 1; i < len(bannerForms) && common.CellWidth(line) > m.layout.width; i++ {
		parts[banner] = bannerForms[i]
		line = strings.Join(parts, sep)
	}
	if w := m.layout.width; common.CellWidth(line) > w {
		// Never cut silently: the whole message is in Activity.
		hint := st.Muted.Render(" (v: all of it)")
		return common.Fit(ansi.Truncate(line, max(w-common.CellWidth(hint), 1), common.Ellipsis)+hint, w)
	}
	return common.Fit(line, m.layout.width)
}

// footerLine is the one-line help of whatever has focus now.
func (m *Model) footerLine() string {
	global := []key.Binding{m.keys.Help, m.keys.Quit}
	switch {
	case m.queue.Open:
		return footerView(m.help, m.queue.KeyMap(), []key.Binding{m.keys.Interrupt})
	case m.q.Open():
		if n := m.q.Waiting(); n > 0 {
			note := m.St.WarnText.Render("⚑ "+strconv.Itoa(n)+" more waiting after this one") + "  "
			short := m.q.KeyMap().ShortHelp()
			if m.q.KeysFree() && m.q.Count(question.KindApproval) > 0 {
				queue := m.keys.Queue
				queue.SetHelp("a", "queue")
				short = append([]key.Binding{queue}, short...)
			}
			return note + footerView(m.help, common.KeyMapFunc{Short: short}, []key.Binding{m.keys.Interrupt})
		}
		return footerView(m.help, m.q.KeyMap(), []key.Binding{m.keys.Interrupt})
	case m.overlay.Open:
		return footerView(m.help, m.overlay.Keys, nil)
	case m.screen == screenForm:
		return footerView(m.help, m.form.KeyMap(), []key.Binding{m.keys.Interrupt})
	case m.screen == screenRoots && m.roots.Typing():
		// The path field takes every key: the global keys are off.
		return footerView(m.help, m.roots.KeyMap(), []key.Binding{m.keys.Interrupt})
	}
	if r, ok := registry[m.screen]; ok {
		return footerView(m.help, r.get(m).KeyMap(), r.footer.keys(m, global))
	}
	switch m.screen {
	}
	hazards := m.keys.Hazards
	hazards.SetHelp("z", "hazards")
	if m.focus == paneServers {
		return footerView(m.help, m.servers.Keys, append([]key.Binding{hazards}, append(global, m.keys.Demo)...))
	}
	if m.tools.Typing {
		return footerView(m.help, m.tools.KeyMap(), []key.Binding{m.keys.Interrupt})
	}
	return footerView(m.help, m.tools.KeyMap(), append([]key.Binding{hazards}, append(global, m.keys.Demo)...))
}

// helpSections lists every context's keys for the help overlay, from fresh key
// maps so that the overlay is a complete reference whatever the state.
func (m *Model) helpSections() []helpview.Section {
	global := DefaultGlobalKeyMap()
	if m.opts.Demo == nil {
		global.Demo.Unbind()
	}
	confirm := dialog.DefaultKeyMap()
	for _, b := range []*key.Binding{&confirm.Next, &confirm.Prev, &confirm.Activate,
		&confirm.Deny, &confirm.Cancel, &confirm.Up, &confirm.Down, &confirm.PageUp,
		&confirm.PageDown, &confirm.Top, &confirm.End, &confirm.Confirm, &confirm.Disarm, &confirm.SendReason, &confirm.SaveRule, &confirm.Back} {
		b.SetEnabled(true)
	}
	// The dialog's own help says these in the state they work in; a reference
	// lists every state's keys at once, so each says when it works.
	confirm.Down.SetHelp("↓", "scroll down")
	confirm.Confirm.SetHelp("ctrl+y", "after enter on an allow button: allow")
	confirm.Disarm.SetHelp("other keys", "while ctrl+y is asked: go back, focus on Deny")
	confirm.SendReason.SetHelp("enter", "in the reason field (d): deny with this reason")
	confirm.SaveRule.SetHelp("enter", "in the rule editor of Always allow or Always deny: save the rule")
	confirm.Back.SetHelp("esc", "in the reason field or the rule editor: back to the buttons")
	calls := form.DefaultKeyMap()
	elicit := form.DefaultKeyMap()
	elicit.Submit.SetHelp("ctrl+s", "accept")
	elicit.Decline.SetEnabled(true)
	var sections []helpview.Section
	if m.opts.GatewayURL != "" {
		st := m.St
		iw, _ := common.PaneInner(m.layout.modalW, m.layout.modalH)
		label := func(s string) string { return "  " + st.Key.Render(common.Fit(s, 10)) + " " }
		indent := strings.Repeat(" ", 13)
		lines := common.WrapOwn(common.Inline(st, m.opts.GatewayURL, 0)+st.Muted.Render(" (streamable HTTP, bearer token)"), iw, label("endpoint"), indent)
		if m.opts.GatewayHint != "" {
			lines = append(lines, label("config")+"this prints the block to paste into the agent's config:")
			lines = append(lines, common.WrapOwn(common.Inline(st, m.opts.GatewayHint, 0), iw, "    ", "      ")...)
		}
		lines = append(lines, common.WrapOwn("every call the agent makes goes through airlock; a call that asks shows its dialog here, and a lists them when several wait", iw, label("then"), indent)...)
		sections = append(sections, helpview.Section{Title: "Connect an agent", Lines: lines})
	}
	if m.opts.Tour {
		sections = append(sections, helpview.Section{Title: "Guided tour", Keys: DefaultTourKeyMap()})
	}
	return append(sections, []helpview.Section{
		{Title: "Everywhere", Keys: global},
		{Title: "Servers pane", Keys: panes.DefaultServersKeyMap()},
		{Title: "Tools pane", Keys: panes.DefaultToolsKeyMap()},
		{Title: "Typing a filter", Keys: panes.DefaultFilterKeyMap()},
		{Title: "Tool details", Keys: detail.DefaultKeyMap()},
		{Title: "Server info (i)", Keys: serverinfo.DefaultKeyMap()},
		{Title: "A server's resources (i, then r)", Keys: channels.DefaultResourcesKeyMap()},
		{Title: "A server's prompts (i, then p)", Keys: channels.DefaultPromptsKeyMap()},
		{Title: "A server's roots (i, then f)", Keys: serverinfo.DefaultRootsKeyMap()},
		{Title: "A read resource or a got prompt", Keys: output.DefaultKeyMap()},
		{Title: "Hazards view (z)", Keys: hazards.DefaultKeyMap()},
		{Title: "Exported changes (E)", Keys: export.DefaultKeyMap()},
		{Title: "Grants & taint (w)", Keys: grants.DefaultKeyMap()},
		{Title: "Rules (K)", Keys: rules.DefaultKeyMap()},
		{Title: "A running call", Keys: call.DefaultKeyMap()},
		{Title: "Results", Keys: result.DefaultKeyMap()},
		{Title: "Logs", Keys: logs.DefaultKeyMap()},
		{Title: "Protocol history (H)", Keys: history.DefaultKeyMap()},
		{Title: "Activity (v)", Keys: activity.DefaultKeyMap()},
		{Title: "Call form", Keys: calls},
		{Title: "Approval dialog", Keys: confirm},
		{Title: "Approval queue (a)", Keys: queue.DefaultKeyMap()},
		{Title: "A server's request for input", Keys: elicit},
		{Title: "Quit question", Keys: question.QuitKeyMap()},
		{Title: "Accepting a changed definition", Keys: question.AcceptKeyMap()},
		{Title: "Clearing a context's taint", Keys: question.ClearTaintKeyMap()},
		{Title: "This help", Keys: helpview.DefaultKeyMap()},
	}...)
}

var _ help.KeyMap = common.KeyMapFunc{}

// helpStyles builds the help bubble's styles from the theme, so NO_COLOR and the
// background apply to it too.
func helpStyles(st *theme.Styles) help.Styles {
	return help.Styles{
		Ellipsis:       st.Help,
		ShortKey:       st.HelpKey,
		ShortDesc:      st.Help,
		ShortSeparator: st.Muted,
		FullKey:        st.HelpKey,
		FullDesc:       st.Help,
		FullSeparator:  st.Muted,
	}
}

// footerView is the one-line help: the bindings of what has focus now, then the
// global ones. Disabled bindings are left out, so the footer is always true. When
// the line is too wide, whole bindings go from the end: bubbles' help adds an item
// that overflows when its ellipsis does not fit either, and the line was then cut
// mid-word ("q qui…").
func footerView(h help.Model, now help.KeyMap, global []key.Binding) string {
	all := append(append([]key.Binding(nil), now.ShortHelp()...), global...)
	for n := len(all); ; n-- {
		out := h.ShortHelpView(all[:n])
		if h.Width() <= 0 || n <= 1 || lipgloss.Width(out) <= h.Width() {
			return out
		}
	}
}
