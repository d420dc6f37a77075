package question

import (
	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/dialog"
	"github.com/airlock-mcp/airlock/ui/form"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// item is one question in the queue; each kind of question implements it. Items
// are values: a method that changes one returns the changed copy, so that an
// Overlay copied before a change keeps its own questions (Update works on a copy).
// The guard (Overlay) decides when a question may take an answer; an item only
// says what a key does once it may.
type item interface {
	kind() Kind
	// sized lays the question out for the space it may take.
	sized(w, h int) item
	// update takes a message; armed says the guard lets keys answer.
	update(st theme.Styles, msg tea.Msg, armed bool) (item, Outcome, tea.Cmd)
	// typing says the question takes text now.
	typing() bool
	// holdsKeys says a key taken by someone else would be missed: an allow or a
	// second button waits for its chord.
	holdsKeys() bool
	view(st theme.Styles, h help.Model, w int, arming bool) string
	keyMap() help.KeyMap
	// waits is what the badge calls the question while it waits ("approval",
	// "request" for input), "" for a question the person asked for.
	waits() string
}

// armer is an item that shows the guard's state itself: arming(true) is the
// question shown afresh (disarmed, focus on its safe answer), arming(false) the
// question once the guard arms it.
type armer interface {
	arming(on bool) item
}

// approval asks to allow or deny a pending call.
type approval struct{ confirm dialog.Confirm }

func newApproval(p *model.Pending, st theme.Styles, rules dialog.RuleWriter) approval {
	return approval{confirm: dialog.NewConfirm(p, st, rules)}
}

func (approval) kind() Kind { return KindApproval }
func (a approval) sized(w, h int) item {
	a.confirm.SetSize(w, h)
	return a
}
func (a approval) arming(on bool) item {
	a.confirm.SetArming(on)
	return a
}
func (a approval) update(_ theme.Styles, msg tea.Msg, _ bool) (item, Outcome, tea.Cmd) {
	var act dialog.Action
	var cmd tea.Cmd
	a.confirm, act, cmd = a.confirm.Update(msg)
	if act != nil {
		return a, Approved{Action: act, Pending: a.confirm.Pending()}, cmd
	}
	return a, nil, cmd
}
func (a approval) typing() bool    { return a.confirm.TypingReason() }
func (a approval) holdsKeys() bool { return a.confirm.Armed() }

// view: the dialog says it is arming itself.
func (a approval) view(theme.Styles, help.Model, int, bool) string { return a.confirm.View() }
func (a approval) keyMap() help.KeyMap                             { return a.confirm.KeyMap() }
func (approval) waits() string                                     { return "approval" }

// elicitation is a server's request for input, in a form.
type elicitation struct {
	e    *model.Elicitation
	form form.Form
}

// newElicitation shows the server's trust first.
func newElicitation(e *model.Elicitation, t trust.ServerTrust, st theme.Styles) elicitation {
	f := form.NewElicitation(e, st)
	f.SetServerTrust(t)
	return elicitation{e: e, form: f}
}

func (elicitation) kind() Kind { return KindElicitation }
func (e elicitation) sized(w, h int) item {
	e.form.SetSize(w, h)
	return e
}
func (e elicitation) update(_ theme.Styles, msg tea.Msg, _ bool) (item, Outcome, tea.Cmd) {
	var act form.Action
	var cmd tea.Cmd
	e.form, act, cmd = e.form.Update(msg)
	var out Outcome
	switch a := act.(type) {
	case form.Accept:
		out = Elicited{Elicitation: e.e, Action: "accept", Content: a.Content}
	case form.Decline:
		out = Elicited{Elicitation: e.e, Action: "decline"}
	case form.Cancel:
		out = Elicited{Elicitation: e.e, Action: "cancel"}
	}
	return e, out, cmd
}
func (elicitation) typing() bool    { return true }
func (elicitation) holdsKeys() bool { return false }
func (e elicitation) view(st theme.Styles, _ help.Model, _ int, arming bool) string {
	v := e.form.View()
	if arming {
		v = st.WarnText.Render("⏳ "+ArmingText) + "\n" + v
	}
	return v
}
func (e elicitation) keyMap() help.KeyMap { return e.form.KeyMap() }
func (elicitation) waits() string         { return "request" }

// samplingItem is a server's request for an LLM completion (sampling.go).
type samplingItem struct{ s sampling }

func (samplingItem) kind() Kind { return KindSampling }
func (q samplingItem) sized(w, h int) item {
	q.s.setSize(w, h)
	return q
}
func (q samplingItem) update(st theme.Styles, msg tea.Msg, armed bool) (item, Outcome, tea.Cmd) {
	var out Outcome
	var cmd tea.Cmd
	q.s, out, cmd = q.s.update(st, msg, armed)
	return q, out, cmd
}
func (samplingItem) typing() bool    { return true }
func (samplingItem) holdsKeys() bool { return false }
func (q samplingItem) view(st theme.Styles, h help.Model, _ int, arming bool) string {
	return q.s.view(st, h, arming)
}
func (q samplingItem) keyMap() help.KeyMap { return q.s.keys }
func (samplingItem) waits() string         { return "request" }

// twoButton is a two-button question of airlock's own (choice.go); what it asks
// about says its kind and the answer a pressed button gives.
type twoButton struct {
	choice
	about
}

// about is what a two-button question asks: each kind answers in its own type.
type about interface {
	kind() Kind
	answer(second bool) Outcome
}

// quitting asks whether to quit airlock.
type quitting struct{}

func (quitting) kind() Kind                 { return KindQuit }
func (quitting) answer(second bool) Outcome { return QuitAnswer{Quit: second} }

// accepting asks whether ref's changed definition, shown with fingerprint fp, is
// accepted.
type accepting struct {
	ref trust.Ref
	fp  string
}

func (accepting) kind() Kind { return KindAccept }
func (a accepting) answer(second bool) Outcome {
	return AcceptAnswer{Ref: a.ref, Fingerprint: a.fp, Accept: second}
}

// clearing asks whether the taint shown of context ctx is cleared.
type clearing struct {
	ctx   string
	taint trust.Taint
}

func (clearing) kind() Kind { return KindClearTaint }
func (c clearing) answer(second bool) Outcome {
	return ClearTaintAnswer{Context: c.ctx, Taint: c.taint, Clear: second}
}

// choosing is a question asked with AskChoice; tag is the asker's.
type choosing struct{ tag string }

func (choosing) kind() Kind                   { return KindChoice }
func (c choosing) answer(second bool) Outcome { return Chose{Tag: c.tag, Second: second} }

func (t twoButton) sized(int, int) item { return t }
func (t twoButton) arming(on bool) item {
	if on {
		t.choice.reset()
	}
	return t
}
func (t twoButton) update(_ theme.Styles, msg tea.Msg, armed bool) (item, Outcome, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && armed {
		if b := t.choice.key(k); b >= 0 {
			return t, t.answer(b == 1), nil
		}
	}
	return t, nil, nil
}
func (twoButton) typing() bool      { return false }
func (t twoButton) holdsKeys() bool { return t.waiting }
func (t twoButton) view(st theme.Styles, h help.Model, w int, arming bool) string {
	return t.choice.view(st, h, w, arming)
}
func (t twoButton) keyMap() help.KeyMap { return t.keys }
func (twoButton) waits() string         { return "" }
