package ui

import (
	"charm.land/bubbles/v2/key"
)

// GlobalKeyMap holds the keys the root handles on every screen that is not taking
// text input. It implements help.KeyMap.
type GlobalKeyMap struct {
	// Interrupt quits from anywhere, even while text is being typed; like Quit it
	// asks first while a call runs or approvals wait.
	Interrupt key.Binding
	Quit      key.Binding
	Help      key.Binding
	Logs      key.Binding
	// Activity opens every call (the person's and agents') and status message.
	Activity key.Binding
	// Demo triggers the demo's rug pull; it is unbound unless Options.Demo is set.
	Demo key.Binding
	// Hazards opens the hazards view, where a tool of a leg can be turned off,
	// given a policy or have its server's trust changed for this session.
	Hazards key.Binding
	// Queue opens a question that waits behind the badge (it still arms), and on
	// an open, armed dialog lists the approvals that wait, oldest first; it is
	// enabled while any question waits.
	Queue key.Binding
	// Grants opens the Grants view: every context's grants (revoke) and taint
	// (clear, through a guarded question).
	Grants key.Binding
	// Rules opens the Rules view: every argument rule, where it came from, how
	// often it matched; revoke a remembered one.
	Rules key.Binding
	// History opens the protocol history of the server in view: every JSON-RPC
	// message both ways.
	History key.Binding
	// Export writes the session's what-if changes as a TOML fragment; it is
	// enabled while there are changes.
	Export key.Binding
	// Reset undoes every what-if change after a (guarded) yes; it is enabled
	// while there are changes.
	Reset key.Binding
}

// DefaultGlobalKeyMap returns the global keys.
func DefaultGlobalKeyMap() GlobalKeyMap {
	return GlobalKeyMap{
		Interrupt: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit from anywhere")),
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Logs:      key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "logs")),
		Activity:  key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "activity: every call, agents' too")),
		Demo:      key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "demo: rug-pull notes")),
		Hazards:   key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "hazards: see them, try what-if changes")),
		Queue:     key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "open waiting question / queue")),
		Export:    key.NewBinding(key.WithKeys("E"), key.WithHelp("E", "export what-if changes")),
		Grants:    key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "grants & taint: revoke a grant, clear a taint")),
		Reset:     key.NewBinding(key.WithKeys("U"), key.WithHelp("U", "undo every what-if change")),
		Rules:     key.NewBinding(key.WithKeys("K"), key.WithHelp("K", "rules: config and remembered, revoke")),
		History:   key.NewBinding(key.WithKeys("H"), key.WithHelp("H", "history: the protocol messages of a server or agent session")),
	}
}

// ShortHelp implements help.KeyMap.
func (k GlobalKeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Help, k.Quit} }

// FullHelp implements help.KeyMap.
func (k GlobalKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Help, k.Activity, k.Logs, k.History, k.Quit, k.Interrupt}, {k.Hazards, k.Grants, k.Rules, k.Queue, k.Export, k.Reset, k.Demo}}
}

// TourKeyMap holds the keys of the guided demo tour. They are taken before the
// screen's own keys while the tour runs and nothing takes text input.
type TourKeyMap struct {
	Next  key.Binding
	Prev  key.Binding
	Leave key.Binding
}

// DefaultTourKeyMap returns the tour's keys.
func DefaultTourKeyMap() TourKeyMap {
	return TourKeyMap{
		Next:  key.NewBinding(key.WithKeys("space", "n"), key.WithHelp("space/n", "next")),
		Prev:  key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "back")),
		Leave: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "leave tour")),
	}
}

// ShortHelp implements help.KeyMap.
func (k TourKeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Next, k.Prev, k.Leave} }

// FullHelp implements help.KeyMap.
func (k TourKeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{{k.Next, k.Prev, k.Leave}} }
