package trust

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// OpenArgs lists the arguments of a call that no condition of when bounds, by
// dotted path and sorted: what a rule with these conditions lets through whatever
// its value. args is the call's arguments as encoding/json decodes them into an any
// (decoded once by the caller: they can be megabytes, and the dialog asks again at
// every edit). An object some condition looks into is opened; one none looks into is
// named whole. A list or a string whose only condition is max is named too: its
// length is bounded, not its members or its text. A name that cannot be written as
// a dotted path (empty, or holding a dot) is never looked at by any condition, so it
// is always named, in brackets and quotes (`["a.b"]`), so that it never reads as the
// nested path a.b a condition may name. args that are not an object give nil.
func OpenArgs(args any, when map[string]map[string]any) []string {
	obj, ok := args.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k == "" || strings.Contains(k, ".") {
				out = append(out, prefix+"["+strconv.Quote(k)+"]")
				continue
			}
			field := prefix + k
			exact, inside := false, false
			for f, ms := range when {
				exact = exact || f == field && boundsValue(m[k], ms)
				inside = inside || strings.HasPrefix(f, field+".")
			}
			sub, isObj := m[k].(map[string]any)
			switch {
			case exact:
			case inside && isObj:
				walk(field+".", sub)
			default:
				out = append(out, field)
			}
		}
	}
	walk("", obj)
	return out
}

// boundsValue reports whether the matchers ms bound value v itself: any matcher
// but max does, and max does for a number; for a list or a string, max bounds only
// how long it is.
func boundsValue(v any, ms map[string]any) bool {
	switch v.(type) {
	case []any, string:
		for k := range ms {
			if k != string(MatchMax) {
				return true
			}
		}
		return false
	}
	return len(ms) > 0
}

// DescribeWhen is a rule's conditions as one line, "url host [docs.python.org]",
// as the CLI, the Rules view and the audit log's reasons say them.
func DescribeWhen(w map[string]map[string]any) string {
	if len(w) == 0 {
		return "any arguments"
	}
	var parts []string
	for _, f := range slices.Sorted(maps.Keys(w)) {
		for _, k := range slices.Sorted(maps.Keys(w[f])) {
			parts = append(parts, fmt.Sprintf("%s %s %v", f, k, w[f][k]))
		}
	}
	return strings.Join(parts, ", ")
}
