package secrets

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/airlock-mcp/airlock/internal/jsonlex"
	"github.com/airlock-mcp/airlock/trust"
)

// Known is a secret airlock knows by its value, not its shape: the value of an
// environment variable it passes to a server.
type Known struct {
	// Name completes "body holds …" without the value: "the value of API_KEY that
	// airlock passes to server mail".
	Name  string
	Value string
}

// MinKnown is the shortest Known value Find looks for, in bytes: a shorter one
// ("1", "true", "prod") is found in ordinary text too often to mean a leak.
const MinKnown = 8

// MaxFindings bounds what Find reports; it stops reading at the last.
const MaxFindings = 16

// Finding is one secret found in a call's arguments: where, and what it looks like.
// It never holds the secret.
type Finding struct {
	// Path names the argument: body, headers.Authorization, items[2]; "" is the
	// arguments as a whole. A key name that itself holds a secret is shown as […].
	Path string
	// Shape completes "something shaped like …" ("a GitHub token"), or, when Known,
	// is the Known's Name.
	Shape string
	// Known says the value equals a Known's value (or holds it).
	Known bool
	// InKey says the secret is in a key name of the object at Path.
	InKey bool
	// Unchecked says the arguments could not be read to the end (invalid JSON, or
	// nested deeper than trust.MaxArgsDepth): they are treated as holding a secret.
	Unchecked bool
}

// Sentence is the finding in words: "body holds something shaped like a GitHub
// token".
func (f Finding) Sentence() string {
	if f.Unchecked {
		return "the arguments cannot be read to the end (" + f.Shape + "), so airlock cannot tell whether they hold a secret"
	}
	subject := f.Path + " holds"
	switch {
	case f.InKey && f.Path == "":
		subject = "a key name of the arguments holds"
	case f.InKey:
		subject = "a key name in " + f.Path + " holds"
	case f.Path == "":
		subject = "the arguments hold"
	}
	if f.Known {
		return subject + " " + f.Shape
	}
	return subject + " something shaped like " + f.Shape
}

// maxSentences is how many findings Sentence names before it counts the rest.
const maxSentences = 3

// Sentence is the findings in one sentence, the first few named and the rest
// counted; "" when there are none.
func Sentence(fs []Finding) string {
	var parts []string
	for i, f := range fs {
		if i == maxSentences {
			parts[len(parts)-1] += " (and " + strconv.Itoa(len(fs)-i) + " more)"
			break
		}
		parts = append(parts, f.Sentence())
	}
	return strings.Join(parts, "; ")
}

// Find reports the secrets in a call's arguments (JSON): any string value or key
// name, at any depth up to trust.MaxArgsDepth, that holds a secret shape (the table
// of shapes the audit log redacts, each named; not the log's NAME=value
// assignments, which in a message are too often prose) or the value of a Known of
// at least MinKnown bytes (a shorter one is never looked for), and any number that
// holds a Known's value, as written or, for a Known of digits only, in its value
// (a PIN sent as 12345678 or 1.2345678e7: number.go). A secret
// inside a longer string or number counts. Findings come in the order of the
// arguments, at most MaxFindings; each names its argument by its path. Arguments
// that cannot be read to the end (invalid, or too deep) are one Unchecked finding:
// nothing unread passes as clean.
//
// Its work is linear in the size of args: one scan of each string (shapes.go: an
// expression runs only where a shape's literal stands), and one search per Known.
func Find(args json.RawMessage, known []Known) []Finding {
	w := walker{b: args, known: usable(known)}
	var out []Finding
	w.visit = func(s []byte, key bool, _, _ int) bool {
		n := len(out)
		for _, f := range w.find(s) {
			f.InKey = key
			f.Path = w.path()
			if !slices.Contains(out[n:], f) {
				out = append(out, f)
			}
		}
		return len(out) < MaxFindings
	}
	w.numbers = func(lit []byte, _, _ int) bool {
		numberKnown(lit, w.known, func(k Known, _, _ int) {
			if f := (Finding{Path: w.path(), Shape: k.Name, Known: true}); !slices.Contains(out, f) {
				out = append(out, f)
			}
		})
		return len(out) < MaxFindings
	}
	if why := w.run(); why != "" {
		out = append(out, Finding{Shape: why, Unchecked: true})
	}
	if len(out) > MaxFindings {
		out = out[:MaxFindings]
	}
	return out
}

// Mask returns args with every secret Find would report replaced by its mask: the
// published prefix of its shape, if any, and its length, as in "ghp_…(40 chars)"
// (a Known's value keeps nothing). A number holding a Known becomes a string of its
// masked literal. Arguments Find cannot read to the end are replaced whole by a
// string that says so.
func Mask(args json.RawMessage, known []Known) json.RawMessage {
	w := walker{b: args, known: usable(known)}
	var out []byte
	last := 0
	// replace puts the mask of s, the value at args[start:end], in its place.
	replace := func(s []byte, spans []span, start, end int) bool {
		if len(spans) > 0 {
			out = append(out, args[last:start]...)
			out = appendJSONString(out, masked(s, spans))
			last = end
		}
		return true
	}
	w.visit = func(s []byte, _ bool, start, end int) bool { return replace(s, w.spans(s), start, end) }
	// A number holding a Known becomes a string: what is shown is its mask.
	w.numbers = func(lit []byte, start, end int) bool { return replace(lit, numberSpans(lit, w.known), start, end) }
	if why := w.run(); why != "" {
		return json.RawMessage(strconv.Quote("[arguments airlock cannot read: " + why + "]"))
	}
	if out == nil {
		return args
	}
	return append(out, args[last:]...)
}

// usable is known without the values too short to look for.
func usable(known []Known) []Known {
	return slices.DeleteFunc(slices.Clone(known), func(k Known) bool { return len(k.Value) < MinKnown })
}

// find is what one decoded string holds: each shape once, in the order found, then
// each Known once, then what its decodings hold that it does not (encoded.go).
func (w *walker) find(s []byte) []Finding {
	var fs []Finding
	add := func(f Finding) {
		if !slices.Contains(fs, f) {
			fs = append(fs, f)
		}
	}
	w.secrets(s, nil, func(name string, known bool, _ span) { add(Finding{Shape: name, Known: known}) })
	decodings(s, func(d *decoding) bool {
		w.secrets(d.b, d, func(name string, known bool, _ span) { add(Finding{Shape: name + ", " + d.enc, Known: known}) })
		return len(fs) < MaxFindings
	})
	return fs
}

// secrets calls f with each secret in s — each shape's matches, then each Known's
// occurrences — with its span in s. For a decoding d of the string (s is then d.b),
// only the secrets its decoding made are reported, each with the span of the
// string it came from and nothing kept visible.
func (w *walker) secrets(s []byte, d *decoding, f func(name string, known bool, sp span)) {
	w.ends = endCache{from: -1}
	at := func(a, b, keep int) span {
		if d == nil {
			return span{a, b, keep}
		}
		a, b = d.span(a, b)
		return span{a, b, 0}
	}
	scan(s, func(m match) bool {
		sh := &shapes[m.shape]
		end := max(sh.secretEnd(s, m.a, m.b, &w.ends), m.a)
		if d == nil || d.escaped(m.a, end) {
			f(sh.name, false, at(m.a, end, sh.visible(s[m.a:m.b])))
		}
		return true
	})
	eachKnown(s, w.known, func(k Known, a, b int) {
		if d == nil || d.escaped(a, b) {
			f(k.Name, true, at(a, b, 0))
		}
	})
}

// eachKnown calls f with each occurrence s[a:b] of the value of each of known.
func eachKnown(s []byte, known []Known, f func(k Known, a, b int)) {
	for _, k := range known {
		for i := 0; ; {
			j := bytes.Index(s[i:], []byte(k.Value))
			if j < 0 {
				break
			}
			f(k, i+j, i+j+len(k.Value))
			i += j + len(k.Value)
		}
	}
}

// span is one secret in a string: s[a:b], of which s[a:a+keep] stays visible.
type span struct{ a, b, keep int }

// spans are the secrets in s and in its decodings, in order, overlapping ones
// merged.
func (w *walker) spans(s []byte) []span {
	var out []span
	add := func(_ string, _ bool, sp span) { out = append(out, sp) }
	w.secrets(s, nil, add)
	decodings(s, func(d *decoding) bool { w.secrets(d.b, d, add); return true })
	return merge(out)
}

// numberSpans are the Known values the number whose literal is s holds
// (numberKnown), in order, overlapping ones merged.
func numberSpans(s []byte, known []Known) []span {
	var out []span
	numberKnown(s, known, func(_ Known, a, b int) { out = append(out, span{a, b, 0}) })
	return merge(out)
}

// merge sorts spans by their start and merges the overlapping ones.
func merge(out []span) []span {
	slices.SortFunc(out, func(x, y span) int { return x.a - y.a })
	merged := out[:0]
	for _, sp := range out {
		if n := len(merged); n > 0 && sp.a < merged[n-1].b {
			merged[n-1].b = max(merged[n-1].b, sp.b)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// masked is s with each span replaced by its mask.
func masked(s []byte, spans []span) []byte {
	var out []byte
	last := 0
	for _, sp := range spans {
		keep := min(sp.keep, sp.b-sp.a)
		out = append(out, s[last:sp.a+keep]...)
		out = append(out, "…("...)
		out = strconv.AppendInt(out, int64(utf8.RuneCount(s[sp.a:sp.b])), 10)
		out = append(out, " chars)"...)
		last = sp.b
	}
	return append(out, s[last:]...)
}

// appendJSONString appends s as a JSON string, without HTML escapes.
func appendJSONString(dst, s []byte) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(string(s)) // a string always encodes
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// walker reads JSON arguments once, handing each decoded string (value or key name)
// to visit with its span in b; visit returns false to stop.
type walker struct {
	b     []byte
	known []Known
	visit func(s []byte, key bool, start, end int) bool
	// stack is the path to the value being read.
	stack []seg
	buf   []byte
	done  bool
	// ends is the end cache of the string being searched (secrets).
	ends endCache
	// objects counts the objects begun; inObject is the one whose key is visited.
	objects, inObject int
	// noPaths says path is not called: a key is not searched for a secret to hide
	// in paths.
	noPaths bool
	// numbers, when set, is called with each number's literal and its span in b;
	// false stops the walk.
	numbers func(lit []byte, start, end int) bool
}

// seg is one step of a path: a key (its span in b; hidden when it held a secret)
// or an index.
type seg struct {
	keyStart, keyEnd int
	index            int
	isKey, hidden    bool
}

// run walks the arguments and returns why they cannot be read to the end, or "".
func (w *walker) run() string {
	i, why := w.value(0, 0)
	if why != "" || w.done {
		return why
	}
	if jsonlex.Space(w.b, i) != len(w.b) {
		return "invalid JSON"
	}
	return ""
}

// value reads the value at b[i] at nesting depth and returns the offset past it.
func (w *walker) value(i, depth int) (int, string) {
	if depth > trust.MaxArgsDepth {
		return i, "nested deeper than " + strconv.Itoa(trust.MaxArgsDepth) + " levels"
	}
	b := w.b
	i = jsonlex.Space(b, i)
	if i >= len(b) {
		return i, "invalid JSON"
	}
	var e jsonlex.Err
	switch c := b[i]; {
	case c == '{':
		return w.object(i+1, depth)
	case c == '[':
		return w.array(i+1, depth)
	case c == '"':
		var end int
		w.buf, end, e = jsonlex.AppendString(w.buf[:0], b, i)
		if e == jsonlex.OK && !w.visit(w.buf, false, i, end) {
			w.done = true
		}
		i = end
	case c == 't':
		i, e = jsonlex.Literal(b, i, "true")
	case c == 'f':
		i, e = jsonlex.Literal(b, i, "false")
	case c == 'n':
		i, e = jsonlex.Literal(b, i, "null")
	default:
		start := i
		i, e = jsonlex.Number(b, i)
		if e == jsonlex.OK && w.numbers != nil && !w.numbers(b[start:i], start, i) {
			w.done = true
		}
	}
	if e != jsonlex.OK {
		return i, "invalid JSON"
	}
	return i, ""
}

// object reads the members of the object whose '{' is just before b[i].
func (w *walker) object(i, depth int) (int, string) {
	w.objects++
	id := w.objects
	return w.container(i, depth, '}', func(i, _ int) (int, seg, string) {
		b := w.b
		if i >= len(b) || b[i] != '"' {
			return i, seg{}, "invalid JSON"
		}
		start := i
		var e jsonlex.Err
		w.buf, i, e = jsonlex.AppendString(w.buf[:0], b, i)
		if e != jsonlex.OK {
			return i, seg{}, "invalid JSON"
		}
		hidden := !w.noPaths && len(w.find(w.buf)) > 0
		w.inObject = id
		if !w.visit(w.buf, true, start, i) {
			w.done = true
			return i, seg{}, ""
		}
		i = jsonlex.Space(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, seg{}, "invalid JSON"
		}
		return i + 1, seg{keyStart: start, keyEnd: i, isKey: true, hidden: hidden}, ""
	})
}

// array reads the elements of the array whose '[' is just before b[i].
func (w *walker) array(i, depth int) (int, string) {
	return w.container(i, depth, ']', func(i, n int) (int, seg, string) { return i, seg{index: n}, "" })
}

// container reads the members of an object or an array up to its closing byte:
// member reads what comes before the nth value (an object's key and ':') and
// returns where the value starts and the step of the path to it.
func (w *walker) container(i, depth int, closing byte, member func(i, n int) (int, seg, string)) (int, string) {
	b := w.b
	i = jsonlex.Space(b, i)
	if i < len(b) && b[i] == closing {
		return i + 1, ""
	}
	for n := 0; !w.done; n++ {
		var step seg
		var why string
		if i, step, why = member(i, n); why != "" || w.done {
			return i, why
		}
		w.stack = append(w.stack, step)
		i, why = w.value(i, depth+1)
		w.stack = w.stack[:len(w.stack)-1]
		if why != "" || w.done {
			return i, why
		}
		i = jsonlex.Space(b, i)
		switch {
		case i < len(b) && b[i] == ',':
			i = jsonlex.Space(b, i+1)
		case i < len(b) && b[i] == closing:
			return i + 1, ""
		default:
			return i, "invalid JSON"
		}
	}
	return i, ""
}

// maxKeyShown bounds a key name shown in a path, in bytes.
const maxKeyShown = 32

// path names the value being read: body, headers.Authorization, items[2],
// ["a key"].
func (w *walker) path() string {
	var sb strings.Builder
	for _, s := range w.stack {
		if !s.isKey {
			sb.WriteString("[" + strconv.Itoa(s.index) + "]")
			continue
		}
		if s.hidden {
			sb.WriteString("[…]")
			continue
		}
		// The key's span ends at the ':' after it; decode up to its closing quote.
		k, _, _ := jsonlex.AppendString(nil, w.b[:s.keyEnd], s.keyStart)
		if plainKey(k) {
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.Write(k)
			continue
		}
		cut := ""
		if len(k) > maxKeyShown {
			n := maxKeyShown
			for n > 0 && !utf8.RuneStart(k[n]) {
				n--
			}
			k, cut = k[:n], "…"
		}
		sb.WriteString("[" + strconv.QuoteToASCII(string(k)) + cut + "]")
	}
	return sb.String()
}

// plainKey reports whether a key can stand in a path as it is: 1 to 64 letters,
// digits, '_' and '-'.
func plainKey(k []byte) bool {
	if len(k) == 0 || len(k) > 64 {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
