package dialog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/dialog/wrap"
	"github.com/airlock-mcp/airlock/ui/safetext"
	"github.com/airlock-mcp/airlock/ui/theme"
)

const (
	// MaxWidth is the widest the Confirm dialog draws itself, frame included;
	// wider terminals get a centred dialog of this width from the root.
	MaxWidth = 110

	// maxArgBytes is the size of one part of the pretty-printed arguments
	// that is laid out at a time; longer arguments are shown part by part
	// (scrolling past the end of a part shows the next one, end jumps to the
	// last byte), so every byte can be viewed and none is laid out twice.
	maxArgBytes = 64 << 10
	// maxReasonBytes bounds one reason sentence (they can embed names).
	maxReasonBytes = 4 << 10
	// maxNameBytes bounds a server, tool or client name as shown.
	maxNameBytes = 1 << 10
	// labelWidth is the width of the labels in the facts column.
	labelWidth = 8
)

// The buttons, in focus order. Focus starts on Deny: nothing is allowed by a
// key press that was meant for something else. "Always allow…" and "Always
// deny…" open the rule editor (the proposed rule, editable); the last button is
// a deny, so → pressed past the allows lands on a deny.
const (
	buttonDeny = iota
	buttonOnce
	buttonContext
	buttonAlwaysAllow
	buttonAlwaysDeny
	buttonCount
)

var buttonLabels = [buttonCount]string{"Deny", "Allow once", "Allow for this context", "Always allow…", "Always deny…"}

// Confirm is the dialog that asks the person to allow or deny one pending
// call. It shows the server (with its trust), the tool, the agent client and
// context, the tier, a "claims read-only" line for an untrusted server's
// read-only claim, declared and effective hints, legs, taint, every reason,
// and the full arguments, escaped, in a gutter and scrollable.
//
// Confirm is a pure value: Update returns the new dialog and, once the
// person decided, an Action (AllowCall or DenyCall) for the root to carry
// out. No key the screens behind the dialog use allows, in any order: focus
// starts on Deny and moves only with → and ← (never tab), and pressing an allow
// button with Enter then asks for the Confirm chord (ctrl+y); any other key goes
// back to Deny.
// While SetArming(true) (the root's input guard, package ui/question) the
// dialog answers nothing and says so; scrolling still works.
type Confirm struct {
	p          *model.Pending
	st         theme.Styles
	rules      RuleWriter // proposes, formats, reads back and checks remembered rules
	keys       KeyMap
	help       help.Model
	reason     textinput.Model
	vp         viewport.Model
	state      state
	focus      int
	armedScope model.Answer
	// armedRule is the "Always allow" rule saved with the allow that waits for
	// Confirm, nil for Allow once and Allow for this context.
	armedRule   *model.RuleProposal
	destructive bool
	arming      bool
	// heldNote is why the last answer broader than this one call was refused
	// (the team policy holds the call), "" until one was.
	heldNote string

	// btns are the buttons offered, in focus order (focus indexes it): "Allow for
	// this context" and "Always allow…" never for a destructive tool, and "Always
	// allow…" only where a remembered allow rule could apply (not a call that asks
	// because of taint or of an ask rule).
	btns []int
	// The rule editor: the proposal for these arguments, its conditions as
	// editable text, the policy it saves with, and why the last edit was refused.
	proposal   model.RuleProposal
	ruleIn     textinput.Model
	rulePolicy trust.Action
	ruleErr    string
	// ruleArgs are the arguments decoded once for the editor; scope is what the
	// conditions as typed let through (ruleScope), for the text scopeFor at the
	// width scopeW, computed when either changes rather than at every frame.
	ruleArgs any
	scope    []string
	scopeFor string
	scopeW   int

	// argText is the whole pretty-printed argument text; argParts the byte
	// offsets where its parts of at most maxArgBytes start; argPart the
	// part shown.
	argText  string
	argNote  string
	argParts []int
	argPart  int
	// whyOpen says the reasons are unfolded below the arguments.
	whyOpen bool
	// revealed says the secrets found in the arguments are shown as they are
	// (Reveal); they start masked.
	revealed bool

	width, height int // the space given by SetSize
	dw, iw, ih    int // dialog width, inner width, inner height
	title         []string
	head          []string // lines between the title and the scroll region
	layoutMode    int      // which parts scroll; see layoutArgs
	bottomStatus  int      // lines reserved for the status message
}

// RuleWriter is what the dialog needs to write a remembered rule with the person:
// the tightest rule that covers a call's arguments, its conditions as the one line
// of TOML the person edits and read back, and the check a rule passes before it is
// saved. The approval engine's approval.Rules is the RuleWriter: proposing resolves the
// call's paths on this machine and checking compiles the rule as the engine does,
// so that what the dialog saves is exactly what the engine will match.
type RuleWriter interface {
	// Propose is the tightest rule that covers args for tool.
	Propose(tool model.ToolInfo, args []byte) model.RuleProposal
	// Check refuses a rule that would not compile, could never match tool's schema,
	// or always allows a destructive tool.
	Check(p model.RuleProposal, policy trust.Action, tool model.ToolInfo) error
	// FormatWhen is the conditions as one TOML inline table; ParseWhen reads the
	// person's edit of it back, refusing anything else with the reason.
	FormatWhen(when map[string]map[string]any) string
	ParseWhen(text string) (map[string]map[string]any, error)
}

// NewConfirm builds the dialog for p, which must not be nil, laid out for an
// 80x24 terminal until SetSize says otherwise. Focus starts on Deny. rules writes
// the remembered rules the person makes from it; it must not be nil (a rule saved
// without the engine's checks must never be).
func NewConfirm(p *model.Pending, st theme.Styles, rules RuleWriter) Confirm {
	if rules == nil {
		panic("dialog: NewConfirm without a RuleWriter")
	}
	ti := textinput.New()
	ti.Prompt = ""
	ti.Placeholder = "why (optional)"
	ti.CharLimit = 500
	tis := textinput.DefaultStyles(st.Dark)
	tis.Focused.Placeholder = st.Muted
	tis.Blurred.Placeholder = st.Muted
	ti.SetStyles(tis)

	h := help.New()
	h.Styles = help.Styles{
		ShortKey: st.HelpKey, ShortDesc: st.Help, ShortSeparator: st.Help, Ellipsis: st.Help,
		FullKey: st.HelpKey, FullDesc: st.Help, FullSeparator: st.Help,
	}

	vp := viewport.New()
	vp.KeyMap = viewport.KeyMap{} // scrolling goes through our own KeyMap
	vp.MouseWheelEnabled = true

	ri := textinput.New()
	ri.Prompt = ""
	ri.CharLimit = 64 << 10 // a long proposal is never cut (a cut one would not parse)
	ri.SetStyles(tis)

	c := Confirm{
		p:           p,
		st:          st,
		rules:       rules,
		keys:        DefaultKeyMap(),
		help:        h,
		reason:      ti,
		ruleIn:      ri,
		vp:          vp,
		focus:       buttonDeny,
		destructive: p.Tool.Class.Tier >= trust.TierDestructive,
	}
	c.btns = []int{buttonDeny, buttonOnce}
	if p.Held != "" {
		// The team policy holds the call: the engine turns a grant or an "always"
		// into a denial, so the dialog offers only this call's yes and no.
		c.setArgs()
		c.setState(stateChoosing)
		c.SetSize(80, 24)
		return c
	}
	if !c.destructive {
		// A destructive tool is never granted for a context (every call keeps its
		// question), so the dialog never offers what the engine would refuse.
		c.btns = append(c.btns, buttonContext)
	}
	if c.canAlwaysAllow() {
		c.btns = append(c.btns, buttonAlwaysAllow)
	}
	c.btns = append(c.btns, buttonAlwaysDeny)
	c.setArgs()
	c.setState(stateChoosing)
	c.SetSize(80, 24)
	return c
}

// setArgs lays out the arguments as shown: masked while the call holds secrets
// the person has not revealed.
func (c *Confirm) setArgs() {
	args := c.p.Request.Args
	if c.masked() {
		args = c.p.ArgsMasked
	}
	c.argText, c.argNote = argText(args)
	c.argParts = parts(c.argText, maxArgBytes)
	c.argPart = 0
}

// masked reports whether the arguments are shown with their secrets masked.
func (c Confirm) masked() bool { return len(c.p.Secrets) > 0 && len(c.p.ArgsMasked) > 0 && !c.revealed }

// toggleReveal shows the secrets as they are, or masks them again.
func (c *Confirm) toggleReveal() {
	c.revealed = !c.revealed
	c.setArgs()
	c.layout()
}

// ID is the pending call's ID, the one AllowCall and DenyCall carry.
func (c Confirm) ID() uint64 { return c.p.ID }

// Pending returns the call the dialog asks about.
func (c Confirm) Pending() *model.Pending { return c.p }

// KeyMap returns the bindings as they stand in the dialog's current state,
// for the root's help view.
func (c Confirm) KeyMap() KeyMap { return c.keys }

// Destructive reports whether the call is destructive (its dialog is framed and
// worded as such, and offers no grant for the context).
func (c Confirm) Destructive() bool { return c.destructive }

// Armed reports whether an allow waits for the Confirm key.
func (c Confirm) Armed() bool { return c.state == stateArmed }

// SetArming turns the input guard's display on or off: while arming, the dialog
// answers nothing, its buttons are dimmed and it says that keys are ignored.
// Turning it on also drops a half-made choice (the reason field, a destructive
// allow waiting for its chord) and puts focus back on Deny.
func (c *Confirm) SetArming(on bool) {
	if on == c.arming {
		return
	}
	c.arming = on
	if on {
		wasRule := c.state == stateRule
		c.focus = buttonDeny
		c.armedRule = nil
		c.reason.Blur()
		c.ruleIn.Blur()
		c.setState(stateArming)
		if wasRule {
			c.layout()
		}
		return
	}
	c.setState(stateChoosing)
}

// TypingReason reports whether the reason field or the rule editor takes text.
func (c Confirm) TypingReason() bool { return c.state == stateReason || c.state == stateRule }

// canAlwaysAllow reports whether a remembered allow rule could ever decide this
// call: never for a destructive tool (every destructive call keeps its question),
// nor where taint or an ask rule made it ask (rules never outrank safety, and an
// allow saved here would only pretend to cover it). A blocked tool or a changed
// pin is denied before anyone is asked, so it never reaches a dialog.
func (c Confirm) canAlwaysAllow() bool {
	p := c.p
	switch {
	case c.destructive, p.Tool.Class.Tier == trust.TierBlocked, p.Tool.Pin == trust.PinChanged:
		return false
	case p.Verdict.By == trust.DecidedByTaint || p.Taint.Tainted() && trust.EscalatedByTaint(p.Tool.Class):
		return false
	case len(p.Secrets) > 0:
		// An allow rule never covers a call whose arguments hold a secret.
		return false
	case p.Rule != nil && p.Rule.Policy != trust.Allow:
		return false
	}
	return true
}

// leaveSecretsOpen drops the proposal's condition on each argument the engine found
// a secret in (a value airlock knows, which the writer's own look for shapes cannot
// find), with a note: the editor would show it unmasked and the rule would write it
// into the rules file.
func leaveSecretsOpen(p model.RuleProposal, found []model.SecretFinding) model.RuleProposal {
	for _, f := range found {
		if _, ok := p.When[f.Path]; !ok {
			continue
		}
		p.When = maps.Clone(p.When)
		delete(p.When, f.Path)
		p.Notes = append(slices.Clip(p.Notes), f.Sentence+": left open, so that it is not written into rules.toml")
	}
	return p
}

// Held reports whether the team policy holds the call: only Allow once and Deny
// are offered, and nothing broader is ever answered.
func (c Confirm) Held() bool { return c.p.Held != "" }

// refuseHeld leaves the dialog choosing, saying why an answer broader than this
// one call does nothing for a call the policy holds.
func (c Confirm) refuseHeld() (Confirm, Action, tea.Cmd) {
	c.heldNote = "not offered: " + c.p.Held + "; allow once or deny"
	c.focus = buttonDeny
	c.armedRule = nil
	c.setState(stateChoosing)
	c.layout()
	return c, nil, nil
}

// OffersAlwaysAllow reports whether the dialog offers "Always allow…".
func (c Confirm) OffersAlwaysAllow() bool { return slices.Contains(c.btns, buttonAlwaysAllow) }

// OffersContextGrant reports whether the dialog offers "Allow for this context".
func (c Confirm) OffersContextGrant() bool { return slices.Contains(c.btns, buttonContext) }

// openRule opens the rule editor with the tightest rule that covers these
// arguments (model.RuleWriter.Propose) for policy.
func (c Confirm) openRule(policy trust.Action) (Confirm, Action, tea.Cmd) {
	if c.Held() {
		return c.refuseHeld()
	}
	c.proposal = leaveSecretsOpen(c.rules.Propose(c.p.Tool, c.p.Request.Args), c.p.Secrets)
	c.rulePolicy = policy
	c.ruleErr = ""
	c.ruleIn.SetValue(c.rules.FormatWhen(c.proposal.When))
	c.ruleIn.CursorStart() // the rule is read from its start
	if c.ruleArgs == nil {
		_ = json.Unmarshal(c.p.Request.Args, &c.ruleArgs) // not an object: nothing is named open
	}
	cmd := c.ruleIn.Focus()
	c.setState(stateRule)
	c.layout()
	return c, nil, cmd
}

// saveRule checks the edited rule as the config's rules are checked (and against
// the tool's input schema); a refused edit says why and decides nothing.
func (c Confirm) saveRule() (Confirm, Action, tea.Cmd) {
	when, err := c.rules.ParseWhen(c.ruleIn.Value())
	if err == nil {
		prop := c.proposal
		prop.When = when
		if err = c.rules.Check(prop, c.rulePolicy, c.p.Tool); err == nil {
			if c.rulePolicy == trust.Allow {
				// Saving an allow rule allows this call: like every allow, it
				// waits for the Confirm chord.
				c.ruleIn.Blur()
				c.ruleErr = ""
				c, _, _ = c.allow(model.AllowOnce, &prop)
				c.layout()
				return c, nil, nil
			}
			if c.Held() {
				return c.refuseHeld()
			}
			return c, DenyCall{ID: c.p.ID, Remember: &prop}, nil
		}
	}
	c.ruleErr = "not saved: " + err.Error()
	c.layout()
	return c, nil, nil
}

// SetSize lays the dialog out for w columns and h rows: it is at most
// MaxWidth wide and at most h high (it may be lower when everything fits),
// and the root centres it. The arguments take the rows left over and scroll
// when they need more. The arguments get the space first: when fewer than
// three rows would be left for them, the reasons move below them into the
// scroll region, and when even that is too tight the whole body scrolls. A
// line under the region always counts what is above and below.
func (c *Confirm) SetSize(w, h int) {
	c.width, c.height = w, h
	c.layout()
}

// Update handles one message. It returns the dialog, the decision if one was
// made (nil otherwise) and a command to run.
func (c Confirm) Update(msg tea.Msg) (Confirm, Action, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return c.key(msg)
	case tea.MouseWheelMsg:
		var cmd tea.Cmd
		c.vp, cmd = c.vp.Update(msg)
		return c, nil, cmd
	}
	if c.state == stateReason {
		// Paste and cursor blinks belong to the reason field.
		var cmd tea.Cmd
		c.reason, cmd = c.reason.Update(msg)
		return c, nil, cmd
	}
	if c.state == stateRule {
		var cmd tea.Cmd
		c.ruleIn, cmd = c.ruleIn.Update(msg)
		c.refreshScope()
		return c, nil, cmd
	}
	return c, nil, nil
}

func (c Confirm) key(msg tea.KeyPressMsg) (Confirm, Action, tea.Cmd) {
	k := c.keys
	switch c.state {
	case stateArming:
		if key.Matches(msg, k.Why) {
			c.toggleWhy()
			return c, nil, nil
		}
		if key.Matches(msg, k.Reveal) {
			c.toggleReveal()
			return c, nil, nil
		}
		c.scroll(msg)
		return c, nil, nil
	case stateArmed:
		if key.Matches(msg, k.Confirm) {
			if c.Held() && (c.armedScope != model.AllowOnce || c.armedRule != nil) {
				return c.refuseHeld()
			}
			return c, AllowCall{ID: c.p.ID, Scope: c.armedScope, Remember: c.armedRule}, nil
		}
		// Any other key, whatever it is, only goes back, to Deny.
		c.focus = buttonDeny
		c.armedRule = nil
		c.setState(stateChoosing)
		return c, nil, nil

	case stateRule:
		switch {
		case key.Matches(msg, k.SaveRule):
			return c.saveRule()
		case key.Matches(msg, k.Back):
			c.ruleIn.Blur()
			c.ruleErr = ""
			c.focus = 0
			c.setState(stateChoosing)
			c.layout()
			return c, nil, nil
		case key.Matches(msg, k.Up), key.Matches(msg, k.Down), key.Matches(msg, k.PageUp), key.Matches(msg, k.PageDown):
			c.scroll(msg)
			return c, nil, nil
		}
		c.ruleErr = ""
		var cmd tea.Cmd
		c.ruleIn, cmd = c.ruleIn.Update(msg)
		c.refreshScope()
		return c, nil, cmd

	case stateReason:
		switch {
		case key.Matches(msg, k.SendReason):
			return c, DenyCall{ID: c.p.ID, Reason: strings.TrimSpace(c.reason.Value())}, nil
		case key.Matches(msg, k.Back):
			c.reason.Blur()
			c.setState(stateChoosing)
			return c, nil, nil
		case c.scroll(msg):
			return c, nil, nil
		}
		var cmd tea.Cmd
		c.reason, cmd = c.reason.Update(msg)
		return c, nil, cmd
	}

	switch {
	// Focus stops at the ends rather than wrapping, so that moving "back"
	// from Deny can never land on an allow button.
	case key.Matches(msg, k.Next):
		c.focus = min(c.focus+1, len(c.btns)-1)
	case key.Matches(msg, k.Prev):
		c.focus = max(c.focus-1, 0)
	case key.Matches(msg, k.Activate):
		switch c.btns[c.focus] {
		case buttonOnce:
			return c.allow(model.AllowOnce, nil)
		case buttonContext:
			return c.allow(model.AllowForContext, nil)
		case buttonAlwaysAllow:
			return c.openRule(trust.Allow)
		case buttonAlwaysDeny:
			return c.openRule(trust.Deny)
		}
		return c, DenyCall{ID: c.p.ID}, nil
	case key.Matches(msg, k.Deny):
		c.focus = buttonDeny
		c.reason.Reset()
		cmd := c.reason.Focus()
		c.setState(stateReason)
		return c, nil, cmd
	case key.Matches(msg, k.Cancel):
		return c, DenyCall{ID: c.p.ID}, nil
	case key.Matches(msg, k.Why):
		c.toggleWhy()
	case key.Matches(msg, k.Reveal):
		c.toggleReveal()
	default:
		c.scroll(msg)
	}
	return c, nil, nil
}

// allow never allows: it arms the dialog so that the Confirm chord allows with
// scope (and saves rule, when not nil). Enter on an allow button is a key every
// screen behind the dialog uses; the chord is one none of them does.
func (c Confirm) allow(scope model.Answer, rule *model.RuleProposal) (Confirm, Action, tea.Cmd) {
	if c.Held() && (scope != model.AllowOnce || rule != nil) {
		return c.refuseHeld()
	}
	c.armedScope = scope
	c.armedRule = rule
	what := "allow once"
	switch {
	case c.destructive:
		what = "allow this destructive call"
	case rule != nil:
		what = "allow, save the rule"
	case scope == model.AllowForContext:
		what = "allow for this context"
	}
	c.keys.Confirm.SetHelp("ctrl+y", what)
	c.setState(stateArmed)
	return c, nil, nil
}

// scroll applies a scroll key and reports whether msg was one. Past either end
// of a part of long arguments it moves to the neighbouring part; Top and End
// jump to the first and the last byte.
func (c *Confirm) scroll(msg tea.KeyPressMsg) bool {
	k := c.keys
	atTop, atEnd := c.vp.AtTop(), c.vp.AtBottom()
	last := len(c.argParts) - 1
	switch {
	case key.Matches(msg, k.Up), key.Matches(msg, k.PageUp):
		if atTop && c.argPart > 0 {
			c.showPart(c.argPart-1, true)
		} else if key.Matches(msg, k.Up) {
			c.vp.ScrollUp(1)
		} else {
			c.vp.PageUp()
		}
	case key.Matches(msg, k.Down), key.Matches(msg, k.PageDown):
		if atEnd && c.argPart < last {
			c.showPart(c.argPart+1, false)
		} else if key.Matches(msg, k.Down) {
			c.vp.ScrollDown(1)
		} else {
			c.vp.PageDown()
		}
	case key.Matches(msg, k.Top):
		c.showPart(0, false)
	case key.Matches(msg, k.End):
		c.showPart(last, true)
	default:
		return false
	}
	return true
}

// showPart lays out part i of the arguments, at its end or its top.
func (c *Confirm) showPart(i int, atEnd bool) {
	if i != c.argPart {
		c.argPart = i
		c.layout()
	}
	if atEnd {
		c.vp.GotoBottom()
	} else {
		c.vp.GotoTop()
	}
}

func (c *Confirm) setState(s state) {
	c.state = s
	c.keys.setState(s)
	if len(c.p.Secrets) == 0 {
		c.keys.Reveal.SetEnabled(false) // nothing to reveal
	}
}

// frame is the dialog's border: a distinct one for a destructive call.
func (c Confirm) frame() lipgloss.Style {
	if c.destructive {
		return c.st.DialogWarn
	}
	return c.st.Dialog
}

func (c Confirm) mark(s string) string { return c.st.Mark.Render(s) }

// layout computes every line that depends only on the size and the pending
// call, and sizes the scroll region.
func (c *Confirm) layout() {
	fr := c.frame()
	c.dw = max(min(c.width, MaxWidth), fr.GetHorizontalFrameSize()+20)
	c.iw = c.dw - fr.GetHorizontalFrameSize()
	c.ih = max(c.height-fr.GetVerticalFrameSize(), 1)

	c.title = c.titleLines()
	facts, cont, keep := c.factBlock()
	reasons := c.reasonLines()
	header := c.argHeader()
	args := c.argLines()

	c.bottomStatus = max(len(c.statusLines(stateArmed)), len(c.statusLines(stateChoosing)), len(c.statusLines(stateArming)), 1)
	if c.state == stateRule {
		c.bottomStatus = max(c.bottomStatus, len(c.statusLines(stateRule)))
	}
	bottom := 1 + c.buttonsHeight() + c.bottomStatus + 1 // blank, buttons, status, help

	c.help.SetWidth(c.iw)
	c.reason.SetWidth(max(c.iw-lipgloss.Width(reasonLabel)-1, 10))
	c.ruleIn.SetWidth(max(c.iw-lipgloss.Width(ruleLabel)-1, 10))

	// The first rows say who asks, the server and its trust, the tool and its
	// tier, and why it asks (the reasons fold into that one line; w unfolds
	// them below the arguments, at the dialog's full width). The arguments are
	// what the person approves: they come first in the scroll region and get
	// every row those leave (all of them when they are shorter; one at the
	// least), and the buttons are always drawn. The other facts take the rows
	// above the arguments that are left; what does not fit there follows the
	// arguments in the scroll region.
	summary := c.whySummary()
	free := c.ih - len(c.title) - bottom - len(summary) - 1 // the arguments' header
	// The facts keep the lines that say who asks for what (who asks, server,
	// tool, the name the agent calls, tier: who asks is never cut off below the
	// fold) while one argument row and the scroll note are left; the arguments
	// get the rest they need, then the other facts what is left.
	keep = min(keep, max(free-2, 0))
	argRows := min(len(args), max(free-keep-1, 1))
	shown := min(len(facts), max(free-argRows-1, keep)) // one row for the scroll note
	if len(facts)+len(args) <= free {
		shown = len(facts)
	}
	// A wrapped fact is shown whole or goes below the arguments whole: its
	// first line alone would read as all of it. The lines kept stay.
	for back := shown; back > keep && back < len(facts) && cont[back]; {
		back--
		if !cont[back] {
			shown = back
		}
	}
	c.layoutMode = layoutArgs
	// Who asks, then why it asks, then the other facts that fit.
	top := min(shown, keep)
	c.head = concat(facts[:top], summary, facts[top:shown], []string{header})
	region := args
	if c.whyOpen {
		region = concat(region, []string{""}, reasons)
		c.layoutMode = layoutArgsThenReasons
	}
	if shown < len(facts) {
		region = concat(region, []string{"", c.st.Header.Render("details")}, facts[shown:])
		c.layoutMode = layoutAll
	}
	h := free - shown
	if len(region) > h {
		h-- // the scroll note
	}
	c.vp.SetHeight(max(min(h, len(region)), 1))
	c.vp.SetWidth(c.iw)
	c.vp.SetContentLines(region)
	c.vp.GotoTop()
	c.refreshScope()
}

// toggleWhy folds or unfolds the reasons; unfolding scrolls to them.
func (c *Confirm) toggleWhy() {
	c.whyOpen = !c.whyOpen
	c.layout()
	if c.whyOpen && c.overflow() {
		// Show the reasons' start, keeping the arguments' last lines above.
		args := len(c.argLines())
		c.vp.SetYOffset(max(args-1, 0))
	}
}

// whySummary is the reasons folded into one line: the taint when it is what
// made the call ask, else the first reason, and how to unfold the rest.
func (c Confirm) whySummary() []string {
	reasons := c.reasons()
	if len(reasons) == 0 {
		return nil
	}
	first := reasons[0]
	if h := c.heldSummary(); h != "" {
		first = h
	}
	style := c.st.Muted
	if _, ok := c.taintReason(); ok || c.Held() {
		style = c.st.WarnText
	}
	hint := "  (w: all " + strconv.Itoa(len(reasons)) + ")"
	if len(reasons) == 1 {
		hint = "  (w: in full)"
	}
	if c.whyOpen {
		hint = "  (w: fold; below the arguments)"
	}
	label := pad(c.st.Key.Render("why"), labelWidth)
	room := c.iw - lipgloss.Width(label) - lipgloss.Width(hint)
	text := wrap.Inline(safetext.Limit(first, maxReasonBytes), c.mark)
	if lipgloss.Width(text) > room {
		text = ansi.Truncate(text, max(room, 1), "…")
	} else if len(reasons) == 1 && !c.whyOpen {
		hint = ""
	}
	return []string{label + style.Render(text) + c.st.Muted.Render(hint)}
}

// The layouts, from roomiest to tightest.
const (
	layoutArgs            = iota // facts, reasons fixed; arguments scroll
	layoutArgsThenReasons        // facts fixed; arguments, then reasons, scroll
	layoutAll                    // everything but the title scrolls
)

func concat[T any](parts ...[]T) []T {
	var out []T
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// overflow reports whether the scroll region holds more than it shows.
func (c Confirm) overflow() bool { return c.vp.TotalLineCount() > c.vp.Height() }

func (c Confirm) titleLines() []string {
	title := c.st.Title.Render("airlock: allow this call?")
	if c.p.Deadline.IsZero() {
		return []string{title}
	}
	note := c.st.Muted.Render("denied at " + c.p.Deadline.Format(time.TimeOnly) + " if unanswered")
	if gap := c.iw - lipgloss.Width(title) - lipgloss.Width(note); gap >= 2 {
		return []string{title + strings.Repeat(" ", gap) + note}
	}
	// A narrow dialog keeps the deadline on the title's row, in fewer words
	// (every row is worth an argument line), never as bare "denied at", which
	// reads as done.
	note = c.st.Muted.Render("no answer: denied " + c.p.Deadline.Format(time.TimeOnly))
	if gap := c.iw - lipgloss.Width(title) - lipgloss.Width(note); gap >= 2 {
		return []string{title + strings.Repeat(" ", gap) + note}
	}
	return []string{title, note}
}

// factBlock is the facts: first, at the full width, those who asks is read
// from (who asks, the server and its trust, the tool and its tier), then the
// rest beside the hints table when both fit side by side and above it
// otherwise; cont[i] says line i continues the row above it (a wrapped fact),
// so that the block is cut only between rows; keep is how many lines the
// facts who asks is read from take, the lines never moved below the fold.
func (c Confirm) factBlock() (lines []string, cont []bool, keep int) {
	flat := func(rows [][]string) ([]string, []bool) {
		var ls []string
		var cs []bool
		for _, r := range rows {
			for j, l := range r {
				ls = append(ls, l)
				cs = append(cs, j > 0)
			}
		}
		return ls, cs
	}
	key, keyCont := flat(c.keyLines(c.iw))
	table := c.hintLines()
	full, fullCont := flat(c.factLines(c.iw))
	// Beside the table only when no fact wraps more there than at the full
	// width: a name broken beside the table would read as a shorter one.
	if fw := c.iw - maxWidth(table) - 3; fw >= 34 {
		if facts, cont := flat(c.factLines(fw)); len(facts) <= len(full) {
			side := strings.Split(lipgloss.JoinHorizontal(lipgloss.Top,
				lipgloss.NewStyle().Width(fw).Render(strings.Join(facts, "\n")),
				"   ",
				strings.Join(table, "\n")), "\n")
			// Below the facts only table rows remain: each is a row of its own.
			cont = append(cont, make([]bool, max(len(side)-len(cont), 0))...)
			return concat(key, side), append(keyCont, cont...), len(key)
		}
	}
	return concat(key, full, table), concat(keyCont, fullCont, make([]bool, len(table))), len(key)
}

// served is the name the agent calls the tool by, "" when it is the qualified
// name itself.
func (c Confirm) served() string {
	if s := c.p.Request.Served; s != "" && s != c.p.Tool.Ref.Qualified() {
		return s
	}
	return ""
}

// servedLead is what precedes the served name: the sentence, or fewer words
// when the sentence would leave the name too little room.
func servedLead(width, n int) string {
	lead := "the agent calls this "
	if width-labelWidth-len(lead) < min(n, 16) {
		lead = "agent calls "
	}
	return lead
}

// taintReason is the verdict's first sentence when taint is what made the call ask
// (trust.Decide puts the taint sentence first).
func (c Confirm) taintReason() (string, bool) {
	if c.p.Verdict.By != trust.DecidedByTaint || len(c.p.Verdict.Reasons) == 0 || !c.p.Taint.Tainted() {
		return "", false
	}
	return c.p.Verdict.Reasons[0], true
}

// reasonLines is every sentence of the verdict, escaped (they embed names).
func (c Confirm) reasonLines() []string {
	reasons := c.reasons()
	if len(reasons) == 0 {
		return nil
	}
	out := []string{c.st.Header.Render("why it asks")}
	for _, r := range reasons {
		out = append(out, wrap.Hang(wrap.Inline(safetext.Limit(r, maxReasonBytes), c.mark), c.iw, "  • ")...)
	}
	return out
}

// reasons are the verdict's sentences, led by the policy's hold when the team
// policy holds the call (what the person most needs to know: only this call can
// be allowed, and why).
func (c Confirm) reasons() []string {
	if !c.Held() {
		return c.p.Verdict.Reasons
	}
	return append([]string{c.p.Held}, c.p.Verdict.Reasons...)
}

// heldSummary is the "why" row of a call the team policy holds, its file and
// line first so that a narrow dialog still shows them: "policy: FILE:LINE asks
// for every call of this tool; it cannot be remembered". "" when not held.
func (c Confirm) heldSummary() string {
	p := c.p
	switch {
	case !c.Held():
		return ""
	case p.Tool.Managed.Holds():
		return p.Tool.Managed.Source + " asks for every call of this tool; it cannot be remembered"
	case p.Rule != nil && strings.HasPrefix(p.Rule.Source, "policy "):
		return "policy: " + strings.TrimPrefix(p.Rule.Source, "policy ") + " asks for this call; it cannot be remembered"
	}
	return p.Held
}

// keyLines is the rows who asks is read from, each as the lines it wraps to:
// who asks (the agent and its context, or you), the server and its trust, the
// tool (with the name the agent calls) and its tier.
func (c Confirm) keyLines(width int) [][]string {
	t := c.p.Tool
	name := func(s string) string { return wrap.Inline(safetext.Limit(s, maxNameBytes), c.mark) }
	row := func(label, value string) []string {
		return wrap.HangChars(value, width, pad(c.st.Key.Render(label), labelWidth))
	}
	indent := strings.Repeat(" ", labelWidth)
	// follow puts word after a row's last line when it fits there, on a line
	// of its own otherwise: a trust or tier word never breaks.
	follow := func(rows []string, word string) []string {
		if last := rows[len(rows)-1]; lipgloss.Width(last)+2+lipgloss.Width(word) <= width {
			rows[len(rows)-1] = last + "  " + word
			return rows
		}
		return append(rows, indent+word)
	}
	var out [][]string
	if r := c.p.Request; r.Client != "" {
		ctx := r.Context
		if ctx == "" {
			ctx = model.PersonContext
		}
		agent := row("agent", name(r.Client)+c.st.Muted.Render(" · context ")+name(ctx))
		if len(agent) > 1 {
			// Kept on one row where it can be: who asks is never cut off
			// below the fold.
			if short := row("agent", name(r.Client)+c.st.Muted.Render(" · ")+name(ctx)); len(short) < len(agent) {
				agent = short
			}
		}
		out = append(out, agent)
	} else {
		out = append(out, row("asks", "you"))
	}
	// The server's and the tool's names may break anywhere (every character
	// of them is shown).
	out = append(out, follow(row("server", name(t.Ref.Server)), c.trustLabel(t.ServerTrust)))
	tool := follow(row("tool", name(t.Ref.Tool)), c.st.Tier(t.Class.Tier).Render(theme.TierLabel(t.Class.Tier)))
	if served := c.served(); served != "" {
		// The gateway serves the tool under a name of its own (its own is too
		// long, or holds characters agents' clients rewrite): the agent's
		// conversation names it so. On one row, cut in its middle when it must
		// be: its start says the server, its end which of its tools.
		s := name(served)
		lead := servedLead(width, lipgloss.Width(s))
		tool = append(tool, indent+c.st.Muted.Render(lead)+common.CutMiddle(s, max(width-labelWidth-len(lead), 1)))
	}
	return append(out, tool)
}

// factLines is the other facts' rows, each as the lines it wraps to.
func (c Confirm) factLines(width int) [][]string {
	t := c.p.Tool
	name := func(s string) string { return wrap.Inline(safetext.Limit(s, maxNameBytes), c.mark) }
	var out [][]string
	if trust.ClaimsReadOnly(t.Declared, t.ServerTrust) {
		claim := c.st.WarnText.Render("⚠ claims read-only") + c.st.Muted.Render(" · ignored")
		out = append(out, wrap.Hang(claim, width, pad(c.st.Key.Render("claim"), labelWidth)))
	}
	legs := "none"
	if len(t.Class.Legs) > 0 {
		words := make([]string, len(t.Class.Legs))
		for i, l := range t.Class.Legs {
			words[i] = string(l)
		}
		legs = strings.Join(words, " · ")
	}
	out = append(out, wrap.Hang(legs, width, pad(c.st.Key.Render("legs"), labelWidth)))
	if f := t.ServerFence(); f.Requested {
		// What the server's sandbox enforces (the launcher's detail is escaped
		// like any text from outside); one asked for and not applied is a warning.
		words := wrap.Inline(safetext.Limit(trust.FenceWords(f), maxReasonBytes), c.mark)
		if !f.Applied {
			words = c.st.ErrorText.Render("⚠ unfenced") + c.st.ErrorText.Render(strings.TrimPrefix(words, "unfenced"))
		}
		out = append(out, wrap.Hang(words, width, pad(c.st.Key.Render("sandbox"), labelWidth)))
	}
	if tt := c.p.Taint; tt.Tainted() {
		by := name(tt.By.Qualified())
		if tt.CallID != "" {
			by += c.st.Muted.Render(" (call ") + name(tt.CallID) + c.st.Muted.Render(")")
		}
		out = append(out, wrap.Hang(c.st.WarnText.Render("⚠ from ")+by, width, pad(c.st.Key.Render("taint"), labelWidth)))
	}
	return out
}

func (c Confirm) trustLabel(t trust.ServerTrust) string {
	s := c.st.WarnText
	switch t {
	case trust.Trusted:
		s = c.st.OKText
	case trust.BlockedServer:
		s = c.st.ErrorText
	}
	return s.Render(theme.TrustGlyph(t) + " " + t.String())
}

// hintLines is the declared-vs-effective table: a header and one row per
// hint, "absent" kept apart from false.
func (c Confirm) hintLines() []string {
	d, e := c.p.Tool.Declared.Hints, c.p.Tool.Class.Effective
	decl := func(b *bool) string {
		if b == nil {
			return "absent"
		}
		return strconv.FormatBool(*b)
	}
	rows := [][3]string{
		{"read_only", decl(d.ReadOnly), strconv.FormatBool(e.ReadOnly)},
		{"destructive", decl(d.Destructive), strconv.FormatBool(e.Destructive)},
		{"idempotent", decl(d.Idempotent), strconv.FormatBool(e.Idempotent)},
		{"open_world", decl(d.OpenWorld), strconv.FormatBool(e.OpenWorld)},
	}
	line := func(a, b, c string) string { return fmt.Sprintf("%-12s %-9s %s", a, b, c) }
	out := []string{c.st.Header.Render(line("hint", "declared", "effective"))}
	for _, r := range rows {
		out = append(out, line(r[0], r[1], r[2]))
	}
	return out
}

func (c Confirm) argHeader() string {
	sum := c.p.ArgsSHA256
	if len(sum) > 12 {
		sum = sum[:12] + "…"
	}
	n := len(c.p.Request.Args)
	unit := " bytes"
	if n == 1 {
		unit = " byte"
	}
	return c.st.Header.Render("arguments") + c.st.Muted.Render("  sha256 "+sum+" · "+strconv.Itoa(n)+unit)
}

// argText is the arguments, pretty-printed when they are valid JSON and as
// received otherwise, with a note when they are not plain JSON.
func argText(args json.RawMessage) (text, note string) {
	switch {
	case len(bytes.TrimSpace(args)) == 0:
		return "{}", "no arguments were sent; the server receives {}"
	case json.Valid(args):
		var buf bytes.Buffer
		_ = json.Indent(&buf, args, "", "  ")
		return buf.String(), ""
	}
	return string(args), "not valid JSON; shown exactly as received"
}

// parts splits s into parts of at most size bytes, each starting on a rune
// (or, inside invalid UTF-8, on any byte), and returns where each starts.
func parts(s string, size int) []int {
	out := []int{0}
	for start := 0; len(s)-start > size; {
		end := start + size
		for i := 0; i < utf8.UTFMax && end > start+1 && !utf8.RuneStart(s[end]); i++ {
			end--
		}
		out = append(out, end)
		start = end
	}
	return out
}

// argLines are the shown part of the arguments, escaped and in a gutter, with
// a line that says which bytes they are when there is more than one part.
func (c Confirm) argLines() []string {
	start, end := c.argParts[c.argPart], len(c.argText)
	if c.argPart+1 < len(c.argParts) {
		end = c.argParts[c.argPart+1]
	}
	var out []string
	if c.argNote != "" {
		out = append(out, wrap.Words(c.st.Muted.Render(c.argNote), c.iw)...)
	}
	if len(c.p.Secrets) > 0 {
		out = append(out, wrap.Words(c.secretNote(), c.iw)...)
	}
	if len(c.argParts) > 1 && c.argPart > 0 {
		out = append(out, c.st.WarnText.Render(fmt.Sprintf("… bytes %d–%d of %d: ↑ at the top shows the part before, home the first byte", start+1, end, len(c.argText))))
	} else if len(c.argParts) > 1 {
		out = append(out, c.st.WarnText.Render(fmt.Sprintf("bytes 1–%d of %d", end, len(c.argText))))
	}
	out = append(out, wrap.GutterMarked(c.argText[start:end], c.iw, c.st.Gutter.Render("│")+" ", c.mark)...)
	if end < len(c.argText) {
		out = append(out, c.st.WarnText.Render(fmt.Sprintf("… %d more bytes: ↓ at the end shows the next part, end the last byte", len(c.argText)-end)))
	}
	return out
}

// secretNote says where the secrets are and whether they are shown.
func (c Confirm) secretNote() string {
	var paths []string
	for _, f := range c.p.Secrets {
		if f.Path == "" {
			paths = append(paths, "the arguments")
		} else if !slices.Contains(paths, f.Path) {
			paths = append(paths, f.Path)
		}
	}
	// The paths are made of the arguments' key names: untrusted text, escaped.
	where := wrap.Inline(safetext.Limit(strings.Join(paths, ", "), maxReasonBytes), c.mark)
	if !c.masked() {
		return c.st.WarnText.Render("secrets shown as sent in ") + where + c.st.WarnText.Render(" ("+c.keys.Reveal.Help().Key+": mask them)")
	}
	return c.st.WarnText.Render("secrets masked in ") + where + c.st.WarnText.Render(" ("+c.keys.Reveal.Help().Key+": show them as sent)")
}

const reasonLabel = "reason (optional): "

// ruleLabel precedes the rule's editable conditions.
const ruleLabel = "when "

// ruleLines is the rule editor: what it saves, the editable conditions, and why
// the last edit was refused or where the rule goes.
func (c Confirm) ruleLines() []string {
	verb, style := "Always allow", c.st.WarnText
	if c.rulePolicy != trust.Allow {
		verb, style = "Always deny", c.st.OKText
	}
	name := wrap.Inline(safetext.Limit(c.p.Tool.Ref.Qualified(), maxNameBytes), c.mark)
	// At most six rows, so that the arguments and the buttons keep theirs: the
	// heading, what the rule covers and the error are cut to fit.
	out := []string{ansi.Truncate(style.Render(verb+" ")+name+c.st.Muted.Render(" when (edit; enter saves):"), c.iw, "…")}
	out = append(out, c.st.Key.Render(ruleLabel)+c.ruleIn.View())
	scope := c.scope
	if c.scopeFor != c.ruleIn.Value() || c.scopeW != c.iw {
		scope = c.ruleScope() // not refreshed yet: never show a stale sentence
	}
	out = append(out, scope...)
	var note []string
	switch {
	case c.ruleErr != "":
		note = wrap.Words(c.st.ErrorText.Render(wrap.Inline(safetext.Limit(c.ruleErr, maxReasonBytes), c.mark)), c.iw)
	case len(c.proposal.Notes) > 0:
		// where a path opens through a link, and so which folder is proposed
		note = wrap.Words(c.st.WarnText.Render(wrap.Inline(safetext.Limit(strings.Join(c.proposal.Notes, "; "), maxReasonBytes), c.mark)), c.iw)
	default:
		note = wrap.Words(c.st.Muted.Render("saved to rules.toml, never your config · K: the Rules view revokes it"), c.iw)
	}
	if len(note) > 2 {
		note = []string{note[0], ansi.Truncate(note[1]+" "+note[2], c.iw, "…")}
	}
	return append(out, note...)
}

// refreshScope recomputes ruleScope for the rule editor's text and width.
func (c *Confirm) refreshScope() {
	if c.state != stateRule || c.scopeFor == c.ruleIn.Value() && c.scopeW == c.iw && c.scope != nil {
		return
	}
	c.scope, c.scopeFor, c.scopeW = c.ruleScope(), c.ruleIn.Value(), c.iw
}

// ruleScope says, in words, what the conditions being edited let through: every
// call of the tool when there is none, else the arguments no condition looks at. It
// follows the text as it is typed, so the person reads it before saving. It always
// takes the rows the sentence for no condition takes (one or two), so the dialog's
// height never changes while the person types.
func (c Confirm) ruleScope() []string {
	name := wrap.Inline(safetext.Limit(c.p.Tool.Ref.Qualified(), maxNameBytes), c.mark)
	every := c.cutRows(wrap.Words(c.st.WarnText.Render("⚠ every call of "+name+", whatever its arguments"), c.iw), 2)
	var out []string
	when, err := c.rules.ParseWhen(c.ruleIn.Value())
	switch {
	case err != nil:
		out = []string{c.st.Muted.Render("not a rule yet: enter says why")}
	case len(when) == 0:
		out = every
	default:
		open := trust.OpenArgs(c.ruleArgs, when)
		sized := c.sizedOnly(when)
		if len(open) == 0 && sized == "" {
			out = []string{c.st.Muted.Render("only calls that meet every condition")}
			break
		}
		var said []string
		if len(open) > 0 {
			// Only the names that can be shown are laid out; the count comes first, so
			// cutting the row never hides how many arguments are open.
			lead := "any value of "
			if len(open) > 1 {
				lead += strconv.Itoa(len(open)) + " arguments: "
			}
			var names []string
			width := 0
			for _, f := range open {
				n := wrap.Inline(safetext.Limit(f, maxNameBytes), c.mark)
				if width += lipgloss.Width(n) + 2; width > 2*c.iw && len(names) > 0 {
					break
				}
				names = append(names, n)
			}
			said = append(said, lead+strings.Join(names, ", "))
		}
		if sized != "" {
			said = append(said, sized)
		}
		out = c.cutRows(wrap.Words(c.st.WarnText.Render(strings.Join(said, "; ")), c.iw), len(every))
	}
	for len(out) < len(every) {
		out = append(out, "")
	}
	return out
}

// sizedOnly names the lists among these arguments that a condition bounds only by
// their length (max alone): such a condition says nothing of the items, so any
// items pass ("any items in entities (at most 2)"). "" when there is none.
func (c Confirm) sizedOnly(when map[string]map[string]any) string {
	var out []string
	for _, f := range slices.Sorted(maps.Keys(when)) {
		m := when[f]
		n, ok := m["max"]
		if !ok || len(m) != 1 {
			continue
		}
		v, found := c.ruleArgs, true
		for part := range strings.SplitSeq(f, ".") {
			obj, isObj := v.(map[string]any)
			if !isObj {
				found = false
				break
			}
			v, found = obj[part]
			if !found {
				break
			}
		}
		if _, isList := v.([]any); !found || !isList {
			continue
		}
		out = append(out, "any items in "+wrap.Inline(safetext.Limit(f, maxNameBytes), c.mark)+" (at most "+fmt.Sprint(n)+")")
		if len(out) == 3 {
			out = append(out, "…")
			break
		}
	}
	return strings.Join(out, ", ")
}

// cutRows keeps at most n rows of wrapped text, the last cut to the width.
func (c Confirm) cutRows(rows []string, n int) []string {
	if len(rows) <= n {
		return rows
	}
	rows = slices.Clone(rows[:n])
	rows[n-1] = ansi.Truncate(rows[n-1]+" …", c.iw, "…")
	return rows
}

// statusLines is the message above the help for state s.
func (c Confirm) statusLines(s state) []string {
	switch s {
	case stateArmed:
		if c.destructive {
			return wrap.Words(c.st.ErrorText.Render("This call is DESTRUCTIVE. Press ctrl+y to allow it; any other key goes back."), c.iw)
		}
		return wrap.Words(c.st.WarnText.Render("Press ctrl+y to allow this call; any other key goes back."), c.iw)
	case stateArming:
		return wrap.Words(c.st.WarnText.Render("⏳ arming… keys are ignored until the keyboard rests"), c.iw)
	case stateReason:
		return []string{c.st.Key.Render(reasonLabel) + c.reason.View()}
	case stateRule:
		return c.ruleLines()
	}
	if c.heldNote != "" {
		return wrap.Words(c.st.WarnText.Render(wrap.Inline(safetext.Limit(c.heldNote, maxReasonBytes), c.mark)), c.iw)
	}
	if c.destructive {
		return wrap.Words(c.st.WarnText.Render(theme.TierGlyph(trust.TierDestructive)+" destructive: allowing then asks for ctrl+y"), c.iw)
	}
	return nil
}

func (c Confirm) buttons() []string {
	var bs []string
	for i, b := range c.btns {
		l := buttonLabels[b]
		if c.state == stateArming {
			bs = append(bs, c.st.Muted.Render("  "+l))
		} else if i == c.focus && c.state != stateReason && c.state != stateRule {
			bs = append(bs, c.st.ButtonOn.Render("▸ "+l))
		} else {
			bs = append(bs, c.st.Button.Render("  "+l))
		}
	}
	// As many buttons to a row as fit, in focus order.
	var rows []string
	row := ""
	for _, b := range bs {
		switch {
		case row == "":
			row = b
		case lipgloss.Width(row)+1+lipgloss.Width(b) <= c.iw:
			row += " " + b
		default:
			rows = append(rows, row)
			row = b
		}
	}
	return append(rows, row)
}

func (c Confirm) buttonsHeight() int { return len(c.buttons()) }

// View renders the dialog, frame included. Every line is at most the width
// given to SetSize (or MaxWidth).
func (c Confirm) View() string {
	lines := append([]string{}, c.title...)
	lines = append(lines, c.head...)
	lines = append(lines, strings.Split(c.vp.View(), "\n")...)
	if c.overflow() {
		lines = append(lines, c.scrollNote())
	}
	lines = append(lines, "")
	lines = append(lines, c.buttons()...)
	status := c.statusLines(c.state)
	for len(status) < c.bottomStatus {
		status = append(status, "")
	}
	lines = append(lines, status...)
	lines = append(lines, common.HelpLine(c.help, c.keys.ShortHelp(), c.iw))
	return c.frame().Width(c.dw).Render(strings.Join(lines, "\n"))
}

func (c Confirm) scrollNote() string {
	above := c.vp.YOffset()
	below := max(c.vp.TotalLineCount()-above-c.vp.Height(), 0)
	var parts, short []string
	if above > 0 {
		parts = append(parts, fmt.Sprintf("↑ %d more %s above", above, plural(above, "line")))
		short = append(short, fmt.Sprintf("↑%d", above))
	}
	if below > 0 {
		parts = append(parts, fmt.Sprintf("↓ %d more %s below", below, plural(below, "line")))
		short = append(short, fmt.Sprintf("↓%d", below))
	}
	what := "arguments"
	switch c.layoutMode {
	case layoutArgsThenReasons:
		what = "arguments, then why it asks"
	case layoutAll:
		what = "details"
	}
	counts := c.st.WarnText.Render(strings.Join(parts, " · "))
	// The counts are never dropped; the hint is, when the line is narrow.
	for _, s := range []string{
		counts + c.st.Muted.Render(" — ↑/↓ pgup/pgdn home/end scroll the "+what),
		counts,
		c.st.WarnText.Render(strings.Join(short, " ") + " more lines"),
	} {
		if lipgloss.Width(s) <= c.iw {
			return s
		}
	}
	return ansi.Truncate(c.st.WarnText.Render(strings.Join(short, " ")), c.iw, "…")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// pad right-pads s, which may be styled, to width cells.
func pad(s string, width int) string {
	if w := lipgloss.Width(s); w < width {
		return s + strings.Repeat(" ", width-w)
	}
	return s + " "
}

func maxWidth(lines []string) int {
	w := 0
	for _, l := range lines {
		w = max(w, lipgloss.Width(l))
	}
	return w
}
