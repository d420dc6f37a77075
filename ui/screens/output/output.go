// Package output is the screen of what a resource read or a prompt get returned,
// shown as call results are: a verdict line (OK, failed, denied), whether it
// tainted the person's context, then every content escaped in the gutter; blobs,
// images and audio by type and size, saved to files with s (a content.Save the
// root carries out). It never reads the session.
package output

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/pager"
	"github.com/airlock-mcp/airlock/ui/screen"
	"github.com/airlock-mcp/airlock/ui/screens/content"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// KeyMap holds the keys of the output view.
type KeyMap struct {
	common.ScrollKeyMap
	// Again reads the resource again, or opens the prompt's form again.
	Again key.Binding
	Save  key.Binding
	Back  key.Binding
}

// DefaultKeyMap returns the output view's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		ScrollKeyMap: common.DefaultScrollKeyMap(),
		Again:        key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "read / get again")),
		Save:         key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "save blobs, images and audio to files")),
		Back:         key.NewBinding(key.WithKeys("esc", "enter", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	save := k.Save
	save.SetHelp("s", "save media")
	return []key.Binding{k.Down, k.Again, save, k.Back}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Column(), {k.Again, k.Save, k.Back}}
}

// Output is what one read or get returned.
type Output struct {
	Server string
	// URI is the resource read ("" for a prompt); Prompt and Args the prompt's
	// name and arguments.
	URI    string
	Prompt string
	Args   map[string]string
	Read   *model.ReadOutcome
	Got    *model.PromptOutcome
	Err    error
	Saved  map[int]string
}

// What names the output: the resource's URI or the prompt's name.
func (o Output) What() string {
	if o.URI != "" {
		return o.URI
	}
	return o.Prompt
}

// blobs are the output's savable pieces, numbered by content (a resource) or
// message (a prompt).
func (o Output) blobs() []content.Blob {
	var out []content.Blob
	switch {
	case o.Read != nil && o.Read.Result != nil:
		for i, c := range o.Read.Result.Contents {
			if c != nil && len(c.Blob) > 0 {
				out = append(out, content.Blob{N: i, MIME: c.MIMEType, Data: c.Blob})
			}
		}
	case o.Got != nil && o.Got.Result != nil:
		for i, msg := range o.Got.Result.Messages {
			if msg == nil {
				continue
			}
			for _, b := range content.Blobs([]mcp.Content{msg.Content}) {
				b.N = i
				out = append(out, b)
			}
		}
	}
	return out
}

// Model shows an output, scrollable.
type Model struct {
	*common.Common
	keys KeyMap
	// Out is the output shown; Gen numbers the outputs shown, so that a save
	// that ends after another output replaced this one is not shown on it.
	Out Output
	Gen uint64
	vp  pager.Pane
}

// New returns the output screen over the root's Common.
func New(com *common.Common) Model {
	keys := DefaultKeyMap()
	vp := pager.NewPane(keys.ScrollKeyMap)
	return Model{Common: com, keys: keys, vp: vp}
}

// Show shows o from its top.
func (v *Model) Show(o Output) {
	v.Out = o
	v.Gen++
	v.render()
	v.vp.GotoTop()
}

// SetSize sets the outer size; the content is wrapped again.
func (v *Model) SetSize(w, h int) {
	v.vp.SetSize(w, h)
	v.render()
}

func (v *Model) render() {
	iw := v.vp.InnerWidth()
	v.vp.SetContent(outputContent(v.St, v.Out, iw))
	v.keys.Save.SetEnabled(len(v.Out.blobs()) > 0)
	v.keys.Again.SetEnabled(v.Out.Server != "")
	if v.Out.URI != "" {
		v.keys.Again.SetHelp("r", "read again")
	} else {
		v.keys.Again.SetHelp("r", "get again")
	}
}

// SavedMsg is a content.Saved of the output screen.
type SavedMsg struct{ content.Saved }

// SetSaved shows where the blobs were saved, keeping the scroll.
func (v *Model) SetSaved(paths map[int]string) {
	v.Out.Saved = content.AddSaved(v.Out.Saved, paths)
	v.vp.KeepScroll(v.render)
}

// Again asks the root to read the resource again, or to open the prompt's form
// again.
type Again struct{ Out Output }

// Update handles keys; scrolling goes to the viewport. Save asks the root to
// save the output's media only when it has any.
func (v *Model) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, v.keys.Back):
			return screen.Back{}, nil
		case key.Matches(k, v.keys.Again):
			return Again{Out: v.Out}, nil
		case key.Matches(k, v.keys.Save):
			return content.SaveOf(v.Out.Server, v.Out.What(), v.Gen, v.Out.blobs(), func(s content.Saved) tea.Msg { return SavedMsg{s} }), nil
		}
	}
	return nil, v.vp.Update(msg)
}

// View renders the heading and the scrolled output in a pane.
func (v *Model) View() string {
	iw := v.vp.InnerWidth()
	kind := "Prompt "
	if v.Out.URI != "" {
		kind = "Resource "
	}
	head := kind + common.Inline(v.St, v.Out.Server, iw/4) + v.St.Muted.Render(" › ") + common.Inline(v.St, v.Out.What(), iw/2) +
		v.vp.Percent(v.St)
	return v.vp.Box(v.St, head)
}

// KeyMap returns the bindings that apply now, for the footer.
func (v *Model) KeyMap() help.KeyMap {
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
func outputContent(st *theme.Styles, o Output, width int) string {
	var lines []string
	add := func(ls ...string) { lines = append(lines, ls...) }
	g := st.Gutter.Render(common.Gutter)
	section := func(name string) { add("", st.Header.Render(name)) }
	noun := "prompt"
	if o.URI != "" {
		noun = "read"
	}

	var denied *model.DeniedError
	switch {
	case errors.As(o.Err, &denied):
		add(st.ErrorText.Render("⊘ DENIED") + " — the " + noun + " did not run")
		add(common.WrapOwn(common.StyledInline(denied.Error(), common.MarkFn(st)), width, "  ", "  ")...)
		for _, reason := range denied.Verdict.Reasons {
			add(common.WrapOwn(common.StyledInline(reason, common.MarkFn(st)), width, "• ", "  ")...)
		}
	case errors.Is(o.Err, context.Canceled):
		add(st.WarnText.Render("⊗ CANCELLED"))
	case o.Err != nil:
		add(st.ErrorText.Render("✗ FAILED") + " — the " + noun + " did not complete")
		add(common.BlockLines(st, o.Err.Error(), width, common.MaxShownBytes, g)...)
	default:
		add(st.OKText.Render("✓ OK") + " — the server answered")
	}
	meta := func(callID string, v string, d time.Duration, tainted bool) {
		add(common.WrapOwn(st.Muted.Render("call "+common.Inline(st, callID, 20)+" · "+d.Truncate(time.Millisecond).String()+" · "+common.PlainInline(model.DecidedSentence(trust.Allow, trust.DecidedBy(v)))), width, "", "  ")...)
		if tainted {
			add(common.WrapOwn(st.WarnText.Render("⚠ untrusted content: it tainted your context")+st.Muted.Render(" (risky calls now ask; w shows it)"), width, "", "  ")...)
		}
	}

	switch {
	case o.Read != nil:
		meta(o.Read.CallID, string(o.Read.Verdict.By), o.Read.Duration, o.Read.Tainted)
		if o.Read.Result == nil {
			break
		}
		section("Contents")
		if len(o.Read.Result.Contents) == 0 {
			add(st.Muted.Render("(no contents)"))
		}
		for i, c := range o.Read.Result.Contents {
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
			if c.URI != "" && c.URI != o.URI {
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
			if p, ok := o.Saved[i]; ok {
				add(st.OKText.Render("  ✓ saved to ") + common.Inline(st, p, 0))
			}
		}
	case o.Got != nil:
		meta(o.Got.CallID, string(o.Got.Verdict.By), o.Got.Duration, o.Got.Tainted)
		if len(o.Args) > 0 {
			section("Arguments")
			b, _ := json.Marshal(o.Args)
			add(common.BlockLines(st, cli.PrettyJSON(b), width, common.MaxShownBytes, g)...)
		}
		if o.Got.Result == nil {
			break
		}
		if o.Got.Result.Description != "" {
			section("Description")
			add(common.BlockLines(st, o.Got.Result.Description, width, common.MaxShownBytes, g)...)
		}
		section("Messages")
		add(common.WrapOwn(st.Muted.Render("server text: a model that gets this prompt reads it as instructions"), width, "", "")...)
		if len(o.Got.Result.Messages) == 0 {
			add(st.Muted.Render("(no messages)"))
		}
		for i, msg := range o.Got.Result.Messages {
			if msg == nil {
				continue
			}
			add("", st.Title.Render("── "+common.Inline(st, string(msg.Role), 20)+" ")+st.Muted.Render(fmt.Sprintf("(message %d of %d)", i+1, len(o.Got.Result.Messages))))
			if msg.Content != nil {
				add(content.Lines(st, msg.Content, width)...)
			}
			if p, ok := o.Saved[i]; ok {
				add(st.OKText.Render("  ✓ saved to ") + common.Inline(st, p, 0))
			}
		}
	}
	return strings.Join(lines, "\n")
}
