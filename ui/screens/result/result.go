// Package result is the screen of what came of one call of the person's: a
// verdict line that tells success, tool error, failure and denial apart, the
// arguments, every content block escaped, and structured content with what the
// session's check of it against the tool's output schema found. Its keys ask the root to call the tool again or to
// save the result's media (a content.Save); it never reads the session.
package result

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

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

// KeyMap holds the keys of the results view.
type KeyMap struct {
	common.ScrollKeyMap
	Again key.Binding
	// Save writes the result's images, audio and blobs to new files; it is
	// enabled only when the result has any.
	Save key.Binding
	Back key.Binding
}

// DefaultKeyMap returns the results view's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		ScrollKeyMap: common.DefaultScrollKeyMap(),
		Again:        key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "call again")),
		Save:         key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "save images/audio to files")),
		Back:         key.NewBinding(key.WithKeys("esc", "enter", "backspace"), key.WithHelp("esc", "back")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	save := k.Save
	save.SetHelp("s", "save media")
	down := k.Down
	down.SetHelp(down.Help().Key, "scroll")
	return []key.Binding{down, k.Again, save, k.Back}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Column(), {k.Again, k.Save, k.Back}}
}

// Outcome is what a call that ran returned, in the fields the screen shows (the
// session's outcome of a call, or an activity record's).
type Outcome struct {
	CallID   string
	Verdict  trust.Verdict
	Result   *mcp.CallToolResult
	Duration time.Duration
	// Checked: the session checked the result against the output schema of the
	// tool the call was decided on, and it matched (session.Outcome.Checked).
	Checked bool
}

// Result is what came of one call of the person's.
type Result struct {
	Tool    model.ToolInfo
	Args    json.RawMessage
	Outcome *Outcome
	Err     error
	// schema is the check of structuredContent against the tool's outputSchema.
	schema schemaCheck
	// Saved maps a content block's index to the file it was saved to (s).
	Saved map[int]string
	// ArgsUnkept and ResultUnkept say the arguments or the result of a call that
	// ran are no longer in memory (the activity list bounds what it holds): the
	// screen says so rather than show them empty.
	ArgsUnkept, ResultUnkept bool
}

// schemaCheck is what the screen says of the check of structured content against
// the tool's output schema, which Manager.Call made: the screen does not check again.
type schemaCheck struct {
	checked bool
	err     error
}

// schemaOf is the check Manager.Call made of a result: a result that does not match
// the tool's output schema (or has no structured content under one) came back as
// model.ErrResultSchema; one that matched came back Checked. Which schema that was
// is the session's: the tool the call was decided on, which may be another listing's
// than the one the screen was given. Anything else (no schema, a tool error, which is
// not checked, no result) says nothing.
func schemaOf(out *Outcome, err error) schemaCheck {
	switch {
	case errors.Is(err, model.ErrResultSchema):
		return schemaCheck{checked: true, err: err}
	case err == nil && out != nil && out.Checked:
		return schemaCheck{checked: true}
	}
	return schemaCheck{}
}

// New files a finished call.
func New(t model.ToolInfo, args json.RawMessage, out *Outcome, err error) Result {
	return Result{Tool: t, Args: args, Outcome: out, Err: err, schema: schemaOf(out, err)}
}

// Model shows a call's result, scrollable.
type Model struct {
	*common.Common
	keys KeyMap
	// Res is the result shown.
	Res Result
	// Gen numbers the results shown, so that a save that ends after another
	// result replaced this one is not shown on it.
	Gen uint64
	// VP is the scrolled result.
	VP pager.Pane
}

// NewModel returns the results screen over the root's Common.
func NewModel(com *common.Common) Model {
	keys := DefaultKeyMap()
	vp := pager.NewPane(keys.ScrollKeyMap)
	return Model{Common: com, keys: keys, VP: vp}
}

// Show shows res from its top.
func (r *Model) Show(res Result) {
	r.Res = res
	r.Gen++
	r.render()
	r.VP.GotoTop()
}

// SetSize sets the outer size; the content is wrapped again.
func (r *Model) SetSize(w, h int) {
	r.VP.SetSize(w, h)
	r.render()
}

func (r *Model) render() {
	iw := r.VP.InnerWidth()
	r.VP.SetContent(Content(r.St, r.Res, iw))
	r.keys.Again.SetEnabled(r.Res.Tool.Ref.Tool != "" && r.Res.Tool.Class.Tier != trust.TierBlocked)
	r.keys.Save.SetEnabled(len(r.blobs()) > 0)
}

// blobs are the result's images, audio and embedded blobs.
func (r *Model) blobs() []content.Blob {
	if r.Res.Outcome == nil || r.Res.Outcome.Result == nil {
		return nil
	}
	return content.Blobs(r.Res.Outcome.Result.Content)
}

// SavedMsg is a content.Saved of the results screen.
type SavedMsg struct{ content.Saved }

// SetSaved shows where the blobs were saved, keeping the scroll.
func (r *Model) SetSaved(paths map[int]string) {
	r.Res.Saved = content.AddSaved(r.Res.Saved, paths)
	r.VP.KeepScroll(r.render)
}

// Again asks the root to open the call form of Tool again (its newest
// definition when the tool is still listed), filled with the last arguments.
type Again struct{ Tool model.ToolInfo }

// Update handles keys; scrolling goes to the viewport. Save asks the root to
// save the result's media only when it has any.
func (r *Model) Update(msg tea.Msg) (screen.Intent, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, r.keys.Back):
			return screen.Back{}, nil
		case key.Matches(k, r.keys.Again):
			return Again{Tool: r.Res.Tool}, nil
		case key.Matches(k, r.keys.Save):
			ref := r.Res.Tool.Ref
			return content.SaveOf(ref.Server, ref.Tool, r.Gen, r.blobs(), func(s content.Saved) tea.Msg { return SavedMsg{s} }), nil
		}
	}
	return nil, r.VP.Update(msg)
}

// View renders the heading and the scrolled result in a pane.
func (r *Model) View() string {
	iw := r.VP.InnerWidth()
	head := "Result of " + common.Inline(r.St, r.Res.Tool.Ref.Qualified(), iw/2) +
		r.VP.Percent(r.St)
	return r.VP.Box(r.St, head)
}

// Content renders a result for a width: a verdict line that tells success,
// tool error (isError), failure and denial apart by glyph, word and style; then the
// arguments, every content block by kind, and structured content with its schema
// check. Binary content is described by type and size, never drawn.
func Content(st *theme.Styles, r Result, width int) string {
	var lines []string
	add := func(ls ...string) { lines = append(lines, ls...) }
	g := st.Gutter.Render(common.Gutter)
	section := func(name string) { add("", st.Header.Render(name)) }

	var denied *model.DeniedError
	var withdrawn *model.WithdrawnError
	switch {
	case errors.As(r.Err, &denied):
		add(st.ErrorText.Render("⊘ DENIED") + " — the call did not run")
		add(common.WrapOwn(common.StyledInline(denied.Error(), common.MarkFn(st)), width, "  ", "  ")...)
		add(common.WrapOwn(st.Key.Render("decided: ")+common.PlainInline(model.DecidedSentence(trust.Deny, denied.Verdict.By)), width, "", "  ")...)
		for _, reason := range denied.Verdict.Reasons {
			add(common.WrapOwn(common.StyledInline(reason, common.MarkFn(st)), width, "• ", "  ")...)
		}
	case errors.As(r.Err, &withdrawn):
		// Withdrawn while it waited for a person: why it asked is kept.
		add(common.WrapOwn(st.WarnText.Render("⊗ CANCELLED")+" — withdrawn while it waited for a person; it did not run", width, "", "  ")...)
		add(common.WrapOwn(st.Key.Render("decided: ")+common.PlainInline(model.DecidedSentence(trust.Deny, withdrawn.Verdict.By)), width, "", "  ")...)
		for _, reason := range withdrawn.Verdict.Reasons {
			add(common.WrapOwn(common.StyledInline(reason, common.MarkFn(st)), width, "• ", "  ")...)
		}
	case errors.Is(r.Err, context.Canceled):
		add(st.WarnText.Render("⊗ CANCELLED") + " — you cancelled the call; the server was told to stop")
	case errors.Is(r.Err, model.ErrResultSchema):
		// Said under "Structured content", beside what the server sent.
		add(st.ErrorText.Render("✗ RESULT INVALID") + " — the tool ran, but its result does not match its output schema; an agent is given this error, not the result")
	case r.Err != nil:
		add(st.ErrorText.Render("✗ FAILED") + " — the call did not complete")
		add(common.BlockLines(st, r.Err.Error(), width, common.MaxShownBytes, g)...)
	case r.ResultUnkept:
		add(common.WrapOwn(st.Muted.Render("the result is no longer kept in memory (airlock keeps the newest calls' only); the audit log has the call's record"), width, "", "")...)
	case r.Outcome == nil || r.Outcome.Result == nil:
		add(st.ErrorText.Render("✗ FAILED") + " — no result")
	case r.Outcome.Result.IsError:
		add(st.ErrorText.Render("✗ TOOL ERROR") + " — the tool reported an error (isError)")
	default:
		add(st.OKText.Render("✓ OK") + " — the tool returned a result")
	}
	if o := r.Outcome; o != nil {
		meta := "call " + common.Inline(st, o.CallID, 20) + " · " + o.Duration.Truncate(time.Millisecond).String()
		if len(o.Verdict.Reasons) > 0 || o.Verdict.By != "" {
			meta += " · " + common.PlainInline(model.DecidedSentence(trust.Allow, o.Verdict.By))
		}
		add(common.WrapOwn(st.Muted.Render(meta), width, "", "  ")...)
	}

	section("Arguments")
	if r.ArgsUnkept {
		add(common.WrapOwn(st.Muted.Render("no longer kept in memory; the audit log has them"), width, "", "")...)
	} else {
		add(common.BlockLines(st, cli.PrettyJSON(r.Args), width, common.MaxShownBytes, g)...)
	}

	if r.Outcome == nil || r.Outcome.Result == nil {
		return strings.Join(lines, "\n")
	}
	res := r.Outcome.Result
	section("Content")
	if len(res.Content) == 0 {
		add(st.Muted.Render("(no content blocks)"))
	}
	for i, c := range res.Content {
		if i > 0 {
			add("")
		}
		add(content.Lines(st, c, width)...)
		if p, ok := r.Saved[i]; ok {
			add(st.OKText.Render("  ✓ saved to ") + common.Inline(st, p, 0))
		}
	}
	if res.StructuredContent != nil || r.schema.checked {
		section("Structured content")
		if res.StructuredContent != nil {
			b, err := json.MarshalIndent(res.StructuredContent, "", "  ")
			if err != nil {
				add(st.ErrorText.Render("✗ cannot be shown: ") + common.StyledInline(err.Error(), common.MarkFn(st)))
			} else {
				add(common.BlockLines(st, string(b), width, common.MaxShownBytes, g)...)
			}
		}
		switch {
		case !r.schema.checked:
		case r.schema.err != nil:
			add(st.ErrorText.Render("✗ does NOT match the tool's output schema:"))
			add(common.BlockLines(st, r.schema.err.Error(), width, common.MaxShownBytes, g)...)
		default:
			add(st.OKText.Render("✓ matches the tool's output schema"))
		}
	}
	return strings.Join(lines, "\n")
}

// KeyMap returns the bindings that apply now, for the footer.
func (r *Model) KeyMap() help.KeyMap {
	return common.KeyMapFunc{Short: r.keys.ShortHelp(), Full: r.keys.FullHelp()}
}
