package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/pager"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// callResult is what came of one call of the person's.
type callResult struct {
	tool    session.ToolInfo
	args    json.RawMessage
	outcome *session.Outcome
	err     error
	// schema is the check of structuredContent against the tool's outputSchema.
	schema schemaCheck
	// saved maps a content block's index to the file it was saved to (s).
	saved map[int]string
}

// schemaCheck is the outcome of validating structured content.
type schemaCheck struct {
	checked bool
	err     error
}

// checkOutput validates a result's structuredContent against the tool's output
// schema with jsonschema-go (go-sdk's own validator). A tool without an output schema
// is not checked; one with a schema that returns no structured content is reported.
func checkOutput(schema json.RawMessage, res *mcp.CallToolResult) schemaCheck {
	if len(schema) == 0 || string(schema) == "null" || res == nil || res.IsError {
		return schemaCheck{}
	}
	if res.StructuredContent == nil {
		return schemaCheck{checked: true, err: errors.New("the tool declares an output schema but returned no structured content")}
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return schemaCheck{checked: true, err: fmt.Errorf("the output schema cannot be read: %w", err)}
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return schemaCheck{checked: true, err: fmt.Errorf("the output schema cannot be resolved: %w", err)}
	}
	// Validate wants plain JSON values; round-trip whatever the SDK decoded.
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return schemaCheck{checked: true, err: fmt.Errorf("structured content cannot be encoded: %w", err)}
	}
	var inst any
	if err := json.Unmarshal(b, &inst); err != nil {
		return schemaCheck{checked: true, err: fmt.Errorf("structured content cannot be decoded: %w", err)}
	}
	if err := rs.Validate(inst); err != nil {
		return schemaCheck{checked: true, err: err}
	}
	return schemaCheck{checked: true}
}

// newCallResult files a finished call.
func newCallResult(t session.ToolInfo, args json.RawMessage, out *session.Outcome, err error) callResult {
	r := callResult{tool: t, args: args, outcome: out, err: err}
	if err == nil && out != nil {
		r.schema = checkOutput(t.OutputSchema, out.Result)
	}
	return r
}

// resultView shows a call's result, scrollable.
type resultView struct {
	*common.Common
	keys ResultKeyMap
	res  callResult
	// gen numbers the results shown, so that a save that ends after another
	// result replaced this one is not shown on it.
	gen           uint64
	vp            pager.Pager
	width, height int
}

func newResultView(com *common.Common) resultView {
	keys := DefaultResultKeyMap()
	vp := pager.New(keys.ScrollKeyMap)
	return resultView{Common: com, keys: keys, vp: vp}
}

func (r *resultView) show(res callResult) {
	r.res = res
	r.gen++
	r.render()
	r.vp.GotoTop()
}

// SetSize sets the outer size; the content is wrapped again.
func (r *resultView) SetSize(w, h int) {
	r.width, r.height = w, h
	iw, ih := common.PaneInner(w, h)
	r.vp.SetWidth(iw)
	r.vp.SetHeight(max(ih-1, 1))
	r.render()
}

func (r *resultView) render() {
	iw, _ := common.PaneInner(r.width, r.height)
	r.vp.SetContent(resultContent(r.St, r.res, iw))
	r.keys.Again.SetEnabled(r.res.tool.Ref.Tool != "" && r.res.tool.Class.Tier != trust.TierBlocked)
	r.keys.Save.SetEnabled(len(r.blobs()) > 0)
}

// blobs are the result's images, audio and embedded blobs.
func (r resultView) blobs() []blob {
	if r.res.outcome == nil || r.res.outcome.Result == nil {
		return nil
	}
	return contentBlobs(r.res.outcome.Result.Content)
}

// setSaved shows where the blobs were saved, keeping the scroll.
func (r *resultView) setSaved(paths map[int]string) {
	if r.res.saved == nil {
		r.res.saved = map[int]string{}
	}
	for k, v := range paths {
		r.res.saved[k] = v
	}
	y := r.vp.YOffset()
	r.render()
	r.vp.SetYOffset(y)
}

// resultAction is what a key in the results view asks the root to do.
type resultAction int

const (
	resultNone resultAction = iota
	resultBack
	resultAgain
	resultSave
)

// Update handles keys; scrolling goes to the viewport.
func (r resultView) Update(msg tea.Msg) (resultView, resultAction, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, r.keys.Back):
			return r, resultBack, nil
		case key.Matches(k, r.keys.Again):
			return r, resultAgain, nil
		case key.Matches(k, r.keys.Save):
			return r, resultSave, nil
		}
	}
	var cmd tea.Cmd
	cmd = r.vp.Update(msg)
	return r, resultNone, cmd
}

// View renders the heading and the scrolled result in a pane.
func (r resultView) View() string {
	iw, _ := common.PaneInner(r.width, r.height)
	head := "Result of " + common.Inline(r.St, r.res.tool.Ref.Qualified(), iw/2) +
		r.St.Muted.Render(fmt.Sprintf("  %d%%", int(r.vp.ScrollPercent()*100)))
	lines := append([]string{r.St.Header.Render(common.Fit(head, iw))}, strings.Split(r.vp.View(), "\n")...)
	return common.PaneBox(r.St, true, r.width, r.height, lines)
}

// resultContent renders a result for a width: a verdict line that tells success,
// tool error (isError), failure and denial apart by glyph, word and style; then the
// arguments, every content block by kind, and structured content with its schema
// check. Binary content is described by type and size, never drawn.
func resultContent(st *theme.Styles, r callResult, width int) string {
	var lines []string
	add := func(ls ...string) { lines = append(lines, ls...) }
	g := st.Gutter.Render(common.Gutter)
	section := func(name string) { add("", st.Header.Render(name)) }

	var denied *session.DeniedError
	var withdrawn *session.WithdrawnError
	switch {
	case errors.As(r.err, &denied):
		add(st.ErrorText.Render("⊘ DENIED") + " — the call did not run")
		add(common.WrapOwn(common.StyledInline(denied.Error(), common.MarkFn(st)), width, "  ", "  ")...)
		add(st.Key.Render("decided by ") + common.OrDash(string(denied.Verdict.By)))
		for _, reason := range denied.Verdict.Reasons {
			add(common.WrapOwn(common.StyledInline(reason, common.MarkFn(st)), width, "• ", "  ")...)
		}
	case errors.As(r.err, &withdrawn):
		// Withdrawn while it waited for a person: why it asked is kept.
		add(st.WarnText.Render("⊗ CANCELLED") + " — withdrawn while it waited for a person; it did not run")
		add(st.Key.Render("decided by ") + common.OrDash(string(withdrawn.Verdict.By)))
		for _, reason := range withdrawn.Verdict.Reasons {
			add(common.WrapOwn(common.StyledInline(reason, common.MarkFn(st)), width, "• ", "  ")...)
		}
	case errors.Is(r.err, context.Canceled):
		add(st.WarnText.Render("⊗ CANCELLED") + " — you cancelled the call; the server was told to stop")
	case r.err != nil:
		add(st.ErrorText.Render("✗ FAILED") + " — the call did not complete")
		add(common.BlockLines(st, r.err.Error(), width, common.MaxShownBytes, g)...)
	case r.outcome == nil || r.outcome.Result == nil:
		add(st.ErrorText.Render("✗ FAILED") + " — no result")
	case r.outcome.Result.IsError:
		add(st.ErrorText.Render("✗ TOOL ERROR") + " — the tool reported an error (isError)")
	default:
		add(st.OKText.Render("✓ OK") + " — the tool returned a result")
	}
	if o := r.outcome; o != nil {
		meta := "call " + common.Inline(st, o.CallID, 20) + " · " + o.Duration.Truncate(time.Millisecond).String()
		if len(o.Verdict.Reasons) > 0 || o.Verdict.By != "" {
			meta += " · decided by " + string(o.Verdict.By)
		}
		add(st.Muted.Render(meta))
	}

	section("Arguments")
	add(common.BlockLines(st, cli.PrettyJSON(r.args), width, common.MaxShownBytes, g)...)

	if r.outcome == nil || r.outcome.Result == nil {
		return strings.Join(lines, "\n")
	}
	res := r.outcome.Result
	section("Content")
	if len(res.Content) == 0 {
		add(st.Muted.Render("(no content blocks)"))
	}
	for i, c := range res.Content {
		if i > 0 {
			add("")
		}
		add(contentLines(st, c, width)...)
		if p, ok := r.saved[i]; ok {
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

// contentLines renders one content block by kind.
func contentLines(st *theme.Styles, c mcp.Content, width int) []string {
	g := st.Gutter.Render(common.Gutter)
	kind := func(s string) string { return st.Key.Render("[" + s + "]") }
	switch c := c.(type) {
	case *mcp.TextContent:
		return append([]string{kind("text")}, common.BlockLines(st, c.Text, width, common.MaxShownBytes, g)...)
	case *mcp.ImageContent:
		return []string{kind("image") + " " + common.Inline(st, common.OrDash(c.MIMEType), 40) + ", " + common.ByteSize(len(c.Data)) + st.Muted.Render(" (not drawn; s saves it)")}
	case *mcp.AudioContent:
		return []string{kind("audio") + " " + common.Inline(st, common.OrDash(c.MIMEType), 40) + ", " + common.ByteSize(len(c.Data)) + st.Muted.Render(" (not played; s saves it)")}
	case *mcp.ResourceLink:
		out := []string{kind("resource link") + " " + common.Inline(st, c.URI, width-16)}
		if c.Name != "" || c.Title != "" {
			out = append(out, "  name: "+common.Inline(st, c.Name, width/2)+"  "+common.Inline(st, c.Title, width/3))
		}
		if c.MIMEType != "" || c.Size != nil {
			s := "  type: " + common.Inline(st, common.OrDash(c.MIMEType), 40)
			if c.Size != nil {
				s += ", " + common.ByteSize(int(*c.Size))
			}
			out = append(out, s)
		}
		if c.Description != "" {
			out = append(out, common.BlockLines(st, c.Description, width, common.MaxShownBytes, g)...)
		}
		return out
	case *mcp.EmbeddedResource:
		if c.Resource == nil {
			return []string{kind("embedded resource") + st.Muted.Render(" (empty)")}
		}
		r := c.Resource
		out := []string{kind("embedded resource") + " " + common.Inline(st, r.URI, width-20)}
		if r.MIMEType != "" {
			out = append(out, "  type: "+common.Inline(st, r.MIMEType, 40))
		}
		if r.Text != "" {
			out = append(out, common.BlockLines(st, r.Text, width, common.MaxShownBytes, g)...)
		}
		if len(r.Blob) > 0 {
			out = append(out, "  blob: "+common.ByteSize(len(r.Blob))+st.Muted.Render(" (not drawn; s saves it)"))
		}
		return out
	}
	b, err := json.Marshal(c)
	if err != nil {
		return []string{kind("unknown content") + st.Muted.Render(" (cannot be shown)")}
	}
	return append([]string{kind("other content")}, common.BlockLines(st, string(b), width, common.MaxShownBytes, g)...)
}

// keyMap returns the bindings that apply now, for the footer.
func (r resultView) keyMap() common.KeyMapFunc {
	return common.KeyMapFunc{Short: r.keys.ShortHelp(), Full: r.keys.FullHelp()}
}
