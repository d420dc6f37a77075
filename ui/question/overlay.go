package question

import (
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/dialog"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// Kind is what a question asks.
type Kind int

const (
	KindApproval    Kind = iota // allow or deny a pending call
	KindElicitation             // a server asks for input
	KindQuit                    // quit airlock
	KindAccept                  // accept a changed tool definition
	KindClearTaint              // clear a context's taint
	KindChoice                  // another two-button question of airlock's (AskChoice)
	KindSampling                // a server asks for an LLM completion
)

// Outcome is what the person decided; nil means nothing yet.
type Outcome interface{ outcome() }

// Approved carries an approval dialog's decision (dialog.AllowCall or
// dialog.DenyCall) and the call it was about.
type Approved struct {
	Action  dialog.Action
	Pending *model.Pending
}

// Elicited answers a server's request for input: Action is accept, decline or
// cancel.
type Elicited struct {
	Elicitation *model.Elicitation
	Action      string
	Content     map[string]any
}

// QuitAnswer answers the quit question.
type QuitAnswer struct{ Quit bool }

// AcceptAnswer answers whether Ref's changed definition is accepted. Fingerprint is
// the definition the person was shown: only that one may be pinned.
type AcceptAnswer struct {
	Ref         trust.Ref
	Fingerprint string
	Accept      bool
}

// ClearTaintAnswer answers whether Context's taint is cleared. Taint is the taint
// the person was shown: only that one may be cleared.
type ClearTaintAnswer struct {
	Context string
	Taint   trust.Taint
	Clear   bool
}

// Chose answers a question asked with AskChoice: Tag is the asker's, Second says
// the second (not the safe, first-focused) button was pressed.
type Chose struct {
	Tag    string
	Second bool
}

func (ClearTaintAnswer) outcome() {}
func (Chose) outcome()            {}
func (Approved) outcome()         {}
func (Elicited) outcome()         {}
func (QuitAnswer) outcome()       {}
func (AcceptAnswer) outcome()     {}

// bellEvery is the shortest time between two bells.
const bellEvery = 2 * time.Second

// Overlay is the queue of questions and the guard of the one at the front. The
// front question is open (on screen) or waits behind the badge; everything else
// waits behind it, oldest first, except the quit and accept questions, which the
// person asked for and which go first.
type Overlay struct {
	st    theme.Styles
	help  help.Model
	items []item
	open  bool
	g     guard
	bell  bool
	rules dialog.RuleWriter
	// rang is when the bell last rang: a burst of arrivals rings once.
	rang   time.Time
	width  int
	height int
}

// New builds an empty overlay with guard quiet (raised to MinQuiet) on the clock
// now; bell says whether an arriving question rings the terminal bell; rules
// writes the remembered rules an approval's "Always allow…"/"Always deny…" make.
func New(st theme.Styles, quiet time.Duration, now func() time.Time, bell bool, rules dialog.RuleWriter) Overlay {
	if now == nil {
		now = time.Now
	}
	h := help.New()
	h.Styles = help.Styles{ShortKey: st.HelpKey, ShortDesc: st.Help, ShortSeparator: st.Help, Ellipsis: st.Help,
		FullKey: st.HelpKey, FullDesc: st.Help, FullSeparator: st.Help}
	return Overlay{st: st, rules: rules, help: h, g: guard{quiet: max(quiet, MinQuiet), now: now}, bell: bell, width: 80, height: 24}
}

// SetStyles changes the styles of questions asked from now on.
func (o *Overlay) SetStyles(st theme.Styles) { o.st = st }

// SetSize sets the space a question may take; one row is kept for the arming line.
func (o *Overlay) SetSize(w, h int) {
	o.width, o.height = w, h
	for i, it := range o.items {
		o.items[i] = o.size(it)
	}
}

func (o *Overlay) size(it item) item { return it.sized(o.width, o.height-1) }

// Len is the number of questions, open or waiting.
func (o Overlay) Len() int { return len(o.items) }

// Open reports whether the front question is on screen and takes keys.
func (o Overlay) Open() bool { return o.open && len(o.items) > 0 }

// Armed reports whether the open question takes answers now.
func (o Overlay) Armed() bool { return o.Open() && o.g.armed }

// Front is the kind of the front question; ok is false when there is none.
func (o Overlay) Front() (Kind, bool) {
	if len(o.items) == 0 {
		return 0, false
	}
	return o.items[0].kind(), true
}

// FrontApproval is the call the front question asks about, if it is an approval.
func (o Overlay) FrontApproval() (*model.Pending, bool) {
	if len(o.items) == 0 {
		return nil, false
	}
	a, ok := o.items[0].(approval)
	if !ok {
		return nil, false
	}
	return a.confirm.Pending(), true
}

// Approvals is every pending call with a question, in queue order.
func (o Overlay) Approvals() []*model.Pending {
	var out []*model.Pending
	for _, it := range o.items {
		if a, ok := it.(approval); ok {
			out = append(out, a.confirm.Pending())
		}
	}
	return out
}

// Count is the number of questions of kind k.
func (o Overlay) Count(k Kind) int {
	n := 0
	for _, it := range o.items {
		if it.kind() == k {
			n++
		}
	}
	return n
}

// Waiting is the number of questions not on screen.
func (o Overlay) Waiting() int {
	if o.Open() {
		return len(o.items) - 1
	}
	return len(o.items)
}

// Input records a key press or paste at the clock's now. A question that is
// arming starts its wait again from this key.
func (o *Overlay) Input() {
	// An armed question stays armed; an arming one waits on from this key (its
	// outstanding tick re-checks the clock).
	o.g.lastInput = o.g.now()
}

// Refocus is the terminal regaining focus: the person was in another window and
// may be typing into this one before looking. An open question disarms and arms
// afresh, as if it had just been shown.
func (o *Overlay) Refocus() tea.Cmd {
	o.g.lastInput = o.g.now()
	if !o.Open() {
		return nil
	}
	return o.show()
}

// AddApproval queues the dialog of p unless it is queued already. mine says the
// person's own call asked (the question opens at once; it still arms).
func (o *Overlay) AddApproval(p *model.Pending, mine bool) (bool, tea.Cmd) {
	for _, it := range o.items {
		if a, ok := it.(approval); ok && a.confirm.ID() == p.ID {
			return false, nil
		}
	}
	it := o.size(newApproval(p, o.st, o.rules))
	if mine {
		return true, o.pushFront(it)
	}
	return true, o.pushBack(it)
}

// AddElicitation queues a server's request for input; server trust is shown first.
func (o *Overlay) AddElicitation(e *model.Elicitation, t trust.ServerTrust) tea.Cmd {
	return o.pushBack(o.size(newElicitation(e, t, o.st)))
}

// AddSampling queues a server's sampling request; server trust is shown first.
func (o *Overlay) AddSampling(r *model.SamplingRequest, t trust.ServerTrust) tea.Cmd {
	return o.pushBack(o.size(samplingItem{s: newSampling(r, t)}))
}

// WithdrawSampling removes a sampling request that no longer waits.
func (o *Overlay) WithdrawSampling(id uint64) (*model.SamplingRequest, tea.Cmd) {
	for i, it := range o.items {
		if q, ok := it.(samplingItem); ok && q.s.req.ID == id {
			return q.s.req, o.remove(i)
		}
	}
	return nil, nil
}

// AskQuit puts the quit question in front, with airlock's sentences about what
// quitting ends.
func (o *Overlay) AskQuit(lines []string) tea.Cmd {
	if k, ok := o.Front(); ok && k == KindQuit {
		return nil
	}
	return o.pushFront(twoButton{about: quitting{}, choice: choice{
		title: "Quit airlock?", lines: lines, buttons: [2]string{"Stay", "Quit"}, keys: QuitKeyMap(),
	}})
}

// AskAccept puts the question of accepting ref's changed definition in front;
// name is the escaped qualified name, fingerprint the SHA-256 of the definition the
// person was shown in the diff (the answer carries it, so that only it is pinned).
func (o *Overlay) AskAccept(ref trust.Ref, name, fingerprint string) tea.Cmd {
	lines := []string{"It is pinned as it is now and no longer blocked; its tier then follows its new annotations. Accept only a change you have read in the diff."}
	if fingerprint != "" {
		lines = append(lines, "", "Pins sha256 "+fingerprint[:min(12, len(fingerprint))]+", the definition in the diff; if the server changed it since, nothing is pinned.")
	}
	return o.pushFront(twoButton{about: accepting{ref: ref, fp: fingerprint}, choice: choice{
		title:   "Accept the changed definition of " + name + "?",
		lines:   lines,
		buttons: [2]string{"Keep blocked", "Accept new definition"}, keys: AcceptKeyMap(),
	}})
}

// AskClearTaint puts the question of clearing a context's taint in front. Clearing
// makes airlock less careful (exfiltration and destructive calls of the context stop
// asking because of it), so it is guarded like an allow: no letter clears, → moves
// to Clear, Enter presses it and ctrl+y clears. name is the escaped context name, lines
// airlock's sentences about the taint (escaped by the caller).
func (o *Overlay) AskClearTaint(ctxName string, t trust.Taint, name string, lines []string) tea.Cmd {
	lines = append(append([]string(nil), lines...), "",
		"Clear it only if the untrusted text is no longer in that conversation (you started a new one). Afterwards its exfiltration and destructive calls no longer ask because of this taint. The audit log records that you cleared it.")
	return o.pushFront(twoButton{about: clearing{ctx: ctxName, taint: t}, choice: choice{
		title:   "Clear the taint of " + name + "?",
		lines:   lines,
		buttons: [2]string{"Keep tainted", "Clear taint"}, keys: ClearTaintKeyMap(),
	}})
}

// AskChoice puts a two-button question of airlock's own in front (the person asked
// for it with a key): title and lines are airlock's sentences (escape any server text
// first), buttons[0] is the safe answer and has focus first, keys its key map (no
// letter presses the second button unless keys binds one). It arms like every
// question; the answer is a Chose with tag.
func (o *Overlay) AskChoice(tag, title string, lines []string, buttons [2]string, keys ChoiceKeyMap) tea.Cmd {
	return o.pushFront(twoButton{about: choosing{tag: tag}, choice: choice{
		title: title, lines: lines, buttons: buttons, keys: keys,
	}})
}

// pushFront shows it at once, in front of whatever was shown; it arms afresh.
func (o *Overlay) pushFront(it item) tea.Cmd {
	o.items = append([]item{it}, o.items...)
	return o.show()
}

// pushBack queues it behind the others; it rings the bell when asked to.
func (o *Overlay) pushBack(it item) tea.Cmd {
	o.items = append(o.items, it)
	var cmds []tea.Cmd
	if now := o.g.now(); o.bell && now.Sub(o.rang) >= bellEvery {
		o.rang = now
		cmds = append(cmds, tea.Raw("\a"))
	}
	if len(o.items) == 1 {
		o.open = false
		o.g.restart()
		cmds = append(cmds, o.g.tick(o.g.quiet-o.g.idle()))
	}
	return tea.Batch(cmds...)
}

// show puts the front question on screen, disarmed, and starts its guard.
func (o *Overlay) show() tea.Cmd {
	if len(o.items) == 0 {
		o.open = false
		return nil
	}
	o.open = true
	o.g.restart()
	o.g.shownAt = o.g.now()
	// Shown afresh, a question is disarmed, and a two-button question starts on
	// its safe button as the approval dialog starts on Deny: a focus moved
	// before never carries over.
	if a, ok := o.items[0].(armer); ok {
		o.items[0] = a.arming(true)
	}
	return o.g.tick(o.g.quiet)
}

// Rearm shows the open question afresh (it arms again, focus on its safe answer):
// for when something else had the keys over it, such as the approval queue.
func (o *Overlay) Rearm() tea.Cmd {
	if !o.Open() {
		return nil
	}
	return o.show()
}

// Show opens the front question at once (the person pressed the key that opens
// it); it still arms. It does nothing when one is open.
func (o *Overlay) Show() tea.Cmd {
	if o.Open() || len(o.items) == 0 {
		return nil
	}
	return o.show()
}

// BringToFront shows the approval of pending call id next; it arms afresh.
func (o *Overlay) BringToFront(id uint64) tea.Cmd {
	for i, it := range o.items {
		if a, ok := it.(approval); ok && a.confirm.ID() == id {
			if i == 0 {
				return o.show() // the keys went to the queue: it arms afresh
			}
			o.items = append(append([]item{it}, o.items[:i]...), o.items[i+1:]...)
			return o.show()
		}
	}
	return nil
}

// WithdrawApproval removes the question about pending call id (answered
// elsewhere or withdrawn) and reports whether there was one.
func (o *Overlay) WithdrawApproval(id uint64) (*model.Pending, tea.Cmd) {
	for i, it := range o.items {
		if a, ok := it.(approval); ok && a.confirm.ID() == id {
			return a.confirm.Pending(), o.remove(i)
		}
	}
	return nil, nil
}

// WithdrawElicitation removes a server's request for input that was withdrawn.
func (o *Overlay) WithdrawElicitation(id uint64) (*model.Elicitation, tea.Cmd) {
	for i, it := range o.items {
		if e, ok := it.(elicitation); ok && e.e.ID == id {
			return e.e, o.remove(i)
		}
	}
	return nil, nil
}

// remove drops item i. When it was the open front question, the next one does
// not open by itself: it waits for the keyboard to be idle like any arriving
// question, and then arms afresh.
func (o *Overlay) remove(i int) tea.Cmd {
	o.items = append(o.items[:i:i], o.items[i+1:]...)
	if i != 0 {
		return nil
	}
	o.open = false
	o.g.restart()
	if len(o.items) == 0 {
		return nil
	}
	return o.g.tick(o.g.quiet - o.g.idle())
}

// Tick handles the guard's timer. typing says whether something else takes text
// now (a form, the filter): a waiting question does not open over it.
func (o Overlay) Tick(msg TickMsg, typing bool) (Overlay, tea.Cmd) {
	if msg.gen != o.g.gen {
		return o, nil // for an earlier question or guard
	}
	o.g.ticking = false
	if len(o.items) == 0 {
		return o, nil
	}
	if !o.open {
		if typing {
			return o, o.g.tick(o.g.quiet)
		}
		if idle := o.g.idle(); idle < o.g.quiet {
			return o, o.g.tick(o.g.quiet - idle)
		}
		if o.g.keysUnread() {
			return o, o.g.tick(unreadRecheck)
		}
		return o, o.show()
	}
	if o.g.armed {
		return o, nil
	}
	if r := o.g.remaining(); r > 0 {
		return o, o.g.tick(r)
	}
	if o.g.keysUnread() {
		return o, o.g.tick(unreadRecheck)
	}
	o.g.armed = true
	if a, ok := o.items[0].(armer); ok {
		o.items[0] = a.arming(false)
	}
	return o, nil
}

// PendingTick returns the message the guard's current timer delivers: tests send
// it after moving the clock instead of waiting.
func (o Overlay) PendingTick() tea.Msg { return TickMsg{gen: o.g.gen} }

// scrollKeys are the keys an arming question still honours: they read, never
// answer.
var scrollKeys = key.NewBinding(key.WithKeys("up", "down", "pgup", "pgdown", "home", "end"))

// Update gives a key or a paste to the open question. Until the guard is armed
// every key restarts the wait and only scrolls; afterwards the question decides.
func (o Overlay) Update(msg tea.Msg) (Overlay, Outcome, tea.Cmd) {
	if !o.Open() {
		return o, nil, nil
	}
	k, isKey := msg.(tea.KeyPressMsg)
	if !o.g.armed {
		if isKey && key.Matches(k, scrollKeys) {
			return o.forward(msg)
		}
		if _, wheel := msg.(tea.MouseWheelMsg); wheel {
			return o.forward(msg)
		}
		if isKey {
			return o, nil, nil // ignored; Input restarted the wait
		}
		if _, paste := msg.(tea.PasteMsg); paste {
			return o, nil, nil
		}
		return o.forward(msg) // cursor blinks and the like
	}
	return o.forward(msg)
}

func (o Overlay) forward(msg tea.Msg) (Overlay, Outcome, tea.Cmd) {
	o.items = slices.Clone(o.items) // the Overlay Update was called on keeps its own
	it, out, cmd := o.items[0].update(o.st, msg, o.g.armed)
	o.items[0] = it
	if out != nil {
		cmd = tea.Batch(cmd, o.remove(0))
	}
	return o, out, cmd
}

// Typing reports whether the open question takes text now (the elicitation form,
// or a denial's reason), so that the root keeps its own keys away from it.
func (o Overlay) Typing() bool {
	if !o.Open() {
		return false
	}
	return o.items[0].typing()
}

// View renders the open question, with the arming line while it ignores keys;
// "" when none is open.
func (o Overlay) View() string {
	if !o.Open() {
		return ""
	}
	return o.items[0].view(o.st, o.help, o.width, !o.g.armed)
}

// KeyMap is the open question's keys as they work now, for the footer.
func (o Overlay) KeyMap() help.KeyMap {
	if !o.Open() {
		return keyList{}
	}
	if !o.g.armed {
		return armingHelp
	}
	return o.items[0].keyMap()
}

// armingHelp is the help of a question while it arms: what works (scrolling) and
// a note. The note's binding is for help only and never matched; it has a key
// because help lists only bindings that have one.
var armingHelp = keyList{
	key.NewBinding(key.WithKeys("up", "down", "pgup", "pgdown", "home", "end"), key.WithHelp("↑/↓ pgup/pgdn", "scroll")),
	key.NewBinding(key.WithKeys("arming"), key.WithHelp("…", "arming: answer keys work once the keyboard is quiet")),
}

// keyList is a help.KeyMap of a fixed list.
type keyList []key.Binding

func (k keyList) ShortHelp() []key.Binding  { return k }
func (k keyList) FullHelp() [][]key.Binding { return [][]key.Binding{k} }

// Badge is the status line's note for questions that are not on screen, "" when
// none waits: "⚑ 2 approvals waiting — press a".
func (o Overlay) Badge() string {
	waiting := map[string]int{}
	for i, it := range o.items {
		if i == 0 && o.Open() {
			continue
		}
		waiting[it.waits()]++
	}
	a, e := waiting["approval"], waiting["request"]
	var parts []string
	if a > 0 {
		parts = append(parts, plural(a, "approval")+" waiting")
	}
	if e > 0 {
		parts = append(parts, plural(e, "request")+" for input waiting")
	}
	if len(parts) == 0 {
		return ""
	}
	open := " — press a"
	if o.Open() {
		open = " after this one"
	}
	return "⚑ " + strings.Join(parts, ", ") + open
}

func plural(n int, w string) string {
	s := itoa(n) + " " + w
	if n != 1 {
		s += "s"
	}
	return s
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// KeysFree reports whether the open question waits for a choice and would not
// miss a key taken by someone else (the approval queue, the tour): it is armed,
// nothing is typed into it, and no allow waits for its chord.
func (o Overlay) KeysFree() bool {
	if !o.Open() || !o.g.armed || o.Typing() {
		return false
	}
	if o.items[0].holdsKeys() {
		return false
	}
	return true
}
