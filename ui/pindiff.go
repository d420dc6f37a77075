package ui

import (
	"encoding/json"
	"strings"

	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// maxDiffLines bounds each side of a definition diff; a longer definition is shown
// whole on both sides instead of diffed (the LCS table is quadratic).
const maxDiffLines = 1500

// diffOp is one line of a diff: ' ' kept, '-' only in the pinned definition, '+'
// only in the new one.
type diffOp struct {
	op   byte
	text string
}

// lineDiff is a longest-common-subsequence diff of two line lists.
func lineDiff(a, b []string) []diffOp {
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffOp
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, diffOp{' ', a[i]})
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, diffOp{'-', a[i]})
			i++
		default:
			out = append(out, diffOp{'+', b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, diffOp{'-', a[i]})
	}
	for ; j < m; j++ {
		out = append(out, diffOp{'+', b[j]})
	}
	return out
}

// definitionLines pretty-prints a raw tool definition with sorted keys, so that a
// diff shows what changed rather than how it was ordered.
func definitionLines(raw json.RawMessage) []string {
	var v any
	if err := json.Unmarshal(raw, &v); err == nil {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // show <IMPORTANT> as the server wrote it
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err == nil {
			return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		}
	}
	return strings.Split(cli.PrettyJSON(raw), "\n")
}

// pinDiffLines renders the change between the pinned definition and the current one,
// with two lines of context around each change. Every line is server-controlled: it
// is escaped and wrapped beside a "-", "+" or " " gutter.
func pinDiffLines(st *theme.Styles, pinned, current json.RawMessage, width int) []string {
	a, b := definitionLines(pinned), definitionLines(current)
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		out := []string{st.Muted.Render("too long to diff; the pinned definition, then the new one:")}
		out = append(out, blockLines(st, strings.Join(a, "\n"), width, maxShownBytes, st.ErrorText.Render("-")+st.Gutter.Render(gutter))...)
		return append(out, blockLines(st, strings.Join(b, "\n"), width, maxShownBytes, st.OKText.Render("+")+st.Gutter.Render(gutter))...)
	}
	ops := lineDiff(a, b)
	const context = 2
	keep := make([]bool, len(ops))
	for i, o := range ops {
		if o.op != ' ' {
			for k := max(i-context, 0); k <= min(i+context, len(ops)-1); k++ {
				keep[k] = true
			}
		}
	}
	var out []string
	skipped := false
	for i, o := range ops {
		if !keep[i] {
			skipped = true
			continue
		}
		if skipped {
			out = append(out, st.Muted.Render("  ⋯"))
			skipped = false
		}
		var g string
		switch o.op {
		case '-':
			g = st.ErrorText.Render("-") + st.Gutter.Render(gutter)
		case '+':
			g = st.OKText.Render("+") + st.Gutter.Render(gutter)
		default:
			g = " " + st.Gutter.Render(gutter)
		}
		out = append(out, blockLines(st, o.text, width, maxShownBytes, g)...)
	}
	if len(out) == 0 {
		out = append(out, st.Muted.Render("the definitions are the same once keys are sorted"))
	}
	return out
}
