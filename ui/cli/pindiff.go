package cli

import (
	"encoding/json"
	"strings"

	"github.com/airlock-mcp/airlock/ui/safetext"
)

// MaxDiffLines bounds each side of a definition diff; a longer definition is shown
// whole on both sides instead of diffed (the LCS table is quadratic).
const MaxDiffLines = 1500

// DiffOp is one line of a diff: ' ' kept, '-' only in the pinned definition, '+'
// only in the new one.
type DiffOp struct {
	Op   byte
	Text string
}

// LineDiff is a longest-common-subsequence diff of two line lists.
func LineDiff(a, b []string) []DiffOp {
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
	var out []DiffOp
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, DiffOp{' ', a[i]})
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, DiffOp{'-', a[i]})
			i++
		default:
			out = append(out, DiffOp{'+', b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, DiffOp{'-', a[i]})
	}
	for ; j < m; j++ {
		out = append(out, DiffOp{'+', b[j]})
	}
	return out
}

// DefinitionLines pretty-prints a raw tool definition with sorted keys, so that a
// diff shows what changed rather than how it was ordered.
func DefinitionLines(raw json.RawMessage) []string {
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
	return strings.Split(PrettyJSON(raw), "\n")
}

// PinDiff is the change between a pinned definition and the current one as plain
// lines for a terminal: "- " only pinned, "+ " only current, "  " context (two lines
// around each change, "  ⋯" for what is skipped). Every line is server text, escaped.
func PinDiff(pinned, current json.RawMessage) []string {
	a, b := DefinitionLines(pinned), DefinitionLines(current)
	var out []string
	if len(a) > MaxDiffLines || len(b) > MaxDiffLines {
		out = append(out, "too long to diff; the pinned definition, then the new one:")
		for _, l := range a {
			out = append(out, "- "+safetext.Inline(l))
		}
		for _, l := range b {
			out = append(out, "+ "+safetext.Inline(l))
		}
		return out
	}
	EachDiffLine(LineDiff(a, b), func() { out = append(out, "  ⋯") }, func(o DiffOp) {
		out = append(out, string(o.Op)+" "+safetext.Inline(o.Text))
	})
	return out
}

// EachDiffLine walks the ops of a diff that are within two lines of a change, in
// order, calling line for each; skip is called once for each run of ops left out
// before one that is shown.
func EachDiffLine(ops []DiffOp, skip func(), line func(DiffOp)) {
	const context = 2
	keep := make([]bool, len(ops))
	for i, o := range ops {
		if o.Op != ' ' {
			for k := max(i-context, 0); k <= min(i+context, len(ops)-1); k++ {
				keep[k] = true
			}
		}
	}
	skipped := false
	for i, o := range ops {
		if !keep[i] {
			skipped = true
			continue
		}
		if skipped {
			skip()
			skipped = false
		}
		line(o)
	}
}
