package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/screen"
	"github.com/airlock-mcp/airlock/ui/screens/call"
	"github.com/airlock-mcp/airlock/ui/screens/channels"
	"github.com/airlock-mcp/airlock/ui/screens/content"
	"github.com/airlock-mcp/airlock/ui/screens/detail"
	"github.com/airlock-mcp/airlock/ui/screens/grants"
	"github.com/airlock-mcp/airlock/ui/screens/hazards"
	"github.com/airlock-mcp/airlock/ui/screens/history"
	"github.com/airlock-mcp/airlock/ui/screens/logs"
	"github.com/airlock-mcp/airlock/ui/screens/output"
	"github.com/airlock-mcp/airlock/ui/screens/result"
	"github.com/airlock-mcp/airlock/ui/screens/rules"
	"github.com/airlock-mcp/airlock/ui/screens/serverinfo"
)

// Screen navigation is one stack: opening a screen pushes the one it was opened
// from, back pops it, so esc retraces every step however the screens were
// reached (details → hazards → details of another tool → logs, and back). The
// call form, the running call and its result take one place on the stack: the
// call replaces its form and the result replaces the call, so back from a result
// returns to where the form was opened.

// maxNav bounds the stack; the oldest steps are forgotten first (back then ends
// on the main screen).
const maxNav = 32

// push opens s over the current screen.
func (m *Model) push(s screenID) {
	if s == m.screen {
		return
	}
	m.nav = append(m.nav, m.screen)
	if len(m.nav) > maxNav {
		m.nav = append([]screenID(nil), m.nav[len(m.nav)-maxNav:]...)
	}
	m.screen = s
}

// pop returns to the screen under the current one (the main screen at the bottom).
func (m *Model) pop() {
	m.screen = m.under()
	if n := len(m.nav); n > 0 {
		m.nav = m.nav[:n-1]
	}
}

// under is the screen back returns to.
func (m *Model) under() screenID {
	if n := len(m.nav); n > 0 {
		return m.nav[n-1]
	}
	return screenMain
}

// registration is how the root holds a screen by the screen interface: where the
// screen lives in the model and which global keys follow its own in the footer.
type registration struct {
	get    func(m *Model) screen.Screen
	footer footerKind
}

// registry is every screen the root holds by the screen interface. Adding a
// screen is its package, its id and one line here: the root then sizes it,
// draws it, gives it the keys while it is on top and shows its keys.
var registry = map[screenID]registration{
	screenLogs:     {func(m *Model) screen.Screen { return &m.logs }, footerGlobal},
	screenExport:   {func(m *Model) screen.Screen { return &m.export }, footerGlobal},
	screenActivity: {func(m *Model) screen.Screen { m.activity.Log = m.acts; return &m.activity }, footerGlobal},
	screenCall:     {func(m *Model) screen.Screen { return m.callScreen() }, footerGlobal},
	screenDetail:   {func(m *Model) screen.Screen { return &m.detail }, footerLogsQuit},
	screenGrants:   {func(m *Model) screen.Screen { return &m.grants }, footerGlobal},
	screenInfo:     {func(m *Model) screen.Screen { return &m.info }, footerLogsQuit},
	screenResult:   {func(m *Model) screen.Screen { return &m.result }, footerLogsQuit},
	screenRules:    {func(m *Model) screen.Screen { return &m.rules }, footerGlobal},
	screenOutput:   {func(m *Model) screen.Screen { return &m.output }, footerGlobal},
	screenHazards:  {func(m *Model) screen.Screen { return &m.hazards }, footerExportQuit},
	screenRes:      {func(m *Model) screen.Screen { return &m.res }, footerGlobal},
	screenPrompts:  {func(m *Model) screen.Screen { return &m.prompts }, footerGlobal},
	screenHistory:  {func(m *Model) screen.Screen { return &m.history }, footerGlobal},
	screenRoots:    {func(m *Model) screen.Screen { return &m.roots }, footerLogsQuit},
}

// callScreen is the running call's screen, given the spinner's frame and the
// time it draws.
func (m *Model) callScreen() screen.Screen {
	m.call.Frame, m.call.Now = m.spinner.View(), m.now()
	return &m.call
}

// registered is the screen s by the screen interface, or nil when the root
// still routes it by hand.
func (m *Model) registered(s screenID) screen.Screen {
	if r, ok := registry[s]; ok {
		return r.get(m)
	}
	return nil
}

// carry does what a screen's intent asks for; cmd is the screen's own.
func (m *Model) carry(intent screen.Intent, cmd tea.Cmd) (*Model, tea.Cmd) {
	switch intent := intent.(type) {
	case screen.Back:
		m.pop()
	case logs.NextSource:
		m.nextLogSource()
	case content.Save:
		m.status = "saving…"
		return m, tea.Batch(cmd, intent.Cmd(m.opts.SaveDir, m.now()))
	case call.Cancelling:
		m.status = "cancelling the call…"
	case detail.Call:
		return m.openForm(intent.Tool, false)
	case detail.Accept:
		ref := intent.Tool.Ref
		return m, tea.Batch(cmd, m.q.AskAccept(ref, common.Inline(m.St, ref.Qualified(), 40), intent.Tool.Fingerprint))
	case history.Refreshing:
		m.history.Refresh(m.historyOf(intent.Server, intent.Agent))
	case history.NextSource:
		m.nextHistorySource(intent.Server, intent.Agent)
	case serverinfo.Resources:
		m.openResources(intent.Server)
	case serverinfo.Prompts:
		m.openPrompts(intent.Server)
	case serverinfo.OpenRoots:
		m.openRoots(intent.Server)
	case serverinfo.AddRoot:
		m.status = "adding a root to " + common.Inline(m.St, intent.Server, 32) + "…"
		return m, tea.Batch(cmd, addRootCmd(m.sess, intent.Server, intent.Entry, m.roots.Server.Roots == nil))
	case serverinfo.RemoveRoot:
		m.status = "removing a root of " + common.Inline(m.St, intent.Server, 32) + "…"
		return m, tea.Batch(cmd, removeRootCmd(m.sess, intent.Server, intent.URI))
	case serverinfo.Ping:
		m.status = "pinging " + common.Inline(m.St, intent.Server, 32) + "…"
		return m, tea.Batch(cmd, pingCmd(m.sess, intent.Server))
	case serverinfo.LogLevel:
		m.status = "asking " + common.Inline(m.St, intent.Server, 32) + " for log messages from " + intent.Level + " up…"
		return m, tea.Batch(cmd, logLevelCmd(m.sess, intent.Server, intent.Level))
	case grants.Revoke:
		return m.revokeGrant(intent.Grant)
	case grants.ClearTaint:
		c := intent.Context
		return m, m.q.AskClearTaint(c.Name, c.Taint, common.Inline(m.St, c.Name, 40), intent.Lines)
	case rules.Revoke:
		return m.revokeRule(intent.Rule)
	case rules.Off:
		return m.ruleOff(intent.Rule)
	case result.Again:
		t := intent.Tool
		if cur, ok := m.snap.Tool(t.Ref.Server, t.Ref.Tool); ok {
			t = cur
		}
		return m.openForm(t, true)
	case output.Again:
		return m.outputAgain(intent.Out)
	case hazards.OpenTool:
		if t, ok := m.snap.Tool(intent.Ref.Server, intent.Ref.Tool); ok {
			m.openDetail(t)
		}
	case hazards.Disable:
		return m, tea.Batch(cmd, m.toggleDisabled(intent.Ref))
	case hazards.Policy:
		return m, tea.Batch(cmd, m.cyclePolicy(intent.Ref))
	case hazards.Trust:
		return m, tea.Batch(cmd, m.cycleTrust(intent.Server))
	case channels.Read:
		return m.startRead(intent.Server.Name, intent.URI)
	case channels.FillTemplate:
		return m.openTemplateForm(intent.Server, intent.Template)
	case channels.Subscribe:
		return m.subscribe(intent)
	case channels.GetPrompt:
		return m.openPromptForm(intent.Server, intent.Prompt)
	}
	return m, cmd
}

// footerKind is which global keys follow a screen's own in the footer.
type footerKind int

const (
	// footerGlobal: every global key the footer has room for.
	footerGlobal footerKind = iota
	// footerLogsQuit: help, logs and quit, for screens whose own keys are many.
	footerLogsQuit
	// footerExportQuit: help, export and quit (the hazards screen's changes).
	footerExportQuit
)

// keys is the global keys of the footer of a screen of this kind.
func (f footerKind) keys(m *Model, global []key.Binding) []key.Binding {
	switch f {
	case footerLogsQuit:
		return append(global[:1:1], m.keys.Logs, m.keys.Quit)
	case footerExportQuit:
		return append(global[:1:1], m.keys.Export, m.keys.Quit)
	}
	return global
}
