// Package export is the screen of the exported what-if changes (E): where the
// TOML fragment was written, the fragment itself (escaped: it holds names a server
// chose), and the reminder that the person's config was not modified. The root
// writes the file; this package only shows what it is given.
package export

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/pager"
	"github.com/airlock-mcp/airlock/ui/screen"
)

// Model shows where the fragment was written and the fragment itself, with
// the reminder that the person's config was not modified.
type Model struct {
	*common.Common
	keys          KeyMap
	vp            pager.Pager
	path, frag    string
	width, height int
}

// New returns the export screen over the root's Common.
func New(com *common.Common) Model {
	keys := DefaultKeyMap()
	vp := pager.New(keys.ScrollKeyMap)
	return Model{Common: com, keys: keys, vp: vp}
}

// SetSize sets the outer size; the content is wrapped again.
func (e *Model) SetSize(w, h int) {
	e.width, e.height = w, h
	iw, ih := common.PaneInner(w, h)
	e.vp.SetWidth(iw)
	e.vp.SetHeight(max(ih-1, 1))
	e.Render()
}

// Show sets the written path and fragment and scrolls to the top.
func (e *Model) Show(path, frag string) {
	e.path, e.frag = path, frag
	e.Render()
	e.vp.GotoTop()
}

// Render draws the content again, in the current styles.
func (e *Model) Render() {
	if e.path == "" {
		return
	}
	st := e.St
	iw, _ := common.PaneInner(e.width, e.height)
	var lines []string
	lines = append(lines, st.OKText.Render("✓ written to"))
	lines = append(lines, common.WrapOwn(common.Inline(st, e.path, 0), iw, "  ", "  ")...)
	lines = append(lines, "")
	lines = append(lines, common.WrapOwn(st.WarnText.Render("Your config was not modified.")+
		" Append this fragment to it by hand (a change to a table your config already has is a comment saying what to set there); airlock never rewrites your config. The changes stay live in this session until you quit.", iw, "", "")...)
	lines = append(lines, "", st.Header.Render("fragment"))
	// The fragment is airlock's own TOML, but it holds server and tool names a
	// server chose: it goes through the same escaping as any server text.
	lines = append(lines, common.BlockLines(st, strings.TrimRight(e.frag, "\n"), iw, common.MaxShownBytes, st.Gutter.Render(common.Gutter))...)
	e.vp.SetContent(strings.Join(lines, "\n"))
}

// Update handles keys; scrolling goes to the pager.
func (e *Model) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && key.Matches(k, e.keys.Back) {
		return screen.Back{}, nil
	}
	return nil, e.vp.Update(msg)
}

// View renders the heading and the content in a pane.
func (e *Model) View() string {
	iw, _ := common.PaneInner(e.width, e.height)
	head := e.St.Header.Render(common.Fit("What-if changes exported as a TOML fragment", iw))
	lines := append([]string{head}, strings.Split(e.vp.View(), "\n")...)
	return common.PaneBox(e.St, true, e.width, e.height, lines)
}

// KeyMap returns the bindings that apply now, for the footer.
func (e *Model) KeyMap() help.KeyMap {
	return common.KeyMapFunc{Short: e.keys.ShortHelp(), Full: e.keys.FullHelp()}
}

// KeyMap holds the keys of the export view.
type KeyMap struct {
	common.ScrollKeyMap
	Back key.Binding
}

// DefaultKeyMap returns the export view's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		ScrollKeyMap: common.DefaultScrollKeyMap(),
		Back:         key.NewBinding(key.WithKeys("esc", "enter", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Down, k.Back} }

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Column(), {k.Back}}
}

// Content is the text the pager holds, for tests.
func (e *Model) Content() string { return e.vp.GetContent() }
