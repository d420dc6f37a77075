package ui

import (
	"charm.land/bubbles/v2/key"
	"github.com/airlock-mcp/airlock/ui/common"
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
	}
}

// ShortHelp implements help.KeyMap.
func (k GlobalKeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Help, k.Quit} }

// FullHelp implements help.KeyMap.
func (k GlobalKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Help, k.Activity, k.Logs, k.Quit, k.Interrupt}, {k.Hazards, k.Grants, k.Rules, k.Queue, k.Export, k.Reset, k.Demo}}
}

// ServersKeyMap holds the keys of the servers pane.
type ServersKeyMap struct {
	Up        key.Binding
	Down      key.Binding
	Top       key.Binding
	Bottom    key.Binding
	Tools     key.Binding
	NextPane  key.Binding
	Reconnect key.Binding
	// Trust cycles the selected server's trust for this session (what-if):
	// trusted → untrusted → blocked → trusted.
	Trust key.Binding
	// Info opens the selected server's info view (and from it its resources
	// and prompts).
	Info key.Binding
}

// DefaultServersKeyMap returns the servers pane's keys.
func DefaultServersKeyMap() ServersKeyMap {
	return ServersKeyMap{
		Up:        key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:      key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Top:       key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		Bottom:    key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
		Tools:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "its tools")),
		NextPane:  key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "tools pane")),
		Reconnect: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reconnect")),
		Trust:     key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "cycle trust (what-if)")),
		Info:      key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "server info, resources, prompts")),
	}
}

// ShortHelp implements help.KeyMap.
func (k ServersKeyMap) ShortHelp() []key.Binding {
	short := k.Trust
	short.SetHelp("T", "trust")
	info := k.Info
	info.SetHelp("i", "info")
	return []key.Binding{k.Up, k.Down, info, k.Tools, k.Reconnect, short, k.NextPane}
}

// FullHelp implements help.KeyMap.
func (k ServersKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Top, k.Bottom}, {k.Tools, k.Info, k.NextPane, k.Reconnect, k.Trust}}
}

// ToolsKeyMap holds the keys of the tools pane.
type ToolsKeyMap struct {
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	Open     key.Binding
	Call     key.Binding
	Filter   key.Binding
	Tier     key.Binding
	Hint     key.Binding
	Sort     key.Binding
	Clear    key.Binding
	NextPane key.Binding
	// Disable, Policy and Trust are the what-if changes of the selected tool:
	// off for this session, its policy override, its server's trust.
	Disable key.Binding
	Policy  key.Binding
	Trust   key.Binding
	// Info opens the info view of the selected tool's server.
	Info key.Binding
}

// DefaultToolsKeyMap returns the tools pane's keys.
func DefaultToolsKeyMap() ToolsKeyMap {
	return ToolsKeyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "f", "space"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
		Open:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details")),
		Call:     key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "call")),
		Filter:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Tier:     key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "tier filter")),
		Hint:     key.NewBinding(key.WithKeys("h"), key.WithHelp("h", "hint filter")),
		Sort:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Clear:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filters")),
		NextPane: key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "servers pane")),
		Disable:  key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "turn off / on for this session")),
		Policy:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "policy: none → ask → deny (what-if)")),
		Trust:    key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "cycle its server's trust (what-if)")),
		Info:     key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "its server: info, resources, prompts")),
	}
}

// ShortHelp implements help.KeyMap. The footer's words are shorter than the help
// overlay's, so that the line fits 80 columns.
func (k ToolsKeyMap) ShortHelp() []key.Binding {
	short := func(b key.Binding, desc string) key.Binding {
		b.SetHelp(b.Help().Key, desc)
		return b
	}
	return []key.Binding{short(k.Open, "open"), k.Call, k.Filter, short(k.Info, "info"), short(k.Clear, "clear"), short(k.NextPane, "pane")}
}

// FullHelp implements help.KeyMap.
func (k ToolsKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Open, k.Call, k.Info, k.NextPane},
		{k.Filter, k.Tier, k.Hint, k.Sort, k.Clear},
		{k.Disable, k.Policy, k.Trust},
	}
}

// FilterKeyMap holds the keys while the text filter takes input.
type FilterKeyMap struct {
	Apply  key.Binding
	Cancel key.Binding
}

// DefaultFilterKeyMap returns the text filter's keys.
func DefaultFilterKeyMap() FilterKeyMap {
	return FilterKeyMap{
		Apply:  key.NewBinding(key.WithKeys("enter", "down", "up"), key.WithHelp("enter", "keep filter")),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear text")),
	}
}

// ShortHelp implements help.KeyMap.
func (k FilterKeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Apply, k.Cancel} }

// FullHelp implements help.KeyMap.
func (k FilterKeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{{k.Apply, k.Cancel}} }

// CallKeyMap holds the keys while a call runs.
type CallKeyMap struct {
	Cancel key.Binding
}

// DefaultCallKeyMap returns the running call's keys.
func DefaultCallKeyMap() CallKeyMap {
	return CallKeyMap{Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel the call"))}
}

// ShortHelp implements help.KeyMap.
func (k CallKeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Cancel} }

// FullHelp implements help.KeyMap.
func (k CallKeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{{k.Cancel}} }

// ResultKeyMap holds the keys of the results view.
type ResultKeyMap struct {
	common.ScrollKeyMap
	Again key.Binding
	// Save writes the result's images, audio and blobs to new files; it is
	// enabled only when the result has any.
	Save key.Binding
	Back key.Binding
}

// DefaultResultKeyMap returns the results view's keys.
func DefaultResultKeyMap() ResultKeyMap {
	return ResultKeyMap{
		ScrollKeyMap: common.DefaultScrollKeyMap(),
		Again:        key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "call again")),
		Save:         key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "save images/audio to files")),
		Back:         key.NewBinding(key.WithKeys("esc", "enter", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap.
func (k ResultKeyMap) ShortHelp() []key.Binding {
	save := k.Save
	save.SetHelp("s", "save media")
	down := k.Down
	down.SetHelp(down.Help().Key, "scroll")
	return []key.Binding{down, k.Again, save, k.Back}
}

// FullHelp implements help.KeyMap.
func (k ResultKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Column(), {k.Again, k.Save, k.Back}}
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
