package ui

// The output view: what a resource read or a prompt get
// returned, shown as call results are: a verdict line (OK, failed, denied), whether
// it tainted the person's context, then every content escaped in the gutter; blobs,
// images and audio by type and size, saved to files with s.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/pager"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// OutputKeyMap holds the keys of the output view.
type OutputKeyMap struct {
	common.ScrollKeyMap
	// Again reads the resource again, or opens the prompt's form again.
	Again key.Binding
	Save  key.Binding
	Back  key.Binding
}

// DefaultOutputKeyMap returns the output view's keys.
func DefaultOutputKeyMap() OutputKeyMap {
	return OutputKeyMap{
		ScrollKeyMap: common.DefaultScrollKeyMap(),
		Again:        key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "read / get again")),
		Save:         key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "save blobs, images and audio to files")),
		Back:         key.NewBinding(key.WithKeys("esc", "enter", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap.
func (k OutputKeyMap) ShortHelp() []key.Binding {
	save := k.Save
	save.SetHelp("s", "save media")
	return []key.Binding{k.Down, k.Again, save, k.Back}
}

// FullHelp implements help.KeyMap.
func (k OutputKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Column(), {k.Again, k.Save, k.Back}}
}

// output is what one read or get returned.
type output struct {
	server string
	// uri is the resource read ("" for a prompt); prompt and args the prompt's
	// name and arguments.
	uri    string
	prompt string
	args   map[string]string
	read   *session.ReadOutcome
	got    *session.PromptOutcome
	err    error
	saved  map[int]string
}

// what names the output: the resource's URI or the prompt's name.
func (o output) what() string {
	if o.uri != "" {
		return o.uri
	}
	return o.prompt
}

// blobs are the output's savable pieces, numbered by content (a resource) or
// message (a prompt).
func (o output) blobs() []blob {
	var out []blob
	switch {
	case o.read != nil && o.read.Result != nil:
		for i, c := range o.read.Result.Contents {
			if c != nil && len(c.Blob) > 0 {
				out = append(out, blob{n: i, mime: c.MIMEType, data: c.Blob})
			}
		}
	case o.got != nil && o.got.Result != nil:
		for i, msg := range o.got.Result.Messages {
			if msg == nil {
				continue
			}
			for _, b := range contentBlobs([]mcp.Content{msg.Content}) {
				b.n = i
				out = append(out, b)
			}
		}
	}
	return out
}

// outputView shows an output, scrollable.
type outputView struct {
	*common.Common
	keys OutputKeyMap
	out  output
	gen  uint64
	vp   pager.Pager

	width, height int
}

func newOutputView(com *common.Common) outputView {
	keys := DefaultOutputKeyMap()
	vp := pager.New(keys.ScrollKeyMap)
	return outputView{Common: com, keys: keys, vp: vp}
}

func (v *outputView) show(o output) {
	v.out = o
	v.gen++
	v.render()
	v.vp.GotoTop()
}

// SetSize sets the outer size; the content is wrapped again.
func (v *outputView) SetSize(w, h int) {
	v.width, v.height = w, h
	iw, ih := common.PaneInner(w, h)
	v.vp.SetWidth(iw)
	v.vp.SetHeight(max(ih-1, 1))
	v.render()
}

func (v *outputView) render() {
	iw, _ := common.PaneInner(v.width, v.height)
	v.vp.SetContent(outputContent(v.St, v.out, iw))
	v.keys.Save.SetEnabled(len(v.out.blobs()) > 0)
	v.keys.Again.SetEnabled(v.out.server != "")
	if v.out.uri != "" {
		v.keys.Again.SetHelp("r", "read again")
	} else {
		v.keys.Again.SetHelp("r", "get again")
	}
}

// setSaved shows where the blobs were saved, keeping the scroll.
func (v *outputView) setSaved(paths map[int]string) {
	if v.out.saved == nil {
		v.out.saved = map[int]string{}
	}
	for k, p := range paths {
		v.out.saved[k] = p
	}
	y := v.vp.YOffset()
	v.render()
	v.vp.SetYOffset(y)
}

// outputAction is what a key in the output view asks the root to do.
type outputAction int

const (
	outputNone outputAction = iota
	outputBack
	outputAgain
	outputSave
)

// Update handles keys; scrolling goes to the viewport.
func (v outputView) Update(msg tea.Msg) (outputView, outputAction, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, v.keys.Back):
			return v, outputBack, nil
		case key.Matches(k, v.keys.Again):
			return v, outputAgain, nil
		case key.Matches(k, v.keys.Save):
			return v, outputSave, nil
		}
	}
	var cmd tea.Cmd
	cmd = v.vp.Update(msg)
	return v, outputNone, cmd
}

// View renders the heading and the scrolled output in a pane.
func (v outputView) View() string {
	iw, _ := common.PaneInner(v.width, v.height)
	kind := "Prompt "
	if v.out.uri != "" {
		kind = "Resource "
	}
	head := kind + common.Inline(v.St, v.out.server, iw/4) + v.St.Muted.Render(" › ") + common.Inline(v.St, v.out.what(), iw/2) +
		v.St.Muted.Render(fmt.Sprintf("  %d%%", int(v.vp.ScrollPercent()*100)))
	lines := append([]string{v.St.Header.Render(common.Fit(head, iw))}, strings.Split(v.vp.View(), "\n")...)
	return common.PaneBox(v.St, true, v.width, v.height, lines)
}

// keyMap returns the bindings that apply now, for the footer.
func (v outputView) keyMap() common.KeyMapFunc {
	return common.KeyMapFunc{Short: v.keys.ShortHelp(), Full: v.keys.FullHelp()}
}

// textual says a blob is text: a text/* or JSON type, valid UTF-8.
func textual(mime string, b []byte) bool {
	m := strings.ToLower(strings.TrimSpace(mime))
	if i := strings.IndexByte(m, ';'); i >= 0 {
		m = strings.TrimSpace(m[:i])
	}
	return (strings.HasPrefix(m, "text/") || m == "application/json") && utf8.Valid(b)
}

// outputContent renders an output for a width.
func outputContent(st *theme.Styles, o output, width int) string {
	var lines []string
	add := func(ls ...string) { lines = append(lines, ls...) }
	g := st.Gutter.Render(common.Gutter)
	section := func(name string) { add("", st.Header.Render(name)) }
	noun := "prompt"
	if o.uri != "" {
		noun = "read"
	}

	var denied *session.DeniedError
	switch {
	case errors.As(o.err, &denied):
		add(st.ErrorText.Render("⊘ DENIED") + " — the " + noun + " did not run")
		add(common.WrapOwn(common.StyledInline(denied.Error(), common.MarkFn(st)), width, "  ", "  ")...)
		for _, reason := range denied.Verdict.Reasons {
			add(common.WrapOwn(common.StyledInline(reason, common.MarkFn(st)), width, "• ", "  ")...)
		}
	case errors.Is(o.err, context.Canceled):
		add(st.WarnText.Render("⊗ CANCELLED"))
	case o.err != nil:
		add(st.ErrorText.Render("✗ FAILED") + " — the " + noun + " did not complete")
		add(common.BlockLines(st, o.err.Error(), width, common.MaxShownBytes, g)...)
	default:
		add(st.OKText.Render("✓ OK") + " — the server answered")
	}
	meta := func(callID string, v string, d time.Duration, tainted bool) {
		add(common.WrapOwn(st.Muted.Render("call "+common.Inline(st, callID, 20)+" · "+d.Truncate(time.Millisecond).String()+" · decided by "+common.OrDash(v)), width, "", "  ")...)
		if tainted {
			add(common.WrapOwn(st.WarnText.Render("⚠ untrusted content: it tainted your context")+st.Muted.Render(" (risky calls now ask; w shows it)"), width, "", "  ")...)
		}
	}

	switch {
	case o.read != nil:
		meta(o.read.CallID, string(o.read.Verdict.By), o.read.Duration, o.read.Tainted)
		if o.read.Result == nil {
			break
		}
		section("Contents")
		if len(o.read.Result.Contents) == 0 {
			add(st.Muted.Render("(no contents)"))
		}
		for i, c := range o.read.Result.Contents {
			if i > 0 {
				add("")
			}
			if c == nil {
				add(st.Muted.Render("(empty)"))
				continue
			}
			kind := "text"
			if len(c.Blob) > 0 || c.Text == "" && c.Blob != nil {
				kind = "blob"
			}
			head := st.Key.Render("["+kind+"]") + " " + common.Inline(st, common.OrDash(c.MIMEType), 40)
			if c.URI != "" && c.URI != o.uri {
				head += st.Muted.Render(" · ") + common.Inline(st, c.URI, width/2)
			}
			switch {
			case kind == "blob" && textual(c.MIMEType, c.Blob):
				// Text sent as a blob: shown as text, escaped, and it can be saved.
				add(head + ", " + common.ByteSize(len(c.Blob)) + st.Muted.Render(" (a blob; s saves it)"))
				add(common.BlockLines(st, string(c.Blob), width, common.MaxShownBytes, g)...)
			case kind == "blob":
				head += ", " + common.ByteSize(len(c.Blob)) + st.Muted.Render(" (not drawn; s saves it)")
				add(head)
			default:
				add(head)
				add(common.BlockLines(st, c.Text, width, common.MaxShownBytes, g)...)
			}
			if p, ok := o.saved[i]; ok {
				add(st.OKText.Render("  ✓ saved to ") + common.Inline(st, p, 0))
			}
		}
	case o.got != nil:
		meta(o.got.CallID, string(o.got.Verdict.By), o.got.Duration, o.got.Tainted)
		if len(o.args) > 0 {
			section("Arguments")
			b, _ := jsonMarshal(o.args)
			add(common.BlockLines(st, cli.PrettyJSON(b), width, common.MaxShownBytes, g)...)
		}
		if o.got.Result == nil {
			break
		}
		if o.got.Result.Description != "" {
			section("Description")
			add(common.BlockLines(st, o.got.Result.Description, width, common.MaxShownBytes, g)...)
		}
		section("Messages")
		add(common.WrapOwn(st.Muted.Render("server text: a model that gets this prompt reads it as instructions"), width, "", "")...)
		if len(o.got.Result.Messages) == 0 {
			add(st.Muted.Render("(no messages)"))
		}
		for i, msg := range o.got.Result.Messages {
			if msg == nil {
				continue
			}
			add("", st.Title.Render("── "+common.Inline(st, string(msg.Role), 20)+" ")+st.Muted.Render(fmt.Sprintf("(message %d of %d)", i+1, len(o.got.Result.Messages))))
			if msg.Content != nil {
				add(contentLines(st, msg.Content, width)...)
			}
			if p, ok := o.saved[i]; ok {
				add(st.OKText.Render("  ✓ saved to ") + common.Inline(st, p, 0))
			}
		}
	}
	return strings.Join(lines, "\n")
}
