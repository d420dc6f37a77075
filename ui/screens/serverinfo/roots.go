package serverinfo

// The roots view (f in the info view): the folders airlock tells one running
// server of (roots/list), to add to and remove from for this session. The root
// carries out the change through the session and hands the new list back.

import (
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/screen"
)

// RootsKeyMap holds the keys of the roots view.
type RootsKeyMap struct {
	Up, Down key.Binding
	// Add opens the path field; Remove takes the selected root away.
	Add    key.Binding
	Remove key.Binding
	// Submit adds the typed path; Cancel closes the field.
	Submit key.Binding
	Cancel key.Binding
	Back   key.Binding
}

// DefaultRootsKeyMap returns the roots view's keys.
func DefaultRootsKeyMap() RootsKeyMap {
	return RootsKeyMap{
		Up:     key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:   key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Add:    key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "add a folder (type its path)")),
		Remove: key.NewBinding(key.WithKeys("d", "delete"), key.WithHelp("d", "remove the selected root")),
		Submit: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "in the path field: add it")),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "in the path field: close it")),
		Back:   key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap.
func (k RootsKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{common.ShortKey(k.Add, "add"), common.ShortKey(k.Remove, "remove"), k.Back}
}

// FullHelp implements help.KeyMap.
func (k RootsKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Add, k.Remove}, {k.Submit, k.Cancel, k.Back}}
}

// AddRoot asks the root to add Entry (a path as typed) to Server's roots.
type AddRoot struct{ Server, Entry string }

// RemoveRoot asks the root to remove the root URI from Server's roots.
type RemoveRoot struct{ Server, URI string }

// Roots is the roots view of one server.
type Roots struct {
	*common.Common
	keys RootsKeyMap
	// Server is the server shown; its Roots are the list.
	Server model.ServerInfo
	cursor int
	adding bool
	input  textinput.Model
	// note is the outcome of the last change, in words (set by the root);
	// pending is the root added that is to be selected once a list holds it (a
	// snapshot taken before the change may be shown first).
	note, pending string
	width, height int
}

// NewRoots returns the roots view over the root's Common.
func NewRoots(com *common.Common) Roots {
	in := textinput.New()
	in.Prompt = "path: "
	in.Placeholder = "/abs/path, ~/path, a path from the folder airlock started in, or file://…"
	in.CharLimit = 4096
	v := Roots{Common: com, keys: DefaultRootsKeyMap(), input: in, width: 80, height: 24}
	v.Restyle()
	return v
}

// Restyle draws the path field in the current styles (a new theme).
func (v *Roots) Restyle() { v.input.SetStyles(textinput.DefaultStyles(v.St.Dark)) }

// Open shows a server's roots from the top, the field closed.
func (v *Roots) Open(s model.ServerInfo) {
	if s.Name != v.Server.Name {
		v.note = ""
	}
	v.pending = ""
	v.Server, v.cursor, v.adding = s, 0, false
	v.input.Blur()
	v.input.SetValue("")
	v.clamp()
}

// Refresh shows a new state of the same server, keeping the selected root.
func (v *Roots) Refresh(s model.ServerInfo) {
	var sel string
	if v.cursor < len(v.Server.Roots) {
		sel = v.Server.Roots[v.cursor]
	}
	v.Server = s
	if i := slices.Index(s.Roots, sel); i >= 0 {
		v.cursor = i
	}
	if i := slices.Index(s.Roots, v.pending); v.pending != "" && i >= 0 {
		v.cursor, v.pending = i, ""
	}
	v.clamp()
}

// Changed shows the outcome of a change: note says it; selected is the root to
// select (the one added), "" to keep the cursor.
func (v *Roots) Changed(s model.ServerInfo, note, selected string) {
	v.note, v.pending = note, selected
	v.Refresh(s)
}

// Typing says the path field takes the keys.
func (v *Roots) Typing() bool { return v.adding }

func (v *Roots) clamp() { v.cursor = max(min(v.cursor, len(v.Server.Roots)-1), 0) }

// SetSize sets the outer size.
func (v *Roots) SetSize(w, h int) {
	v.width, v.height = w, h
	iw, _ := common.PaneInner(w, h)
	v.input.SetWidth(max(iw-len(v.input.Prompt)-2, 10))
}

// Update handles keys.
func (v *Roots) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	if v.adding {
		if k, ok := msg.(tea.KeyPressMsg); ok {
			switch {
			case key.Matches(k, v.keys.Submit):
				entry := v.input.Value()
				v.adding = false
				v.input.Blur()
				v.input.SetValue("")
				if strings.TrimSpace(entry) == "" {
					return nil, nil
				}
				return AddRoot{Server: v.Server.Name, Entry: entry}, nil
			case key.Matches(k, v.keys.Cancel):
				v.adding = false
				v.input.Blur()
				v.input.SetValue("")
				return nil, nil
			}
		}
		var cmd tea.Cmd
		v.input, cmd = v.input.Update(msg)
		return nil, cmd
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil, nil
	}
	switch {
	case key.Matches(k, v.keys.Back):
		return screen.Back{}, nil
	case key.Matches(k, v.keys.Up):
		v.cursor = max(v.cursor-1, 0)
	case key.Matches(k, v.keys.Down):
		v.cursor = min(v.cursor+1, max(len(v.Server.Roots)-1, 0))
	case key.Matches(k, v.keys.Add):
		v.adding = true
		return nil, v.input.Focus()
	case key.Matches(k, v.keys.Remove) && len(v.Server.Roots) > 0:
		return RemoveRoot{Server: v.Server.Name, URI: v.Server.Roots[v.cursor]}, nil
	}
	return nil, nil
}

// RootPath is the path a root's file:// URI names, as the system writes it.
func RootPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return uri
	}
	p := u.Path
	if runtime.GOOS == "windows" && len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:]
	}
	return filepath.FromSlash(p)
}

// View draws the view at its size.
func (v *Roots) View() string {
	st := v.St
	iw, ih := common.PaneInner(v.width, v.height)
	head := []string{st.Header.Render(common.Fit("Roots · "+common.Inline(st, v.Server.Name, iw/2)+"  "+common.TrustBadge(st, v.Server.Trust), iw))}
	head = append(head, common.WrapOwn(st.Muted.Render("The folders airlock tells this server of (roots/list). A change lasts for this session: your config is not changed. A path is made absolute (from the folder airlock started in) and cleaned; a symbolic link is kept as typed, not resolved: the server is told the link's path and reaches the folder it points to."), iw, "", "")...)
	if v.Server.Roots == nil {
		head = append(head, common.WrapOwn(st.WarnText.Render("It connected without roots: adding one reconnects it, to declare them."), iw, "", "")...)
	}
	var foot []string
	if v.adding {
		foot = append(foot, common.Fit(v.input.View(), iw))
	}
	if v.note != "" {
		foot = append(foot, common.WrapOwn(v.note, iw, "", "  ")...)
	}
	rows := max(ih-len(head)-len(foot)-1, 1)
	var list []string
	if len(v.Server.Roots) == 0 {
		list = append(list, st.Muted.Render("(no roots: n adds one)"))
	}
	off := 0
	if v.cursor >= rows {
		off = v.cursor - rows + 1
	}
	// A path too long for the row is cut in its middle, and paths that would
	// then look alike keep where they differ: folders of one parent differ at
	// the end, which a cut at the end would hide.
	paths, widths := make([]string, len(v.Server.Roots)), make([]int, len(v.Server.Roots))
	for i, r := range v.Server.Roots {
		paths[i], widths[i] = common.PlainInline(RootPath(r)), iw-2
	}
	paths = common.CutDistinct(paths, widths)
	for i := off; i < len(v.Server.Roots) && i < off+rows; i++ {
		mark := "  "
		if i == v.cursor {
			mark = st.Key.Render("▸ ")
		}
		list = append(list, mark+paths[i])
	}
	if len(foot) > ih {
		foot = foot[len(foot)-ih:]
	}
	lines := append(append(head, ""), list...)
	for len(lines) < ih-len(foot) {
		lines = append(lines, "")
	}
	lines = append(lines[:ih-len(foot)], foot...)
	return common.PaneBox(st, true, v.width, v.height, lines)
}

// KeyMap returns the bindings that apply now, for the footer.
func (v *Roots) KeyMap() help.KeyMap {
	k := v.keys
	if v.adding {
		return common.KeyMapFunc{Short: []key.Binding{common.ShortKey(k.Submit, "add it"), common.ShortKey(k.Cancel, "close")}, Full: k.FullHelp()}
	}
	k.Remove.SetEnabled(len(v.Server.Roots) > 0)
	return common.KeyMapFunc{Short: k.ShortHelp(), Full: k.FullHelp()}
}
