package argcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/airlock-mcp/airlock/trust"
)

// ErrNoStructuredContent is wrapped by CheckResult's error for a result that has no
// structured content at all, under a tool that declares an output schema.
var ErrNoStructuredContent = errors.New("the tool declares an output schema but returned no structured content")

// Bounds on the words of a result's mismatch: the path named, and the whole
// sentence after it.
const (
	maxResultPath  = 120
	maxResultWords = 300
)

// LoadOutput reads raw as a tool's output schema, with Load's bounds and its
// refusal of outside and looping $refs. Unlike an input schema it may describe any
// JSON value, not only an object (a structured result may be an array or a
// primitive). An absent or null schema, or `true`, checks nothing.
func LoadOutput(raw json.RawMessage) Schema {
	trimmed, root, done := read(raw, Schema{Problem: errors.New("the schema is neither an object nor true")})
	if done != nil {
		return *done
	}
	if err := oneReading(trimmed); err != nil {
		return Schema{Problem: err}
	}
	if err := uncheckable(root, "results"); err != nil {
		return Schema{Problem: err}
	}
	s := Schema{Root: root, Object: isObjectSchema(root)}
	s.Full, s.NoRequired, s.Problem = compile(root, &s.Notes)
	return s
}

// oneReading says why a schema's bytes are not read alike by every JSON reader: a
// key twice in one object (encoding/json keeps the last, others the first or refuse
// it), or a lone surrogate escape (encoding/json reads U+FFFD, JavaScript keeps it).
// The agent is given the bytes as the server listed them, so a schema checked as
// encoding/json reads it might not be the one the agent reads. Invalid UTF-8 is left
// to encoding/json's reading, as the listing's pass reads it.
func oneReading(schema []byte) error {
	if !utf8.Valid(schema) {
		return nil
	}
	var ae *trust.ArgsError
	if _, err := trust.CanonicalArgs(schema, 0); errors.As(err, &ae) {
		return fmt.Errorf("the schema is not read alike by every JSON reader: %s", ae.Msg)
	}
	return nil
}

// uncheckable says why a schema (decoded with its numbers as written) holds a
// constraint that checking would get wrong, so that a result breaking it would pass
// as valid. jsonschema-go passes over draft 2019-09's $recursiveRef (and
// $recursiveAnchor), and items as a list (the tuple of drafts before 2020-12, with
// its additionalItems) anywhere but under draft-07, the one earlier draft it reads.
// And it compares results, which go-sdk decoded as float64s and an agent is given as
// such, with the schema's numbers as float64s: a number a float64 does not hold
// exactly (9007199254740995, which rounds up) would let a result past it. A value
// that only looks like one of these (in a const) is refused too, which fails closed.
// Arguments are compared the same way (Load). what is what is checked against the schema, "results" or "arguments", for the
// sentence.
func uncheckable(root map[string]any, what string) error {
	draft07 := false
	if v, ok := root["$schema"].(string); ok {
		switch strings.TrimSuffix(v, "#") {
		case "http://json-schema.org/draft-07/schema", "https://json-schema.org/draft-07/schema":
			draft07 = true
		}
	}
	// A finding's pointer is put together only when there is one, from its tokens
	// gathered on the way back up (a 1 MiB enum is not a million pointers).
	type finding struct {
		words string // "%q" in it stands for the pointer
		toks  []string
	}
	var walk func(v any) *finding
	walk = func(v any) *finding {
		switch v := v.(type) {
		case json.Number:
			if !exactFloat(v) {
				return &finding{words: "the schema's number " + cut(v.String(), 40) + " at %q cannot be compared exactly: " + what + " are checked as 64-bit floats"}
			}
		case map[string]any:
			_, ref := v["$recursiveRef"]
			_, anchor := v["$recursiveAnchor"]
			if ref || anchor {
				return &finding{words: "the schema uses $recursiveRef or $recursiveAnchor (draft 2019-09), which airlock does not validate"}
			}
			if _, list := v["items"].([]any); list && !draft07 {
				return &finding{words: "the schema's items at %q is a list (a tuple of drafts before 2020-12), which airlock checks only under draft-07"}
			}
			for _, k := range slices.Sorted(maps.Keys(v)) { // the first in one order
				if f := walk(v[k]); f != nil {
					f.toks = append(f.toks, escapePointer(k))
					return f
				}
			}
		case []any:
			for i, c := range v {
				if f := walk(c); f != nil {
					f.toks = append(f.toks, strconv.Itoa(i))
					return f
				}
			}
		}
		return nil
	}
	f := walk(root)
	if f == nil {
		return nil
	}
	slices.Reverse(f.toks)
	ptr := ""
	if len(f.toks) > 0 {
		ptr = "/" + strings.Join(f.toks, "/")
	}
	return errors.New(strings.Replace(f.words, "%q", strconv.Quote(cut(ptr, 80)), 1))
}

// CheckResult validates a result's structured content (as go-sdk decoded it: nil
// when the result has none) against an output schema loaded by LoadOutput. The error
// names where in the structured content the mismatch is, as a path from its top
// ("price", "items[*].price"; "structuredContent" for the top itself) and what was
// expected there, in at most a few hundred bytes. Nothing in it is escaped: it holds
// the server's names, and whoever shows it escapes them.
func (s Schema) CheckResult(structured any) error {
	if s.Absent {
		return nil
	}
	if s.Problem != nil {
		return boundedError{text: cut("the output schema cannot be checked: "+s.Problem.Error(), maxResultWords), err: s.Problem}
	}
	if structured == nil {
		return ErrNoStructuredContent
	}
	// Validated as plain JSON values, whatever Go values the content arrived in.
	b, err := json.Marshal(structured)
	if err != nil {
		return fmt.Errorf("the structured content cannot be read: %w", err)
	}
	var inst any
	if err := json.Unmarshal(b, &inst); err != nil {
		return fmt.Errorf("the structured content cannot be read: %w", err)
	}
	if inst == nil {
		return ErrNoStructuredContent
	}
	if err := s.Full.Validate(inst); err != nil {
		return errors.New(resultMismatch(err))
	}
	return nil
}

// typeWords reads jsonschema-go's type mismatch: `type: VALUE has type "GOT", want
// "WANT"` (or `want one of "A, B"`); the value is not repeated.
// Both are compiled on first use: every airlock process, and every demo-server
// child, would pay for them at start otherwise.
var typeWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^type: .* has type "(\w+)", want (?:one of )?"([\w, ]+)"$`)
})

// requiredWords reads jsonschema-go's `required: missing properties: ["a" "b"]`.
var requiredWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^required: missing properties: \[(.*)\]$`)
})

// resultMismatch turns a jsonschema-go validation error into "PATH: WHAT WAS
// EXPECTED". jsonschema-go names each schema it descended through by its JSON
// pointer ("validating root: validating /properties/price: type: ..."); the path
// in the content is read off those pointers (see contentPath).
func resultMismatch(err error) string {
	s := err.Error()
	var ptrs []string
	for strings.HasPrefix(s, "validating ") {
		i := strings.Index(s, ": ")
		if i < 0 {
			break
		}
		ptrs = append(ptrs, s[len("validating "):i])
		s = s[i+2:]
	}
	path := contentPath(ptrs)
	what := strings.Join(strings.Fields(s), " ")
	if m := typeWords().FindStringSubmatch(what); m != nil {
		what = "expected " + strings.ReplaceAll(m[2], ", ", " or ") + ", got " + m[1]
	} else if m := requiredWords().FindStringSubmatch(what); m != nil {
		names := quotedList(m[1])
		if len(names) > 0 {
			path = join(path, names[0])
			what = "required, but missing"
			if len(names) > 1 {
				what += fmt.Sprintf(" (and %d more required properties)", len(names)-1)
			}
		}
	}
	if path == "" {
		path = "structuredContent"
	}
	return cut(cut(path, maxResultPath)+": "+what, maxResultWords)
}

// contentPath reads the path in the content from the schema pointers an error
// descended through. A pointer that extends the one before it descended into the
// content by the tokens it adds ("properties/NAME" is NAME, "items" an item of a
// list, "prefixItems/N" item N, "additionalProperties" and "patternProperties/P"
// another property); a pointer that does not (a $ref's target) moved within the
// schema only. Applicators that stay on the same value (allOf, anyOf, $defs...) add
// nothing.
func contentPath(ptrs []string) string {
	path, prev := "", ""
	for _, p := range ptrs {
		if p == "root" {
			prev = ""
			continue
		}
		rest, ok := strings.CutPrefix(p, prev)
		prev = p
		if !ok || !strings.HasPrefix(rest, "/") {
			continue
		}
		toks := strings.Split(rest[1:], "/")
		for i := 0; i < len(toks); i++ {
			next := func() string {
				if i+1 < len(toks) {
					i++
					return strings.ReplaceAll(strings.ReplaceAll(toks[i], "~1", "/"), "~0", "~")
				}
				return ""
			}
			switch toks[i] {
			case "properties":
				path = join(path, next())
			case "prefixItems":
				path += "[" + next() + "]"
			case "items", "additionalItems", "unevaluatedItems", "contains":
				path += "[*]"
			case "additionalProperties", "unevaluatedProperties":
				path = join(path, "*")
			case "patternProperties":
				next()
				path = join(path, "*")
			case "$defs", "definitions", "allOf", "anyOf", "oneOf", "dependentSchemas", "dependencies":
				next()
			}
		}
	}
	return path
}

// exactFloat reports whether the number n, as written, is the value of a float64:
// one whose shortest decimal is n's value. A long number that is not already that
// decimal is taken as inexact, so that a hostile schema's numbers cost little each.
func exactFloat(n json.Number) bool {
	s := n.String()
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil:
		return false
	case strconv.FormatFloat(f, 'g', -1, 64) == s:
		return true
	case f == 0: // 0.0, -0, 0e5: exact; 1e-400, rounded down to 0: not
		mantissa, _, _ := strings.Cut(strings.ToLower(s), "e")
		return strings.Trim(mantissa, "-0.") == ""
	case len(s) > 64:
		return false
	}
	written, ok := new(big.Rat).SetString(s)
	held, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return ok && written.Cmp(held) == 0
}

// join adds a property name to a path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// quotedList reads the Go-quoted strings of a list printed with %q.
func quotedList(s string) []string {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			break
		}
		v, _ := strconv.Unquote(q)
		out = append(out, v)
		s = s[len(q):]
	}
	return out
}

// boundedError is an error whose words were cut (a schema's problem can quote a
// name or a $ref of the server's at any length), still wrapping what it was.
type boundedError struct {
	text string
	err  error
}

func (e boundedError) Error() string { return e.text }
func (e boundedError) Unwrap() error { return e.err }

// cut keeps at most n bytes of s, on a rune boundary, marking a cut with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
