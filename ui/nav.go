package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/airlock-mcp/airlock/ui/screen"
	"github.com/airlock-mcp/airlock/ui/screens/channels"
	"github.com/airlock-mcp/airlock/ui/screens/hazards"
	"github.com/airlock-mcp/airlock/ui/screens/logs"
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
	screenLogs:    {func(m *Model) screen.Screen { return &m.logs }, footerGlobal},
	screenExport:  {func(m *Model) screen.Screen { return &m.export }, footerGlobal},
	screenHazards: {func(m *Model) screen.Screen { return &m.hazards }, footerExportQuit},
	screenRes:     {func(m *Model) screen.Screen { return &m.res }, footerGlobal},
	screenPrompts: {func(m *Model) screen.Screen { return &m.prompts }, footerGlobal},
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
	switch i := intent.(type) {
	case screen.Back:
		m.pop()
	case logs.NextSource:
		m.nextLogSource()
	case hazards.OpenTool:
		if t, ok := m.snap.Tool(i.Ref.Server, i.Ref.Tool); ok {
			m.openDetail(t)
		}
	case hazards.Disable:
		return m, tea.Batch(cmd, m.toggleDisabled(i.Ref))
	case hazards.Policy:
		return m, tea.Batch(cmd, m.cyclePolicy(i.Ref))
	case hazards.Trust:
		return m, tea.Batch(cmd, m.cycleTrust(i.Server))
	case channels.Read:
		return m.startRead(i.Server.Name, i.URI)
	case channels.FillTemplate:
		return m.openTemplateForm(i.Server, i.Template)
	case channels.Subscribe:
		return m.subscribe(i)
	case channels.GetPrompt:
		return m.openPromptForm(i.Server, i.Prompt)
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
