package ui

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
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

// screenID is what fills the body.
type screenID int

const (
	screenMain     screenID = iota // servers and tools panes
	screenDetail                   // one tool's details
	screenForm                     // the call form, drawn over the screen it came from
	screenCall                     // the person's call while it runs
	screenResult                   // the call's result
	screenLogs                     // logs
	screenHazards                  // every hazard with the tools of each leg
	screenExport                   // the exported what-if fragment
	screenGrants                   // every context's grants and taint (ui/screens/grants)
	screenActivity                 // every call and status message, newest first
	screenInfo                     // one server's info (ui/screens/serverinfo)
	screenRes                      // one server's resources and templates
	screenPrompts                  // one server's prompts
	screenOutput                   // what a resource read or a prompt get returned
	screenRules                    // every argument rule, config and remembered (ui/screens/rules)
	screenHistory                  // one server's protocol messages (ui/screens/history)
	screenRoots                    // one server's roots, to add and remove (ui/screens/serverinfo)
)

// pane is the focused pane of the main screen.
type pane int

const (
	paneServers pane = iota
	paneTools
)

// Model is airlock's root model. It owns the layout, the focus, the global keys and
// the modal queues; it broadcasts resizes and session events to every child and
// sends input only to the one that has focus. Build it with New; Run drives it.
//
// Its methods take a pointer: the model holds its children's styles by value (over
// 100 kB), and as a value bubbletea would copy it to the heap on every message.
// Nothing outside the event loop's goroutine may hold it: a tea.Cmd takes the values
// it needs before it is returned (see readCmd).
type Model struct {
	ctx  context.Context
	sess *session.Manager
	opts Options
	now  func() time.Time

	*common.Common
	keys   GlobalKeyMap
	help   help.Model
	width  int
	height int
	layout layout

	snap *model.Snapshot
	// gens is the newest connection generation seen per server: a ServerChanged of
	// an older connection is stale and dropped.
	gens  map[string]uint64
	taint trust.Taint
	// clearing counts the clears of a context's taint under way (the person
	// answered; taint.json's lock may be another airlock's): the status line says
	// so ahead of the taint until each ends.
	clearing map[string]int
	// rulesProblem and taintProblem are why rules.toml and taint.json cannot be read
	// (nil: they can); refreshed with taint.
	rulesProblem, taintProblem error
	// ratesProblem is why rates.json could not be read or written for the last call
	// under a rate limit (nil: it could, or none is set).
	ratesProblem error

	screen screenID
	// nav is the screens under the current one, oldest first: opening a screen
	// pushes the current one, back (esc) pops it (see nav.go).
	nav   []screenID
	focus pane

	servers panes.ServersPane
	tools   panes.ToolsPane
	detail  detail.Model
	form    form.Form
	formFor model.ToolInfo // the tool the call form is for
	call    call.Model
	result  result.Model
	logs    logs.Model
	ring    logs.Ring
	// acts is the session's activity; activity the view of it.
	acts     activity.Log
	activity activity.Model
	overlay  helpview.Model
	hazards  hazards.Model
	export   export.Model
	queue    queue.Model
	grants   grants.Model
	info     serverinfo.Model
	history  history.Model
	roots    serverinfo.Roots
	notifier notifier
	// res, prompts and output are the explore views (explore.go); ex is
	// their state in the root.
	res     channels.ResourcesView
	prompts channels.PromptsView
	output  output.Model
	ex      explore
	rules   rules.Model

	// over is the session's live what-if changes as of the snapshot, and
	// configTrust each server's trust in the config (what three T presses return to).
	over        model.Overrides
	configTrust map[string]trust.ServerTrust
	// loosen holds the what-if changes that wait for a guarded yes, by their
	// question's tag; loosenSeq numbers the tags.
	loosen    map[string]loosening
	loosenSeq int

	tour tourState

	// q is the one overlay that owns every question airlock asks (approvals,
	// servers' requests for input, quit, accepting a changed definition) and
	// their input guard; initCmds are its timers started by New.
	q        question.Overlay
	initCmds []tea.Cmd

	spinner  spinner.Model
	spinning bool
	// banner is the rendered risk banner, kept until the hazards or the width
	// change: a leg may list thousands of tools.
	banner []string

	// status is the last thing that happened, in airlock's words with any
	// server-controlled part escaped.
	status string
	// auditSeen is the audit log's problem last added to Activity (noteAudit).
	auditSeen string
	closed    bool

	// logsDirty says log lines arrived since the logs view was drawn; logsTick
	// that a redraw is scheduled.
	logsDirty, logsTick bool

	// progress is the running call's progress pump.
	progCh <-chan model.Progress
	done   <-chan struct{}
}

// New builds the root model over a Manager. Run calls it; tests use it to drive
// Update directly.
func New(ctx context.Context, m *session.Manager, opts Options) Model {
	now := opts.now
	if now == nil {
		now = time.Now
	}
	st := theme.New(true, opts.NoColor)
	keys := DefaultGlobalKeyMap()
	if opts.Demo == nil {
		keys.Demo.Unbind()
	}
	h := help.New()
	h.Styles = helpStyles(&st)
	com := &common.Common{St: &st}
	model := Model{
		ctx:         ctx,
		sess:        m,
		opts:        opts,
		now:         now,
		Common:      com,
		keys:        keys,
		help:        h,
		width:       80,
		height:      24,
		gens:        map[string]uint64{},
		focus:       paneTools,
		servers:     panes.NewServersPane(com),
		tools:       panes.NewToolsPane(com),
		detail:      detail.New(com),
		call:        call.New(com),
		result:      result.NewModel(com),
		logs:        logs.New(com),
		activity:    activity.New(com),
		overlay:     helpview.New(com),
		hazards:     hazards.New(com),
		export:      export.New(com),
		queue:       queue.New(com),
		grants:      grants.New(com),
		info:        serverinfo.New(com),
		history:     history.New(com),
		roots:       serverinfo.NewRoots(com),
		res:         channels.NewResourcesView(com),
		prompts:     channels.NewPromptsView(com),
		output:      output.New(com),
		rules:       rules.New(com, trust.DescribeWhen),
		configTrust: configTrusts(m),
		notifier:    newNotifier(opts),
		tour:        tourState{keys: DefaultTourKeyMap()},
		spinner:     spinner.New(spinner.WithSpinner(spinner.MiniDot)),
		status:      "started",
	}
	if opts.Notice != "" {
		model.status = common.Inline(&st, opts.Notice, 400)
		// The first server's status replaces it at once: Activity keeps it.
		model.acts.Add(activity.Entry{At: model.now(), Status: model.status})
	}
	model.detail.Gateway = opts.GatewayURL != ""
	model.q = question.New(st, question.MinQuiet, opts.guardNow, !opts.NoBell, approval.Rules{})
	model.tools.Focused = true
	model.setSnapshot(m.Snapshot())
	for _, p := range m.Engine().Pending() {
		_, cmd := model.q.AddApproval(p, false)
		model.initCmds = append(model.initCmds, cmd)
	}
	model.relayout(true)
	if opts.Tour {
		model.tour.on = true
		model.tourGo(0) // the first step starts nothing
		model.relayout(false)
		model.hazards.Refresh()
	}
	model.updateKeys()
	model.spinning = model.needSpinner()
	return model
}

// Init asks for the terminal's background (light or dark), starts the session
// event pump and, while servers connect, the spinner.
func (m *Model) Init() tea.Cmd {
	cmds := append([]tea.Cmd{tea.RequestBackgroundColor}, m.initCmds...)
	if !m.opts.noPump {
		cmds = append(cmds, waitEvent(m.ctx, m.sess))
	}
	if m.spinning {
		cmds = append(cmds, m.spinner.Tick)
	}
	return tea.Batch(cmds...)
}

// Update routes one message: sizes, theme and session events go to every child;
// keys go to the topmost modal, else to the screen and pane that have focus.
// Afterwards the layout follows what is open (the tour's caption is one line
// while a modal is open) and the global keys follow the state.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg.(type) {
	case tea.KeyPressMsg, tea.PasteMsg:
		// Every key and paste, wherever it goes, restarts the guard of a
		// question that is arming and delays one that waits to open.
		m.q.Input()
	}
	prev := m.status
	mm, cmd := m.update(msg)
	if mm.status != prev && mm.status != "" {
		// Every status message lands in Activity too, so nothing the status
		// line cuts or replaces is lost.
		mm.acts.Add(activity.Entry{At: mm.now(), Status: mm.status})
	}
	mm.noteAudit()
	if mm.queue.Open && mm.q.Count(question.KindApproval) == 0 {
		mm.queue.Open = false // every call in it was answered or withdrawn
	}
	mm.relayout(false)
	if mm.screen == screenHazards {
		mm.hazards.Refresh()
	}
	if mm.screen == screenGrants {
		mm.refreshGrants()
	}
	if mm.screen == screenRules {
		switch msg := msg.(type) {
		case whatIfMsg:
			mm.refreshRules() // a rule turned off or on
		case eventMsg:
			switch msg.event.(type) {
			case model.CallFinished, model.OverridesChanged:
				mm.refreshRules() // a call may have matched a rule
			}
		}
	}
	mm.updateKeys()
	return mm, cmd
}

// updateKeys enables the global keys that work in the current state.
func (m *Model) updateKeys() {
	m.keys.Queue.SetEnabled(m.q.Len() > 0)
	m.keys.Export.SetEnabled(hazards.OverrideCount(m.over) > 0)
	m.keys.Reset.SetEnabled(hazards.OverrideCount(m.over) > 0)
	m.overlay.Keys.Tour.SetEnabled(m.opts.Demo != nil && !m.tour.on)
}

func (m *Model) update(msg tea.Msg) (*Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.relayout(true)
		return m, nil
	case tea.BackgroundColorMsg:
		m.setTheme(msg.IsDark())
		return m, nil
	case eventMsg:
		cmd := m.handleEvent(msg.event)
		m.refreshHistory()
		if m.opts.noPump {
			return m, cmd
		}
		return m, tea.Batch(cmd, waitEvent(m.ctx, m.sess))
	case eventsMsg:
		cmds := make([]tea.Cmd, 0, len(msg)+1)
		for _, e := range msg {
			cmds = append(cmds, m.handleEvent(e))
		}
		m.refreshHistory()
		if !m.opts.noPump {
			cmds = append(cmds, waitEvent(m.ctx, m.sess))
		}
		return m, tea.Batch(cmds...)
	case sessionClosedMsg:
		m.closed = true
		m.status = "the session closed"
		return m, nil
	case spinner.TickMsg:
		if !m.needSpinner() {
			m.spinning = false
			return m, nil
		}
		var cmd tea.Cmd
		m.spinning = true
		m.spinner, cmd = m.spinner.Update(msg)
		m.servers.Frame = m.spinner.View()
		return m, cmd
	case logsRefreshMsg:
		m.logsTick = false
		if m.logsDirty && m.screen == screenLogs {
			m.logs.Render(m.ring)
		}
		m.logsDirty = false
		return m, nil
	case callDoneMsg:
		return m.callDone(msg)
	case progressMsg:
		if msg.gen != m.call.Gen || !m.call.Running {
			return m, nil
		}
		m.call.SetProgress(msg.p)
		return m, waitProgress(msg.gen, m.progCh, m.done)
	case answeredMsg:
		if msg.err != nil {
			m.status = "could not answer approval #" + strconv.FormatUint(msg.id, 10) + ": " + common.Inline(m.St, msg.err.Error(), 80)
		}
		return m, nil
	case elicitAnsweredMsg:
		if msg.err != nil {
			m.status = "could not answer the request for input: " + common.Inline(m.St, msg.err.Error(), 80)
		}
		return m, nil
	case reconnectedMsg:
		if msg.err != nil {
			m.status = "could not reconnect " + common.Inline(m.St, msg.server, 32) + ": " + common.Inline(m.St, msg.err.Error(), 80)
		}
		return m, nil
	case pinsAcceptedMsg:
		switch {
		case msg.err != nil:
			m.status = "✗ could not accept " + common.Inline(m.St, msg.ref.Qualified(), 40) + ": " + common.Inline(m.St, msg.err.Error(), 100)
		case len(msg.accepted) == 0:
			m.status = "nothing to accept for " + common.Inline(m.St, msg.ref.Qualified(), 40)
		default:
			m.status = "✓ " + common.Inline(m.St, strings.Join(msg.accepted, "; "), 120)
		}
		return m, nil
	case demoDoneMsg:
		m.status = "demo: notes changed create_note's definition; watch it become ⊘ blocked (changed since pinned)"
		return m, nil
	case whatIfMsg:
		m.applyWhatIf(msg)
		return m, nil
	case exportedMsg:
		if msg.err != nil {
			m.status = "✗ could not export the changes: " + common.Inline(m.St, msg.err.Error(), 100)
			return m, nil
		}
		m.export.Show(msg.path, msg.fragment)
		if m.screen != screenExport {
			m.push(screenExport)
		}
		m.status = "✓ exported to " + common.Inline(m.St, msg.path, 60) + " · your config was not modified"
		return m, nil
	case queue.TickMsg:
		if m.queue.Open {
			return m, queue.Tick()
		}
		return m, nil
	case taintClearedMsg:
		return m.taintCleared(msg)
	case readDoneMsg:
		return m.readDone(msg)
	case subscribedMsg:
		return m.subscribed(msg)
	case completeTickMsg:
		return m.completeNow(msg)
	case completedMsg:
		return m.completed(msg)
	case output.SavedMsg:
		if msg.Gen == m.output.Gen {
			m.output.SetSaved(msg.Paths)
		}
		m.status = msg.Status(m.St)
		return m, nil
	case pingedMsg:
		m.pinged(msg)
		return m, nil
	case logLevelMsg:
		m.logLevelSet(msg)
		return m, nil
	case rootsEditedMsg:
		m.rootsEdited(msg)
		return m, nil
	case history.SavedMsg:
		if msg.Err == nil {
			m.history.SetSaved(msg.Paths)
		}
		m.status = msg.Status(m.St)
		return m, nil
	case result.SavedMsg:
		if msg.Gen == m.result.Gen {
			m.result.SetSaved(msg.Paths)
		}
		m.status = msg.Status(m.St)
		return m, nil
	case ruleRevokedMsg:
		return m.ruleRevoked(msg)
	case tourFetchedMsg:
		return m, m.tourFetched(msg)
	case tourSentMsg:
		m.tourSent(msg)
		return m, nil
	case tea.FocusMsg:
		m.notifier.blurred = false
		return m, m.q.Refocus()
	case tea.BlurMsg:
		m.notifier.blurred = true
		return m, m.stillWaiting()
	case notifiedMsg:
		m.notified(msg)
		return m, nil
	case question.TickMsg:
		var cmd tea.Cmd
		m.q, cmd = m.q.Tick(msg, m.typing())
		return m, cmd
	case tea.KeyPressMsg:
		return m.handleKey(msg)
	}
	return m.forward(msg)
}

// forward gives any other message (a paste, a cursor blink) to whatever takes text
// input now.
func (m *Model) forward(msg tea.Msg) (*Model, tea.Cmd) {
	var cmd tea.Cmd
	switch {
	case m.queue.Open:
	case m.q.Open():
		var out question.Outcome
		m.q, out, cmd = m.q.Update(msg)
		if out != nil {
			var c2 tea.Cmd
			m, c2 = m.applyOutcome(out)
			return m, tea.Batch(cmd, c2)
		}
	case m.overlay.Open:
	case m.screen == screenForm:
		var act form.Action
		m.form, act, cmd = m.form.Update(msg)
		if act != nil {
			return m.applyForm(act, cmd)
		}
	case m.screen == screenMain && m.tools.Typing:
		m.tools, _, cmd = m.tools.Update(msg)
	case m.screen == screenRoots && m.roots.Typing():
		_, cmd = m.roots.Update(msg)
	}
	return m, cmd
}

// handleKey routes a key press: ctrl+c first, then the tour's keys (unless text
// is being typed or a question is not ready for them), then the approval queue,
// the open question, help, the call form, then the global keys (unless text is
// being typed), then the screen.
func (m *Model) handleKey(k tea.KeyPressMsg) (*Model, tea.Cmd) {
	if key.Matches(k, m.keys.Interrupt) {
		if kind, ok := m.q.Front(); ok && kind == question.KindQuit && m.q.Open() {
			// ctrl+c on the quit question quits, armed or not: quitting
			// denies what waits and allows nothing.
			return m.quit()
		}
		return m.requestQuit()
	}
	if m.tour.on && m.tourKeysFree() {
		switch {
		case key.Matches(k, m.tour.keys.Next):
			return m, m.tourGo(m.tour.step + 1)
		case key.Matches(k, m.tour.keys.Prev):
			return m, m.tourGo(m.tour.step - 1)
		case key.Matches(k, m.tour.keys.Leave) && !m.modalOpen():
			return m, m.leaveTour("tour left")
		}
	}
	switch {
	case m.queue.Open:
		items := m.queueItems()
		var act queue.Action
		var cmd tea.Cmd
		m.queue, act, cmd = m.queue.Update(k, len(items))
		switch act {
		case queue.Close:
			m.queue.Open = false
			cmd = tea.Batch(cmd, m.q.Rearm()) // keys typed into the queue never answer the question under it
		case queue.Answer:
			cmd = tea.Batch(cmd, m.q.BringToFront(items[m.queue.Cursor].ID))
			m.queue.Open = false
		}
		return m, cmd
	case m.q.Open() && m.q.KeysFree() && key.Matches(k, m.keys.Queue) && m.q.Count(question.KindApproval) > 0:
		// Only while the open question waits for a choice: a reason or an
		// elicitation being typed takes every key.
		m.queue.Open = true
		m.queue.Cursor = 0
		m.queue.SetCount(m.q.Count(question.KindApproval))
		return m, queue.Tick()
	case m.q.Open():
		var out question.Outcome
		var cmd tea.Cmd
		m.q, out, cmd = m.q.Update(k)
		if qa, ok := out.(question.QuitAnswer); ok && qa.Quit {
			return m.quit()
		}
		var c2 tea.Cmd
		m, c2 = m.applyOutcome(out)
		return m, tea.Batch(cmd, c2)
	case m.overlay.Open:
		intent, cmd := m.overlay.Update(k)
		if _, ok := intent.(helpview.StartTour); ok {
			return m, tea.Batch(cmd, m.startTour())
		}
		return m, cmd
	case m.screen == screenForm:
		var act form.Action
		var cmd tea.Cmd
		m.form, act, cmd = m.form.Update(k)
		return m.applyForm(act, cmd)
	}

	if !m.typing() {
		switch {
		case key.Matches(k, m.keys.Queue) && m.q.Len() > 0:
			return m, m.q.Show()
		case m.q.Len() == 0 && key.Matches(k, DefaultGlobalKeyMap().Queue) && m.screen != screenCall:
			// The key is off while nothing waits; say so rather than nothing.
			m.status = "nothing waits: no approval and no request for input (a opens them when one does)"
			return m, nil
		case key.Matches(k, m.keys.Quit):
			return m.requestQuit()
		case key.Matches(k, m.keys.Help):
			m.overlay.Show(m.helpSections())
			return m, nil
		case key.Matches(k, m.keys.Logs) && m.screen != screenCall && m.screen != screenLogs:
			m.logs.Source = ""
			m.push(screenLogs)
			m.logs.Render(m.ring)
			m.logs.VP.GotoBottom()
			return m, nil
		case key.Matches(k, m.keys.Activity) && m.screen != screenCall && m.screen != screenActivity:
			m.activity.Reset()
			m.push(screenActivity)
			return m, nil
		case key.Matches(k, m.keys.Demo) && m.opts.Demo != nil:
			m.status = "demo: asking the notes server to change create_note (a rug pull)…"
			return m, demoCmd(m.opts.Demo)
		case key.Matches(k, m.keys.Hazards) && m.screen != screenCall && m.screen != screenHazards:
			m.openHazards()
			return m, nil
		case key.Matches(k, m.keys.Grants) && m.screen != screenCall && m.screen != screenGrants:
			m.openGrants()
			return m, nil
		case key.Matches(k, m.keys.History) && m.screen != screenCall && m.screen != screenHistory:
			m.openHistory(m.historyServer())
			return m, nil
		case key.Matches(k, m.keys.Rules) && m.screen != screenCall && m.screen != screenRules:
			m.openRules()
			return m, nil
		case key.Matches(k, m.keys.Export) && m.screen != screenCall && m.screen != screenExport:
			m.status = "exporting the what-if changes…"
			return m, exportCmd(m.sess)
		case key.Matches(k, m.keys.Reset) && m.screen != screenCall:
			return m, m.askReset()
		}
	}

	if s := m.registered(m.screen); s != nil {
		intent, cmd := s.Update(k)
		return m.carry(intent, cmd)
	}
	switch m.screen {
	}
	return m.mainKey(k)
}

// openDetail shows a tool's details over the current screen; esc returns to it.
func (m *Model) openDetail(t model.ToolInfo) {
	m.detail.Open(t, detail.ServedNameOf(m.snap, &t), m.sess.Engine().Decide("", t), m.pinnedFor(t))
	m.push(screenDetail)
}

// showTool selects a tool in the tools pane (all servers, no filter) and opens
// its details.
func (m *Model) showTool(t model.ToolInfo) {
	m.setFocus(paneTools)
	m.servers.Cursor = 0
	m.servers.UpdateKeys()
	m.tools.SetServer("")
	m.tools.Text, m.tools.Tier, m.tools.Hint = "", panes.AnyTier, panes.HintAny
	m.tools.Refilter()
	for i, r := range m.tools.Rows {
		if m.tools.Tools[r].Ref == t.Ref {
			m.tools.Cursor, m.tools.Chosen = i, true
		}
	}
	m.tools.Clamp()
	m.tools.UpdateKeys()
	m.nav, m.screen = nil, screenMain
	m.openDetail(t)
}

// openHazards shows the hazards view over the current screen; esc returns to it.
func (m *Model) openHazards() {
	m.hazards.Open()
	m.push(screenHazards)
}

// mainKey handles a key on the main screen: it goes to the focused pane.
func (m *Model) mainKey(k tea.KeyPressMsg) (*Model, tea.Cmd) {
	var cmd tea.Cmd
	if m.focus == paneServers {
		var act panes.ServersAction
		m.servers, act, cmd = m.servers.Update(k)
		switch act {
		case panes.ServersMoved:
			m.tools.SetServer(m.servers.Selected())
			m.tools.ScopeFailure = m.scopeFailure()
		case panes.ServersFocusTools:
			m.setFocus(paneTools)
		case panes.ServersReconnect:
			name := m.servers.Selected()
			m.status = "reconnecting " + common.Inline(m.St, name, 32) + "…"
			return m, tea.Batch(cmd, reconnectCmd(m.sess, name))
		case panes.ServersTrust:
			return m, tea.Batch(cmd, m.cycleTrust(m.servers.Selected()))
		case panes.ServersInfo:
			m.openInfo(m.servers.Selected())
		}
		return m, cmd
	}
	var act panes.ToolsAction
	m.tools, act, cmd = m.tools.Update(k)
	switch act {
	case panes.ToolsOpen:
		if t, ok := m.tools.SelectedTool(); ok {
			m.openDetail(t)
		}
	case panes.ToolsCall:
		if t, ok := m.tools.SelectedTool(); ok {
			return m.openForm(t, false)
		}
	case panes.ToolsFocusServers:
		m.setFocus(paneServers)
	case panes.ToolsInfo:
		if t, ok := m.tools.SelectedTool(); ok {
			m.openInfo(t.Ref.Server)
		} else if m.tools.Server != "" {
			m.openInfo(m.tools.Server)
		}
	case panes.ToolsDisable, panes.ToolsPolicy, panes.ToolsTrust:
		t, ok := m.tools.SelectedTool()
		if !ok {
			break
		}
		switch act {
		case panes.ToolsDisable:
			return m, tea.Batch(cmd, m.toggleDisabled(t.Ref))
		case panes.ToolsPolicy:
			return m, tea.Batch(cmd, m.cyclePolicy(t.Ref))
		}
		return m, tea.Batch(cmd, m.cycleTrust(t.Ref.Server))
	}
	return m, cmd
}

func (m *Model) setFocus(p pane) {
	m.focus = p
	m.servers.Focused = p == paneServers
	m.tools.Focused = p == paneTools
}

// needSpinner reports whether anything spins: a connecting server or a call.
func (m *Model) needSpinner() bool {
	if m.call.Running {
		return true
	}
	for _, s := range m.servers.Servers {
		if s.Status == model.StatusConnecting {
			return true
		}
	}
	return false
}

// startSpinner starts the spinner's tick chain unless it runs.
func (m *Model) startSpinner() tea.Cmd {
	if m.spinning || !m.needSpinner() {
		return nil
	}
	m.spinning = true
	return m.spinner.Tick
}

// setSnapshot takes a new snapshot: every child that shows it is updated, and the
// layout follows the banner's height.
func (m *Model) setSnapshot(s *model.Snapshot) {
	m.snap = s
	m.over = m.sess.Overrides()
	changedTools, changedServers := changedSets(m.over)
	m.servers.Changed = changedServers
	m.servers.SetServers(s.Servers)
	m.tools.SetServer(m.servers.Selected())
	m.tools.ScopeFailure = m.scopeFailure()
	m.tools.Changed, m.tools.ChangedServers = changedTools, changedServers
	m.tools.SetTools(s.Tools)
	m.hazards.SetData(s, m.over, m.configTrust)
	if m.screen == screenDetail || slices.Contains(m.nav, screenDetail) {
		t := m.detail.Tool
		if cur, ok := s.Tool(t.Ref.Server, t.Ref.Tool); ok {
			m.detail.Refresh(cur, detail.ServedNameOf(s, &cur), m.sess.Engine().Decide("", cur), m.pinnedFor(cur))
		}
	}
	if m.screen == screenInfo || slices.Contains(m.nav, screenInfo) {
		m.refreshInfo()
	}
	if m.screen == screenRoots {
		m.refreshRoots()
	}
	m.refreshExplore()
	if !m.relayout(false) {
		m.refreshBanner() // a new layout has drawn it already
	}
}

// refreshBanner renders the risk banner for the current hazards and width.
func (m *Model) refreshBanner() {
	m.banner = hazards.BannerLines(m.St, m.snap.Hazards, m.connecting() > 0, m.layout.bannerH, m.layout.width)
}

// relayout recomputes the layout and gives every child its size. Unless forced it
// does nothing when the layout did not change, so a snapshot does not re-wrap the
// detail and result views. It reports whether it laid out (and drew the banner).
func (m *Model) relayout(force bool) bool {
	want := 0
	if m.snap != nil {
		want = len(m.snap.Hazards)
	}
	l := computeLayout(m.width, m.height, want, m.captionRows())
	l.followServers(m.servers.Want())
	if m.acts.Calls > 0 && l.bodyH > 8 {
		// The activity strip: the newest call, one row above the status line.
		l.stripH = 1
		l.bodyH--
	}
	if l == m.layout && !force {
		return false
	}
	m.layout = l
	m.servers.SetSize(l.serversW, l.bodyH)
	m.tools.SetSize(l.toolsW, l.bodyH)
	for _, r := range registry {
		r.get(m).SetSize(l.width, l.bodyH)
	}
	if m.screen == screenLogs {
		m.logs.Render(m.ring)
	}
	m.overlay.SetSize(l.modalW, l.modalH)
	m.queue.SetSize(l.modalW, l.modalH)
	m.q.SetSize(l.modalW, l.modalH)
	if m.screen == screenForm {
		m.form.SetSize(l.modalW, l.modalH)
	}
	m.help.SetWidth(l.width)
	if m.snap != nil {
		m.refreshBanner()
	}
	return true
}

// setTheme rebuilds the styles for a light or dark background: every child shares
// the root's Common, so one assignment restyles them all; the children that keep
// renderings redraw them. Dialogs already open keep the styles they were built with.
func (m *Model) setTheme(dark bool) {
	if m.St.Dark == dark {
		return
	}
	st := theme.New(dark, m.opts.NoColor)
	m.St = &st // every child shares it
	m.help.Styles = helpStyles(&st)
	m.servers.Restyle()
	m.tools.Restyle()
	m.call.Restyle()
	m.roots.Restyle()
	m.hazards.Dirty = true
	m.export.Render()
	m.q.SetStyles(st)
	m.relayout(true)
	m.refreshBanner()
	if m.detail.Tool.Ref.Tool != "" {
		m.detail.Render()
	}
}

// nextLogSource cycles the logs view between the event log and each server's kept
// stderr.
func (m *Model) nextLogSource() {
	names := make([]string, 0, len(m.snap.Servers))
	for _, s := range m.snap.Servers {
		names = append(names, s.Name)
	}
	next := ""
	if m.logs.Source == "" {
		if len(names) > 0 {
			next = names[0]
		}
	} else {
		for i, n := range names {
			if n == m.logs.Source && i+1 < len(names) {
				next = names[i+1]
			}
		}
	}
	m.logs.Source = next
	m.logs.Stderr = nil
	if next != "" {
		m.logs.Stderr = m.sess.Stderr(next)
	}
	m.logs.VP.SetContent("")
	m.logs.Render(m.ring)
	m.logs.VP.GotoBottom()
}
