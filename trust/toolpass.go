package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/airlock-mcp/airlock/internal/jsonlex"
)

// ToolFields is what one lenient pass over a raw tool object yields: the fields the
// session keeps of it (a field of the wrong type is left empty), and Text, which is
// ToolText of the same bytes.
type ToolFields struct {
	Name        string
	Title       string // "title", else annotations.title when that is a string
	Description string
	// InputSchema, OutputSchema and Annotations are the members' bytes as sent
	// (without surrounding whitespace; nil when absent, and Annotations also when
	// null). They share raw's memory and cannot grow into it.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Annotations  json.RawMessage
	// TaskSupport is execution.taskSupport ("" when absent or not a string).
	TaskSupport string
	Text        string
	// Declared is ParseDeclared(Annotations).
	Declared Declared
}

// ReadTool reads a raw tool object once and returns its fields and its text; ok is
// false when raw is not one JSON object (malformed, another kind of value, null,
// or followed by anything but whitespace). Text is ToolText(raw) either way.
//
// The meaning is exactly that of the encoding/json decodes airlock used before
// (kept in toolpass_oracle_test.go and compared in the tests): the tool's members are
// found by their exact decoded key and the last of equal keys wins, as in a decode
// into a map; execution.taskSupport and the annotations.title fallback are found as
// json.Unmarshal finds struct fields, by case-folded key, the last match winning
// (a null or non-string title leaves the one before, a taskSupport whose value holds
// a number out of float64 range counts as absent); strings decode as encoding/json
// decodes them (invalid UTF-8 and lone surrogates become U+FFFD); nesting past
// 10,000 levels is an error, as it is there.
func ReadTool(raw json.RawMessage) (f ToolFields, ok bool) {
	p := toolPassPool.Get().(*toolPass)
	defer p.release()
	return p.run(raw)
}

// ToolText returns every text field of a raw tool definition that reaches a model
// when tools are listed, one per line: title, description, annotations.title, and
// every string anywhere in inputSchema and outputSchema (titles, descriptions, enum
// and const values, defaults, examples, comments) except the values of keywords that
// only hold identifiers (type, format, $schema, $ref, $id, pattern, required …).
// Property names are left out: they are read as argument names. The fields come in
// a fixed order (object keys sorted). A definition that is not a JSON object yields "".
// Only the first JSON value of raw is read (as a json.Decoder reads it): bytes after
// it are ignored.
func ToolText(raw json.RawMessage) string {
	f, _ := ReadTool(raw)
	return f.Text
}

// identifierKeywords are schema keywords whose string values are identifiers, not
// prose for a model.
var identifierKeywords = map[string]bool{
	"type": true, "format": true, "$schema": true, "$ref": true, "$id": true,
	"$anchor": true, "$dynamicRef": true, "$dynamicAnchor": true, "pattern": true,
	"required": true, "contentEncoding": true, "contentMediaType": true,
}

// maxTextDepth bounds the text walk of a schema: strings nested deeper than this
// are left out (a listing deeper than this is blocked anyway).
const maxTextDepth = 1000

// maxJSONDepth is encoding/json's bound on nesting; deeper input is an error there.
const maxJSONDepth = 10000

// The pass reads the bytes once, front to back, with the grammar of encoding/json's
// scanner. It notes the span of each tool member it keeps (a later equal key
// replaces it) and writes the text of a schema as it goes: strings are decoded
// straight into p.text, in the order received, each object member's span noted with
// its decoded key. When an object closes with text, and only if its keys are out of
// order or repeated, its members are sorted (the last of equal keys kept) into a
// reorder record; the bytes are not moved. The text is written out once at the end,
// following the records (emitRange), so that an object nested a thousand levels deep
// under out-of-order keys costs no more than a flat one.
type toolPass struct {
	src     []byte
	i       int
	text    []byte     // schema text
	keys    []byte     // decoded keys of the objects being read, a stack
	members []textSpan // members of the objects being read, a stack
	scratch []byte
	order   []textSpan   // the members of the reordered objects, sorted
	recs    []reorderRec // the reordered objects, in the order they closed
	numErr  bool         // a number read in numbers mode is out of float64 range
}

type textSpan struct{ k0, k1, t0, t1 int }

// reorderRec is an object whose text p.text[t0:t1] is written out as its members
// order[m0:m1]; seq is the order of closing (a parent closes after its children).
type reorderRec struct{ t0, t1, m0, m1, seq int }

var toolPassPool = sync.Pool{New: func() any { return new(toolPass) }}

func (p *toolPass) release() {
	p.src = nil
	if cap(p.text) > 1<<20 || cap(p.keys) > 1<<16 || cap(p.members) > 1<<12 || cap(p.scratch) > 1<<20 || cap(p.order) > 1<<12 || cap(p.recs) > 1<<12 {
		return
	}
	toolPassPool.Put(p)
}

// value modes
const (
	modeCollect = 1 << iota // write schema text
	modeIdent               // the value's keyword holds identifiers: its strings are not text
	modeNumbers             // parse every number as encoding/json does into an interface
)

type span struct{ a, b int }

func (p *toolPass) run(raw []byte) (f ToolFields, ok bool) {
	p.src, p.i = raw, 0
	p.text, p.keys, p.members = p.text[:0], p.keys[:0], p.members[:0]
	p.order, p.recs = p.order[:0], p.recs[:0]
	p.space()
	if p.i >= len(p.src) || p.src[p.i] != '{' {
		return ToolFields{}, false
	}
	var (
		name, title, desc, in, out, ann, exec span // member value spans, b == 0 when absent
		inText, outText                       span
		annExact, annFold                     span    // annotations.title: exact (a string), folded (the last string)
		hints                                 [4]span // annotations' readOnlyHint, destructiveHint, idempotentHint, openWorldHint
		ts                                    span    // the last folded taskSupport value
		execObj, tsErr                        bool
	)
	err := p.eachMember(func(key []byte) error {
		a := p.i
		var err error
		switch string(key) {
		case "inputSchema", "outputSchema":
			t0 := len(p.text)
			err = p.value(1, modeCollect, 0)
			if key[0] == 'i' {
				in, inText = span{a, p.i}, span{t0, len(p.text)}
			} else {
				out, outText = span{a, p.i}, span{t0, len(p.text)}
			}
		case "annotations":
			annExact, annFold, hints = span{}, span{}, [4]span{}
			err = p.members1(func(key []byte) error {
				v := p.i
				if err := p.value(2, 0, 0); err != nil {
					return err
				}
				isStr := p.src[v] == '"'
				switch string(key) {
				case "readOnlyHint":
					hints[0] = span{v, p.i}
				case "destructiveHint":
					hints[1] = span{v, p.i}
				case "idempotentHint":
					hints[2] = span{v, p.i}
				case "openWorldHint":
					hints[3] = span{v, p.i}
				}
				if string(key) == "title" {
					annExact = span{}
					if isStr {
						annExact = span{v, p.i}
					}
				}
				if isStr && foldedIs(key, "TITLE") {
					annFold = span{v, p.i}
				}
				return nil
			})
			ann = span{a, p.i}
		case "execution":
			ts, p.numErr = span{}, false
			err = p.members1(func(key []byte) error {
				v := p.i
				if !foldedIs(key, "TASKSUPPORT") {
					return p.value(2, 0, 0)
				}
				if err := p.value(2, modeNumbers, 0); err != nil {
					return err
				}
				ts = span{v, p.i}
				return nil
			})
			if err == nil {
				tsErr = p.numErr
				execObj = p.src[a] == '{'
				exec = span{a, p.i}
			}
		default:
			err = p.value(1, 0, 0)
			switch string(key) {
			case "name":
				name = span{a, p.i}
			case "title":
				title = span{a, p.i}
			case "description":
				desc = span{a, p.i}
			}
		}
		return err
	})
	if err != nil {
		return ToolFields{}, false
	}
	// The text, as ToolText built it from the first value.
	tb := p.scratch[:0]
	addText := func(s span) (at [2]int) {
		if s.b > s.a+2 && p.src[s.a] == '"' {
			at[0] = len(tb)
			tb = p.appendDecoded(tb, s)
			at[1] = len(tb)
			tb = append(tb, '\n')
		}
		return at
	}
	titleAt := addText(title)
	descAt := addText(desc)
	if ann.b > 0 && p.src[ann.a] == '{' {
		addText(annExact)
	}
	if len(p.recs) > 0 {
		// Parents before their children, each before the ones that start after it.
		slices.SortFunc(p.recs, func(x, y reorderRec) int {
			if x.t0 != y.t0 {
				return x.t0 - y.t0
			}
			if x.t1 != y.t1 {
				return y.t1 - x.t1
			}
			return y.seq - x.seq
		})
	}
	tb = p.emitRange(tb, inText.a, inText.b, 0, len(p.recs))
	tb = p.emitRange(tb, outText.a, outText.b, 0, len(p.recs))
	f.Text = string(tb)
	p.scratch = tb

	p.space()
	if p.i != len(p.src) {
		return ToolFields{Text: f.Text}, false
	}
	f.Name = p.stringAt(name)
	// The title and description are in the text already, decoded the same way:
	// they are cut from it rather than copied again (10,000 descriptions were a
	// megabyte and a half of copies).
	f.Title, f.Description = p.textOr(f.Text, titleAt, title), p.textOr(f.Text, descAt, desc)
	f.InputSchema = p.rawAt(in)
	f.OutputSchema = p.rawAt(out)
	if ann.b > 0 && string(p.src[ann.a:ann.b]) != "null" {
		f.Annotations = p.rawAt(ann)
	}
	if f.Annotations != nil {
		f.Declared.Raw = bytes.Clone(f.Annotations)
		if p.src[ann.a] == '{' {
			if f.Title == "" {
				f.Title = p.stringAt(annFold)
			}
			f.Declared.Title = p.stringAt(annExact)
			var vals [4]bool
			var set [4]*bool
			for j, h := range hints {
				switch string(p.src[h.a:h.b]) {
				case "true":
					vals[j] = true
					set[j] = &vals[j]
				case "false":
					set[j] = &vals[j]
				}
			}
			f.Declared.Hints = Hints{ReadOnly: set[0], Destructive: set[1], Idempotent: set[2], OpenWorld: set[3]}
		}
	}
	if exec.b > 0 && execObj && !tsErr {
		f.TaskSupport = p.stringAt(ts)
	}
	return f, true
}

// textOr returns text[at[0]:at[1]], where the string value at s was decoded into
// the text, else (absent, empty or not a string) stringAt(s).
func (p *toolPass) textOr(text string, at [2]int, s span) string {
	if at[1] > at[0] {
		return text[at[0]:at[1]]
	}
	return p.stringAt(s)
}

// rawAt returns the bytes of s, nil when absent; capacity is cut so that an append
// cannot write into the source.
func (p *toolPass) rawAt(s span) json.RawMessage {
	if s.b == 0 {
		return nil
	}
	return json.RawMessage(p.src[s.a:s.b:s.b])
}

// stringAt returns the string value at s, "" when absent or not a string.
func (p *toolPass) stringAt(s span) string {
	if s.b == 0 || p.src[s.a] != '"' {
		return ""
	}
	body := p.src[s.a+1 : s.b-1]
	for _, c := range body {
		if !jsonlex.Plain(c) {
			return string(p.appendDecoded(nil, s))
		}
	}
	return string(body)
}

// appendDecoded appends the decoded string at s (already read once, so valid).
func (p *toolPass) appendDecoded(dst []byte, s span) []byte {
	dst, _, _ = jsonlex.AppendString(dst, p.src, s.a)
	return dst
}

// members1 reads the value at p.i (an object member's value at depth 1); when it is
// an object, each of its members' decoded key is passed to member, which reads the
// value. Any other value is read and left.
func (p *toolPass) members1(member func(key []byte) error) error {
	if p.i >= len(p.src) || p.src[p.i] != '{' {
		return p.value(1, 0, 0)
	}
	return p.eachMember(member)
}

// eachMember reads the object at p.i, passing each member's decoded key to member,
// which reads the value (whitespace before it skipped).
func (p *toolPass) eachMember(member func(key []byte) error) error {
	p.i++
	for first := true; ; first = false {
		p.space()
		if p.i >= len(p.src) {
			return errToolEOF
		}
		if p.src[p.i] == '}' && first {
			p.i++
			return nil
		}
		k0 := len(p.keys)
		if err := p.key(); err != nil {
			return err
		}
		err := member(p.keys[k0:])
		p.keys = p.keys[:k0]
		if err != nil {
			return err
		}
		if done, err := p.afterItem('}'); done || err != nil {
			return err
		}
	}
}

var (
	errToolEOF    = errors.New("unexpected end of JSON input")
	errToolSyntax = errors.New("invalid JSON")
	errToolDepth  = errors.New("exceeded max depth")
)

func (p *toolPass) space() { p.i = jsonlex.Space(p.src, p.i) }

// key reads a member's key and its colon, appending the decoded key to p.keys.
func (p *toolPass) key() error {
	if p.i >= len(p.src) || p.src[p.i] != '"' {
		return errToolSyntax
	}
	var err error
	if p.keys, err = p.str(p.keys, true); err != nil {
		return err
	}
	p.space()
	if p.i >= len(p.src) || p.src[p.i] != ':' {
		return errToolSyntax
	}
	p.i++
	p.space()
	return nil
}

// value reads one value at p.i (whitespace skipped); depth is the number of arrays
// and objects open around it, tdepth its depth in the schema's text walk.
func (p *toolPass) value(depth int, mode int, tdepth int) error {
	if tdepth > maxTextDepth {
		mode &^= modeCollect
	}
	if p.i >= len(p.src) {
		return errToolEOF
	}
	switch c := p.src[p.i]; {
	case c == '"':
		if mode&modeCollect == 0 || mode&modeIdent != 0 {
			_, err := p.str(nil, false)
			return err
		}
		t0 := len(p.text)
		var err error
		if p.text, err = p.str(p.text, true); err != nil {
			return err
		}
		if len(p.text) > t0 {
			p.text = append(p.text, '\n')
		}
		return nil
	case c == '{':
		if depth+1 > maxJSONDepth {
			return errToolDepth
		}
		return p.object(depth+1, mode, tdepth)
	case c == '[':
		if depth+1 > maxJSONDepth {
			return errToolDepth
		}
		p.i++
		for first := true; ; first = false {
			if closed, err := p.beforeItem(']', first); closed || err != nil {
				return err
			}
			if err := p.value(depth+1, mode, tdepth+1); err != nil {
				return err
			}
			if done, err := p.afterItem(']'); done || err != nil {
				return err
			}
		}
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		a := p.i
		if err := p.number(); err != nil {
			return err
		}
		if mode&modeNumbers != 0 {
			if _, err := strconv.ParseFloat(string(p.src[a:p.i]), 64); err != nil {
				p.numErr = true
			}
		}
		return nil
	}
	return errToolSyntax
}

// object reads the object at p.i, nested depth deep. In collect mode its members'
// text is written in key order, the last of equal keys kept.
func (p *toolPass) object(depth int, mode int, tdepth int) error {
	p.i++
	collect := mode&modeCollect != 0 && tdepth+1 <= maxTextDepth
	t0, m0 := len(p.text), len(p.members)
	sorted := true
	for first := true; ; first = false {
		if closed, err := p.beforeItem('}', first); closed || err != nil {
			return err
		}
		if p.src[p.i] != '"' {
			return errToolSyntax
		}
		if !collect {
			if _, err := p.str(nil, false); err != nil {
				return err
			}
		} else {
			k0 := len(p.keys)
			var err error
			if p.keys, err = p.str(p.keys, true); err != nil {
				return err
			}
			if n := len(p.members); n > m0 && sorted {
				prev := p.members[n-1]
				sorted = bytes.Compare(p.keys[prev.k0:prev.k1], p.keys[k0:]) < 0
			}
			p.members = append(p.members, textSpan{k0: k0, k1: len(p.keys), t0: len(p.text)})
		}
		p.space()
		if p.i >= len(p.src) {
			return errToolEOF
		}
		if p.src[p.i] != ':' {
			return errToolSyntax
		}
		p.i++
		p.space()
		vmode := mode &^ modeIdent
		if collect {
			m := &p.members[len(p.members)-1]
			if identifierKeywords[string(p.keys[m.k0:m.k1])] {
				vmode |= modeIdent
			}
		}
		if err := p.value(depth, vmode, tdepth+1); err != nil {
			return err
		}
		if collect {
			p.members[len(p.members)-1].t1 = len(p.text)
		}
		p.space()
		if p.i >= len(p.src) {
			return errToolEOF
		}
		switch p.src[p.i] {
		case '}':
			p.i++
			if collect {
				if !sorted && len(p.text) > t0 {
					p.reorder(p.members[m0:], t0)
				}
				p.keys = p.keys[:p.members[m0].k0]
				p.members = p.members[:m0]
			}
			return nil
		case ',':
			p.i++
		default:
			return errToolSyntax
		}
	}
}

// reorder notes that the object whose members ms wrote p.text[start:] in the order
// received is written out in the order of their keys, the last of equal keys kept.
func (p *toolPass) reorder(ms []textSpan, start int) {
	slices.SortStableFunc(ms, func(a, b textSpan) int {
		return bytes.Compare(p.keys[a.k0:a.k1], p.keys[b.k0:b.k1])
	})
	m0 := len(p.order)
	for j, m := range ms {
		if j+1 < len(ms) && bytes.Equal(p.keys[m.k0:m.k1], p.keys[ms[j+1].k0:ms[j+1].k1]) {
			continue // a later equal key replaces this one
		}
		p.order = append(p.order, m)
	}
	p.recs = append(p.recs, reorderRec{t0: start, t1: len(p.text), m0: m0, m1: len(p.order), seq: len(p.recs)})
}

// emitRange appends p.text[a:b] to dst with each reordered object in it written in
// its members' order; the records of the objects inside [a, b) are among
// p.recs[lo:hi], which are sorted.
func (p *toolPass) emitRange(dst []byte, a, b, lo, hi int) []byte {
	recs := p.recs
	i := lo + sort.Search(hi-lo, func(k int) bool { return recs[lo+k].t0 >= a })
	for a < b {
		if i >= hi || recs[i].t0 >= b {
			return append(dst, p.text[a:b]...)
		}
		r := recs[i]
		dst = append(dst, p.text[a:r.t0]...)
		// The records after r that start inside it are its descendants.
		j := i + 1 + sort.Search(hi-i-1, func(k int) bool { return recs[i+1+k].t0 >= r.t1 })
		for _, m := range p.order[r.m0:r.m1] {
			dst = p.emitRange(dst, m.t0, m.t1, i+1, j)
		}
		a, i = r.t1, j
	}
	return dst
}

func (p *toolPass) literal(lit string) error {
	end, e := jsonlex.Literal(p.src, p.i, lit)
	p.i = end
	return toolErr(e)
}

// number reads a number literal.
func (p *toolPass) number() error {
	end, e := jsonlex.Number(p.src, p.i)
	p.i = end
	return toolErr(e)
}

// toolErr is the pass's error for the lexer's e.
func toolErr(e jsonlex.Err) error {
	switch e {
	case jsonlex.OK:
		return nil
	case jsonlex.EOF:
		return errToolEOF
	}
	return errToolSyntax
}

// str reads the string at p.i; when decode is set it appends the decoded string to
// dst as encoding/json decodes it (the lexer's reading).
func (p *toolPass) str(dst []byte, decode bool) ([]byte, error) {
	var e jsonlex.Err
	if decode {
		dst, p.i, e = jsonlex.AppendString(dst, p.src, p.i)
	} else {
		p.i, e = jsonlex.SkipString(p.src, p.i)
	}
	return dst, toolErr(e)
}

// foldedIs reports whether key matches the field name folded (upper ASCII, as
// encoding/json folds it) the way json.Unmarshal matches a struct field: ASCII
// letters by case, other characters by their smallest simple fold (so the long s
// and the Kelvin sign match s and k).
func foldedIs(key []byte, folded string) bool {
	var arr [32]byte
	return string(appendFoldedName(arr[:0], key)) == folded
}

// appendFoldedName is encoding/json's (fold.go).
func appendFoldedName(out, in []byte) []byte {
	for i := 0; i < len(in); {
		if c := in[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(in[i:])
		out = utf8.AppendRune(out, foldRune(r))
		i += n
	}
	return out
}

func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// beforeItem reads up to a container's next item: close ends the container when
// no item was read yet (first: an empty one), and is an error after a comma.
func (p *toolPass) beforeItem(close byte, first bool) (closed bool, err error) {
	p.space()
	if p.i >= len(p.src) {
		return false, errToolEOF
	}
	if p.src[p.i] != close {
		return false, nil
	}
	if !first {
		return false, errToolSyntax
	}
	p.i++
	return true, nil
}

// afterItem reads what follows an object's member or an array's element: close
// ends the container (done), a comma says another item follows.
func (p *toolPass) afterItem(close byte) (done bool, err error) {
	p.space()
	if p.i >= len(p.src) {
		return false, errToolEOF
	}
	switch p.src[p.i] {
	case close:
		p.i++
		return true, nil
	case ',':
		p.i++
		return false, nil
	}
	return false, errToolSyntax
}
