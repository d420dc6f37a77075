package detail

import (
	"encoding/json"
	"strings"

	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// pinDiffLines renders the change between the pinned definition and the current one,
// with two lines of context around each change. Every line is server-controlled: it
// is escaped and wrapped beside a "-", "+" or " " gutter.
func pinDiffLines(st *theme.Styles, pinned, current json.RawMessage, width int) []string {
	a, b := cli.DefinitionLines(pinned), cli.DefinitionLines(current)
	if len(a) > cli.MaxDiffLines || len(b) > cli.MaxDiffLines {
		out := []string{st.Muted.Render("too long to diff; the pinned definition, then the new one:")}
		out = append(out, common.BlockLines(st, strings.Join(a, "\n"), width, common.MaxShownBytes, st.ErrorText.Render("-")+st.Gutter.Render(common.Gutter))...)
		return append(out, common.BlockLines(st, strings.Join(b, "\n"), width, common.MaxShownBytes, st.OKText.Render("+")+st.Gutter.Render(common.Gutter))...)
	}
	var out []string
	cli.EachDiffLine(cli.LineDiff(a, b), func() { out = append(out, st.Muted.Render("  ⋯")) }, func(o cli.DiffOp) {
		var g string
		switch o.Op {
		case '-':
			g = st.ErrorText.Render("-") + st.Gutter.Render(common.Gutter)
		case '+':
			g = st.OKText.Render("+") + st.Gutter.Render(common.Gutter)
		default:
			g = " " + st.Gutter.Render(common.Gutter)
		}
		out = append(out, common.BlockLines(st, o.Text, width, common.MaxShownBytes, g)...)
	})
	if len(out) == 0 {
		out = append(out, st.Muted.Render("the definitions are the same once keys are sorted"))
	}
	return out
}
