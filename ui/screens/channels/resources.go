// Package channels is the screens of a server's channels besides tools: its
// resources and templates (read, subscribe) and its prompts (get), opened from the
// server's info. A key asks the root to read, get or subscribe (the session
// decides and audits each); the root hands back what came of it.
package channels

// The resources view (docs/explore.md): one server's resources and resource
// templates. enter reads a resource (through model.Manager.ReadResource: it may
// ask, it may taint) or fills a template's arguments in a form (with the server's
// completions) and reads what it names; s subscribes to a resource and
// unsubscribes; a resources/updated for a subscribed URI marks its row until it is
// read again. Names are cut together so rows stay distinct; the selected row's
// whole URI, title and description are shown under the list, escaped.

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

// ResourcesKeyMap holds the keys of the resources view.
type ResourcesKeyMap struct {
	common.ScrollKeyMap // moves the selection
	Open                key.Binding
	// Subscribe subscribes to the selected resource, or ends the subscription;
	// enabled only on a resource of a server that takes subscriptions.
	Subscribe key.Binding
	Back      key.Binding
}

// DefaultResourcesKeyMap returns the resources view's keys.
func DefaultResourcesKeyMap() ResourcesKeyMap {
	scroll := common.DefaultScrollKeyMap()
	scroll.Up.SetHelp("↑/k", "previous")
	scroll.Down.SetHelp("↓/j", "next")
	scroll.Top.SetHelp("g/home", "first")
	scroll.Bottom.SetHelp("G/end", "last")
	return ResourcesKeyMap{
		ScrollKeyMap: scroll,
		Open:         key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "read it (a template: fill it in, then read)")),
		Subscribe:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "subscribe / unsubscribe (● marks a change)")),
		Back:         key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap, in words short enough for 80 columns.
func (k ResourcesKeyMap) ShortHelp() []key.Binding {
	sub := "subscribe"
	if k.Subscribe.Help().Desc == "unsubscribe" {
		sub = "unsubscribe"
	}
	return []key.Binding{common.ShortKey(k.Down, "move"), common.ShortKey(k.Open, "read"), common.ShortKey(k.Subscribe, sub), k.Back}
}

// FullHelp implements help.KeyMap.
func (k ResourcesKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Column(), {k.Open, k.Subscribe, k.Back}}
}

// resRow is one line of the list: a heading (i < 0), a resource or a template.
type resRow struct {
	template bool
	i        int // index into Resources or ResourceTemplates; -1 for a heading
}

// ResourcesView lists one server's resources and templates.
type ResourcesView struct {
	*common.Common
	keys   ResourcesKeyMap
	Server model.ServerInfo
	// Subscribed and Updated are the person's subscriptions to this server on
	// its current connection, and those that changed since last read (the
	// root keeps them per server; the view shows them).
	Subscribed, Updated map[string]bool

	rows []resRow
	list list.Model // over rows; the cursor is on a resource or a template, -1 when none

	width, height int
}

func NewResourcesView(com *common.Common) ResourcesView {
	v := ResourcesView{Common: com, keys: DefaultResourcesKeyMap(), list: list.New()}
	v.list.Keys = v.keys.ScrollKeyMap
	return v
}

// SetSize sets the outer size.
func (v *ResourcesView) SetSize(w, h int) {
	v.width, v.height = w, h
	v.list.SetVisible(v.visible())
	v.clamp()
}

// SetServer shows a server's lists, keeping the selection on the same URI.
func (v *ResourcesView) SetServer(s model.ServerInfo, subscribed, updated map[string]bool) {
	keep := v.selectedKey()
	same := s.Name == v.Server.Name
	v.Server, v.Subscribed, v.Updated = s, subscribed, updated
	v.rows = v.rows[:0]
	if len(s.Resources) > 0 {
		v.rows = append(v.rows, resRow{i: -1})
		for i := range s.Resources {
			v.rows = append(v.rows, resRow{i: i})
		}
	}
	if len(s.ResourceTemplates) > 0 {
		v.rows = append(v.rows, resRow{template: true, i: -1})
		for i := range s.ResourceTemplates {
			v.rows = append(v.rows, resRow{template: true, i: i})
		}
	}
	rows := v.rows
	v.list.SetRows(len(rows), func(i int) bool { return rows[i].i >= 0 })
	v.list.Cursor = -1
	if same {
		v.list.Keep(keep, func(i int) string { return v.rowKey(rows[i]) })
	} else {
		v.list.SetOffset(0)
	}
	if v.list.Cursor < 0 {
		v.list.Cursor = v.list.First()
	}
	v.clamp()
	v.updateKeys()
}

func (v ResourcesView) rowKey(r resRow) string {
	if r.template {
		return "t\x00" + v.Server.ResourceTemplates[r.i].URITemplate
	}
	return "r\x00" + v.Server.Resources[r.i].URI
}

func (v ResourcesView) selectedKey() string {
	c := v.list.Cursor
	if c < 0 || c >= len(v.rows) {
		return ""
	}
	return v.rowKey(v.rows[c])
}

// Selected returns the resource or template under the cursor.
func (v ResourcesView) Selected() (*model.ResourceInfo, *model.ResourceTemplateInfo) {
	c := v.list.Cursor
	if c < 0 || c >= len(v.rows) {
		return nil, nil
	}
	r := v.rows[c]
	if r.i < 0 {
		return nil, nil
	}
	if r.template {
		return nil, &v.Server.ResourceTemplates[r.i]
	}
	return &v.Server.Resources[r.i], nil
}

// detailRows is how many lines under the list show the selected row in full.
const detailRows = 3

// visible is the number of list lines: the pane less the heading, the legend,
// the "more" line and the selection's lines.
func (v ResourcesView) visible() int {
	_, ih := common.PaneInner(v.width, v.height)
	return max(ih-2-1-detailRows, 1)
}

func (v *ResourcesView) clamp() {
	v.list.ScrollTo(0)
}

func (v *ResourcesView) updateKeys() {
	res, tmpl := v.Selected()
	v.keys.Open.SetEnabled(res != nil || tmpl != nil)
	if tmpl != nil {
		v.keys.Open.SetHelp("enter", "fill in the template, then read")
	} else {
		v.keys.Open.SetHelp("enter", "read it")
	}
	v.keys.Subscribe.SetEnabled(res != nil && v.Server.Subscribe)
	if res != nil && v.Subscribed[res.URI] {
		v.keys.Subscribe.SetHelp("s", "unsubscribe")
	} else {
		v.keys.Subscribe.SetHelp("s", "subscribe: ● marks a change")
	}
	v.list.EnableKeys()
	v.keys.ScrollKeyMap = v.list.Keys
}

// Read asks the root to read a resource of Server.
type Read struct {
	Server model.ServerInfo
	URI    string
}

// FillTemplate asks the root for the form of a template's arguments, then to
// read what it names.
type FillTemplate struct {
	Server   model.ServerInfo
	Template model.ResourceTemplateInfo
}

// Subscribe asks the root to subscribe to a resource (On) or to end the
// subscription.
type Subscribe struct {
	Server model.ServerInfo
	URI    string
	On     bool
}

// Update handles a key; what it asks for is about the row under the cursor
// after the key.
func (v *ResourcesView) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil, nil
	}
	v.list.Update(k)
	back, open, sub := key.Matches(k, v.keys.Back), key.Matches(k, v.keys.Open), key.Matches(k, v.keys.Subscribe)
	v.clamp()
	v.updateKeys()
	res, tmpl := v.Selected()
	switch {
	case back:
		return screen.Back{}, nil
	case open && res != nil:
		return Read{Server: v.Server, URI: res.URI}, nil
	case open && tmpl != nil:
		return FillTemplate{Server: v.Server, Template: *tmpl}, nil
	case open:
	case sub && res != nil:
		return Subscribe{Server: v.Server, URI: res.URI, On: !v.Subscribed[res.URI]}, nil
	}
	return nil, nil
}

// View renders the heading, the list and the selected row in full.
func (v ResourcesView) View() string {
	st := v.St
	iw, _ := common.PaneInner(v.width, v.height)
	s := v.Server
	head := "Resources of " + common.Inline(st, s.Name, iw/3) + " · " + strconv.Itoa(len(s.Resources)) + " resource" + common.Plural(len(s.Resources)) +
		" · " + strconv.Itoa(len(s.ResourceTemplates)) + " template" + common.Plural(len(s.ResourceTemplates))
	lines := []string{common.PaneHeading(st, head, true, iw)}
	if s.Subscribe {
		lines = append(lines, st.Muted.Render(common.Fit("  ◉ subscribed · ● changed since you read it (enter reads again)", iw)))
	} else {
		lines = append(lines, st.Muted.Render(common.Fit("  this server takes no subscriptions", iw)))
	}
	if len(v.rows) == 0 {
		lines = append(lines, st.Muted.Render(common.Fit("  it lists no resources and no templates", iw)))
	}

	// Columns: mark(2) name type uri. Names on screen are cut together so
	// that no two look the same.
	offset, end := v.list.Offset(), v.list.End()
	var names []string
	nameW := 0
	for i := offset; i < end; i++ {
		if r := v.rows[i]; r.i >= 0 {
			n := common.PlainInline(v.name(r))
			names = append(names, n)
			nameW = max(nameW, ansi.StringWidth(n))
		}
	}
	nameW = min(nameW, max(iw/3, 12))
	typeW := min(16, max(iw/6, 8))
	cut := common.CutNames(names, nameW)
	ci := 0
	for i := offset; i < end; i++ {
		r := v.rows[i]
		if r.i < 0 {
			title := "Resources"
			if r.template {
				title = "Templates · enter fills one in, then reads what it names"
			}
			lines = append(lines, st.Header.Render(common.Fit(title, iw)))
			continue
		}
		var mark, mime, uri string
		if r.template {
			t := s.ResourceTemplates[r.i]
			mark, mime, uri = "  ", t.MIMEType, t.URITemplate
		} else {
			res := s.Resources[r.i]
			mark, mime, uri = "  ", res.MIMEType, res.URI
			switch {
			case v.Updated[res.URI]:
				mark = st.WarnText.Render("●") + " "
			case v.Subscribed[res.URI]:
				mark = st.OKText.Render("◉") + " "
			}
		}
		uriW := max(iw-2-2-nameW-1-typeW-1, 4)
		row := mark + common.Fit(cut[ci], nameW) + " " + common.Fit(common.PlainInline(common.OrDash(mime)), typeW) + " " + common.CutMiddle(common.PlainInline(uri), uriW)
		ci++
		if i == v.list.Cursor {
			lines = append(lines, st.Selected.Render(common.Fit("▸ "+ansi.Strip(row), iw)))
		} else {
			lines = append(lines, common.Fit("  "+row, iw))
		}
	}
	if below := len(v.rows) - end; below > 0 {
		lines = append(lines, st.Muted.Render(common.Fit("  ↓ "+strconv.Itoa(below)+" more (pgdn)", iw)))
	}
	_, ih := common.PaneInner(v.width, v.height)
	detail := v.detailLines(iw)
	for len(lines) < ih-len(detail) {
		lines = append(lines, "")
	}
	lines = append(lines[:min(len(lines), ih-len(detail))], detail...)
	return common.PaneBox(st, true, v.width, v.height, lines)
}

// name is what a row is called: its name, or its URI when it gives none.
func (v ResourcesView) name(r resRow) string {
	if r.template {
		t := v.Server.ResourceTemplates[r.i]
		return FirstNonEmpty(t.Name, t.Title, t.URITemplate)
	}
	res := v.Server.Resources[r.i]
	return FirstNonEmpty(res.Name, res.Title, res.URI)
}

func FirstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// detailLines shows the selected row in full: its URI, title and size, and the
// first line of its description, each escaped.
func (v ResourcesView) detailLines(iw int) []string {
	st := v.St
	res, tmpl := v.Selected()
	var uri, title, desc, extra string
	switch {
	case res != nil:
		uri, title, desc = res.URI, res.Title, res.Description
		if res.Size > 0 {
			extra = st.Muted.Render(" · says " + common.ByteSize(int(res.Size)))
		}
		if v.Subscribed[res.URI] {
			extra += st.Muted.Render(" · subscribed")
		}
	case tmpl != nil:
		uri, title, desc = tmpl.URITemplate, tmpl.Title, tmpl.Description
	default:
		return nil
	}
	out := []string{st.Muted.Render(strings.Repeat("─", iw))}
	out = append(out, common.Fit(st.Key.Render("uri   ")+common.Inline(st, uri, iw-6), iw))
	line := st.Key.Render("about ")
	if title != "" {
		line += common.Inline(st, title, iw/2) + "  "
	}
	s, more := common.Summary(desc)
	if more {
		s += " " + common.Ellipsis
	}
	line += st.Muted.Render(common.Inline(st, s, iw))
	out = append(out, common.Fit(line+extra, iw))
	return out
}

// KeyMap returns the bindings that apply now, for the footer.
func (v ResourcesView) KeyMap() help.KeyMap {
	return common.KeyMapFunc{Short: v.keys.ShortHelp(), Full: v.keys.FullHelp()}
}
