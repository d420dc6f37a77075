package channels

// The prompts view (docs/explore.md): one server's prompts with their
// arguments. enter opens the argument form (with the server's completion
// suggestions) and gets the prompt through model.Manager.GetPrompt; the messages
// are shown escaped, role by role. Prompt text is server text a model would read as
// instructions: it is always in the gutter.

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/list"
	"github.com/airlock-mcp/airlock/ui/screen"
)

// PromptsKeyMap holds the keys of the prompts view.
type PromptsKeyMap struct {
	common.ScrollKeyMap // moves the selection
	Open                key.Binding
	Back                key.Binding
}

// DefaultPromptsKeyMap returns the prompts view's keys.
func DefaultPromptsKeyMap() PromptsKeyMap {
	scroll := common.DefaultScrollKeyMap()
	scroll.Up.SetHelp("↑/k", "previous")
	scroll.Down.SetHelp("↓/j", "next")
	scroll.Top.SetHelp("g/home", "first")
	scroll.Bottom.SetHelp("G/end", "last")
	return PromptsKeyMap{
		ScrollKeyMap: scroll,
		Open:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "fill in its arguments, then get it")),
		Back:         key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap, in words short enough for 80 columns.
func (k PromptsKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{common.ShortKey(k.Down, "move"), common.ShortKey(k.Open, "get"), k.Back}
}

// FullHelp implements help.KeyMap.
func (k PromptsKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Column(), {k.Open, k.Back}}
}

// PromptsView lists one server's prompts.
type PromptsView struct {
	*common.Common
	keys   PromptsKeyMap
	Server model.ServerInfo
	list   list.Model // over Server.Prompts; the cursor is 0 when there are none

	width, height int
}

func NewPromptsView(com *common.Common) PromptsView {
	v := PromptsView{Common: com, keys: DefaultPromptsKeyMap(), list: list.New()}
	v.list.Keys = v.keys.ScrollKeyMap
	v.list.Cursor = 0
	return v
}

// SetSize sets the outer size.
func (v *PromptsView) SetSize(w, h int) {
	v.width, v.height = w, h
	v.list.SetVisible(v.visible())
	v.clamp()
}

// SetServer shows a server's prompts, keeping the selection on the same name.
func (v *PromptsView) SetServer(s model.ServerInfo) {
	keep := ""
	if p, ok := v.Selected(); ok {
		keep = p.Name
	}
	same := s.Name == v.Server.Name
	v.Server = s
	v.list.SetRows(len(s.Prompts), nil)
	if !same {
		v.list.Cursor = 0
		v.list.SetOffset(0)
	} else {
		v.list.Keep(keep, func(i int) string { return s.Prompts[i].Name })
	}
	v.clamp()
	v.updateKeys()
}

func (v PromptsView) Selected() (model.PromptInfo, bool) {
	c := v.list.Cursor
	if c < 0 || c >= len(v.Server.Prompts) {
		return model.PromptInfo{}, false
	}
	return v.Server.Prompts[c], true
}

// promptDetailRows is how many lines under the list show the selected prompt.
const promptDetailRows = 5

func (v PromptsView) visible() int {
	_, ih := common.PaneInner(v.width, v.height)
	return max(ih-1-1-promptDetailRows, 1)
}

func (v *PromptsView) clamp() {
	n := len(v.Server.Prompts)
	v.list.Cursor = min(max(v.list.Cursor, 0), max(n-1, 0))
	v.list.ScrollTo(0)
}

func (v *PromptsView) updateKeys() {
	n := len(v.Server.Prompts)
	v.keys.Open.SetEnabled(n > 0)
	v.list.Keys.Enable(v.list.Cursor > 0, v.list.Cursor < n-1)
	v.keys.ScrollKeyMap = v.list.Keys
}

// GetPrompt asks the root for the form of a prompt's arguments, then to get it.
type GetPrompt struct {
	Server model.ServerInfo
	Prompt model.PromptInfo
}

// Update handles a key.
func (v *PromptsView) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil, nil
	}
	n := len(v.Server.Prompts)
	v.list.Update(k)
	back, open := key.Matches(k, v.keys.Back), key.Matches(k, v.keys.Open) && n > 0
	v.clamp()
	v.updateKeys()
	switch {
	case back:
		return screen.Back{}, nil
	case open:
		if p, ok := v.Selected(); ok {
			return GetPrompt{Server: v.Server, Prompt: p}, nil
		}
	}
	return nil, nil
}

// argSummary lists a prompt's arguments, required ones marked with "*".
func argSummary(p model.PromptInfo) string {
	if len(p.Arguments) == 0 {
		return "no arguments"
	}
	parts := make([]string, len(p.Arguments))
	for i, a := range p.Arguments {
		parts[i] = common.PlainInline(a.Name)
		if a.Required {
			parts[i] += "*"
		}
	}
	return strings.Join(parts, ", ")
}

// View renders the heading, the list and the selected prompt's arguments.
func (v PromptsView) View() string {
	st := v.St
	iw, ih := common.PaneInner(v.width, v.height)
	s := v.Server
	head := "Prompts of " + common.Inline(st, s.Name, iw/3) + " · " + strconv.Itoa(len(s.Prompts)) + " prompt" + common.Plural(len(s.Prompts)) +
		" · * required argument"
	lines := []string{common.PaneHeading(st, head, true, iw)}
	if len(s.Prompts) == 0 {
		lines = append(lines, st.Muted.Render(common.Fit("  it lists no prompts", iw)))
	}
	offset, end := v.list.Offset(), v.list.End()
	var names []string
	nameW := 0
	for i := offset; i < end; i++ {
		n := common.PlainInline(s.Prompts[i].Name)
		names = append(names, n)
		nameW = max(nameW, ansi.StringWidth(n))
	}
	nameW = min(nameW, max(iw/3, 12))
	argW := min(24, max(iw/4, 10))
	cut := common.CutNames(names, nameW)
	for i := offset; i < end; i++ {
		p := s.Prompts[i]
		descW := max(iw-2-nameW-1-argW-1, 0)
		d, more := common.Summary(FirstNonEmpty(p.Title, p.Description))
		if more {
			d += " " + common.Ellipsis
		}
		row := common.Fit(cut[i-offset], nameW) + " " + common.Fit(common.CutMiddle(argSummary(p), argW), argW) + " " + common.Inline(st, d, descW)
		if i == v.list.Cursor {
			lines = append(lines, st.Selected.Render(common.Fit("▸ "+ansi.Strip(row), iw)))
		} else {
			lines = append(lines, common.Fit("  "+row, iw))
		}
	}
	if below := len(s.Prompts) - end; below > 0 {
		lines = append(lines, st.Muted.Render(common.Fit("  ↓ "+strconv.Itoa(below)+" more (pgdn)", iw)))
	}
	detail := v.detailLines(iw)
	for len(lines) < ih-len(detail) {
		lines = append(lines, "")
	}
	lines = append(lines[:min(len(lines), ih-len(detail))], detail...)
	return common.PaneBox(st, true, v.width, v.height, lines)
}

// detailLines shows the selected prompt: its name and description, then each
// argument with its description, as many as fit.
func (v PromptsView) detailLines(iw int) []string {
	st := v.St
	p, ok := v.Selected()
	if !ok {
		return nil
	}
	out := []string{st.Muted.Render(strings.Repeat("─", iw))}
	d, more := common.Summary(p.Description)
	if more {
		d += " " + common.Ellipsis
	}
	out = append(out, common.Fit(st.Key.Render("prompt ")+common.Inline(st, p.Name, iw/2)+"  "+st.Muted.Render(common.Inline(st, d, iw)), iw))
	for i, a := range p.Arguments {
		if len(out) == promptDetailRows {
			out[len(out)-1] = st.Muted.Render(common.Fit("  … "+strconv.Itoa(len(p.Arguments)-i+1)+" arguments more in the form (enter)", iw))
			break
		}
		req := "  "
		if a.Required {
			req = st.WarnText.Render("* ")
		}
		ad, _ := common.Summary(FirstNonEmpty(a.Description, a.Title))
		out = append(out, common.Fit("  "+req+common.Inline(st, a.Name, iw/3)+"  "+st.Muted.Render(common.Inline(st, ad, iw)), iw))
	}
	return out
}

// KeyMap returns the bindings that apply now, for the footer.
func (v PromptsView) KeyMap() help.KeyMap {
	return common.KeyMapFunc{Short: v.keys.ShortHelp(), Full: v.keys.FullHelp()}
}
