// Package argcheck validates a tool call's arguments against the tool's input
// schema: one validator for every call, the person's form, `airlock call` and every
// agent call through the Manager; and a result's structured content against the
// tool's output schema, for every result through the Manager (output.go). It bounds
// the schema and the arguments, never fetches a schema from outside (network or
// disk), and refuses schemas that jsonschema-go would recurse on without end. It
// does no I/O.
package argcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Bounds on what is accepted from a server or a person.
const (
	// MaxSchemaBytes is the largest input schema validated with.
	MaxSchemaBytes = 1 << 20
	// MaxSchemaDepth is the deepest nesting of objects and arrays in a schema.
	MaxSchemaDepth = 64
	// MaxArgsDepth is the deepest nesting of objects and arrays in arguments.
	MaxArgsDepth = 128
	// maxRefHops bounds following local $refs to find a property's type.
	maxRefHops = 16
)

// ErrExternalRef is wrapped by the error of a schema with a $ref outside the
// schema itself: airlock never fetches schemas, from the network or disk.
var ErrExternalRef = errors.New("airlock does not fetch schemas")

// Schema is a requested or input schema, read and compiled for validation (Load).
type Schema struct {
	// Absent: no schema at all (missing or null): anything goes.
	Absent bool
	// Object: the schema describes a JSON object, so fields can be built.
	Object bool
	Root   map[string]any
	// Order is the property names in the order the schema lists them.
	Order    []string
	Props    map[string]any
	Required map[string]bool
	// Full validates; NoRequired is Full without the root's "required", to
	// find the errors of the fields that are filled in.
	Full, NoRequired *jsonschema.Resolved
	// Problem says why the schema cannot validate; submitting is blocked.
	Problem error
	// Notes are things the person should know that do not block.
	Notes []string
}

// Load reads raw as a schema, bounds it, and compiles it for validation without
// loading anything from outside it.
func Load(raw json.RawMessage) Schema {
	trimmed, root, done := read(raw, Schema{Notes: []string{"the schema is not an object schema, so arguments are not checked against it"}})
	if done != nil {
		return *done
	}
	s := Schema{Root: root, Object: isObjectSchema(root)}
	if !s.Object {
		s.Notes = append(s.Notes, "the schema does not describe an object, so arguments are not checked against it")
		return s
	}
	// What an output schema is refused for (LoadOutput): a schema read two ways,
	// or holding what the validator passes over, is not checked as one reading.
	if err := oneReading(trimmed); err != nil {
		s.Problem = err
		return s
	}
	if err := uncheckable(root, "arguments"); err != nil {
		s.Problem = err
		return s
	}
	s.Props, _ = root["properties"].(map[string]any)
	s.Order = PropertyOrder(trimmed, s.Props)
	s.Required = map[string]bool{}
	if req, ok := root["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required[name] = true
			}
		}
	}
	s.Full, s.NoRequired, s.Problem = compile(root, &s.Notes)
	return s
}

// read is what Load and LoadOutput share: raw trimmed, bounded and decoded (numbers
// as written) to the schema object root; or, in done, the Schema that is already the
// whole answer: absent (missing, null or true), a problem, or notObject for JSON that
// is no object.
func read(raw json.RawMessage, notObject Schema) (trimmed []byte, root map[string]any, done *Schema) {
	trimmed = bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil, nil, &Schema{Absent: true}
	}
	if len(trimmed) > MaxSchemaBytes {
		return nil, nil, &Schema{Problem: fmt.Errorf("the schema is %d bytes, more than the %d airlock checks", len(trimmed), MaxSchemaBytes)}
	}
	if err := CheckDepth(trimmed, MaxSchemaDepth); err != nil {
		return nil, nil, &Schema{Problem: fmt.Errorf("the schema %w", err)}
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, nil, &Schema{Problem: fmt.Errorf("the schema is not valid JSON: %w", err)}
	}
	root, ok := v.(map[string]any)
	switch {
	case ok:
		return trimmed, root, nil
	case v == true:
		return nil, nil, &Schema{Absent: true}
	}
	return nil, nil, &notObject
}

// isObjectSchema reports whether a schema object describes JSON objects: its
// type is "object" (or a list holding it), or it has no type at all.
func isObjectSchema(m map[string]any) bool {
	switch t := m["type"].(type) {
	case nil:
		return true
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

// compile checks a schema for what jsonschema-go cannot survive and resolves
// it twice: as is, and without the root's "required".
func compile(root map[string]any, notes *[]string) (full, noRequired *jsonschema.Resolved, err error) {
	if err := checkRefs(root); err != nil {
		return nil, nil, err
	}
	m := shallowCopy(root)
	if v, ok := m["$schema"].(string); ok && !supportedDraft(v) {
		delete(m, "$schema")
		*notes = append(*notes, "the schema names a draft airlock does not know; it is checked as draft 2020-12")
	}
	full, err = resolve(m)
	if err != nil {
		return nil, nil, err
	}
	delete(m, "required")
	noRequired, err = resolve(m)
	return full, noRequired, err
}

func supportedDraft(s string) bool {
	switch strings.TrimSuffix(s, "#") {
	case "", "http://json-schema.org/draft-07/schema", "https://json-schema.org/draft-07/schema",
		"https://json-schema.org/draft/2020-12/schema":
		return true
	}
	return false
}

func resolve(m map[string]any) (*jsonschema.Resolved, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("reading the schema: %w", err)
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(b, &js); err != nil {
		return nil, fmt.Errorf("reading the schema: %w", err)
	}
	rs, err := js.Resolve(&jsonschema.ResolveOptions{Loader: noFetch})
	if err != nil {
		return nil, fmt.Errorf("the schema cannot be used: %w", err)
	}
	return rs, nil
}

// noFetch is the loader for every $ref outside the schema: it refuses.
func noFetch(u *url.URL) (*jsonschema.Schema, error) {
	return nil, fmt.Errorf("external $ref %s: %w", u, ErrExternalRef)
}

func shallowCopy(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// CheckDepth fails when the JSON in b nests objects and arrays deeper than
// limit. It does not check that b is valid JSON.
func CheckDepth(b []byte, limit int) error {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > limit {
				return fmt.Errorf("nests deeper than %d levels", limit)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// PropertyOrder returns the keys of the root's "properties" in the order the
// schema lists them (a Go map forgets it), keeping only keys in props.
func PropertyOrder(raw []byte, props map[string]any) []string {
	var order []string
	seen := map[string]bool{}
	add := func(k string) {
		if _, ok := props[k]; ok && !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err == nil && t == json.Delim('{') {
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				break
			}
			if k, _ := kt.(string); k != "properties" {
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					break
				}
				continue
			}
			if t, err := dec.Token(); err != nil || t != json.Delim('{') {
				break
			}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					break
				}
				k, _ := kt.(string)
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					break
				}
				add(k)
			}
			break
		}
	}
	// Whatever the scan missed still gets a field, sorted for stability.
	var rest []string
	for k := range props {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		add(k)
	}
	return order
}

// inPlaceKeys are the keywords whose subschemas apply to the same instance
// (they do not descend into a property or an item), so a loop through them
// never ends.
var inPlaceKeys = []string{"not", "if", "then", "else"}
var inPlaceListKeys = []string{"allOf", "anyOf", "oneOf"}
var inPlaceMapKeys = []string{"dependentSchemas", "dependencies"}

// checkRefs rejects schemas that jsonschema-go would recurse on forever: a
// cycle of $refs (and in-place applicators) that consumes no input, which
// overflows the stack and kills the process. It also rejects $dynamicRef,
// whose target depends on the path taken, so no static check is sound.
func checkRefs(root map[string]any) error {
	nodes := map[string]map[string]any{} // JSON pointer -> schema object
	bases := map[string]*url.URL{}       // JSON pointer -> base URI in force there
	ids := map[string]string{}           // resource URI (no fragment) -> pointer
	anchors := map[string]string{}       // resource URI + "#" + anchor -> pointer
	var dynamic bool
	var walk func(v any, ptr string, base *url.URL)
	walk = func(v any, ptr string, base *url.URL) {
		switch v := v.(type) {
		case map[string]any:
			if id, ok := v["$id"].(string); ok {
				if u, err := url.Parse(id); err == nil {
					base = base.ResolveReference(u)
					base.Fragment = ""
					ids[base.String()] = ptr
				}
			}
			nodes[ptr], bases[ptr] = v, base
			for _, k := range []string{"$anchor", "$dynamicAnchor"} {
				if a, ok := v[k].(string); ok {
					anchors[base.String()+"#"+a] = ptr
				}
			}
			if _, ok := v["$dynamicRef"]; ok {
				dynamic = true
			}
			for k, c := range v {
				walk(c, ptr+"/"+escapePointer(k), base)
			}
		case []any:
			for i, c := range v {
				walk(c, ptr+"/"+strconv.Itoa(i), base)
			}
		}
	}
	ids[""] = ""
	walk(root, "", &url.URL{})
	if dynamic {
		return errors.New("the schema uses $dynamicRef, which airlock does not validate")
	}

	// target resolves a $ref the way jsonschema-go does: against the base
	// URI in force at the referring schema. A ref to a resource that is not
	// in the schema is external, and resolving it fails on its own.
	target := func(ptr, ref string) (string, bool) {
		u, err := url.Parse(ref)
		if err != nil {
			return "", false
		}
		u = bases[ptr].ResolveReference(u)
		frag := u.Fragment
		u.Fragment = ""
		start, ok := ids[u.String()]
		if !ok {
			return "", false
		}
		switch {
		case frag == "":
			return start, true
		case strings.HasPrefix(frag, "/"):
			return start + frag, true
		}
		p, ok := anchors[u.String()+"#"+frag]
		return p, ok
	}
	edges := func(ptr string) []string {
		n := nodes[ptr]
		var out []string
		if ref, ok := n["$ref"].(string); ok {
			if t, ok := target(ptr, ref); ok {
				out = append(out, t)
			}
		}
		for _, k := range inPlaceKeys {
			if _, ok := n[k].(map[string]any); ok {
				out = append(out, ptr+"/"+k)
			}
		}
		for _, k := range inPlaceListKeys {
			if l, ok := n[k].([]any); ok {
				for i := range l {
					out = append(out, ptr+"/"+k+"/"+strconv.Itoa(i))
				}
			}
		}
		for _, k := range inPlaceMapKeys {
			if m, ok := n[k].(map[string]any); ok {
				for name := range m {
					out = append(out, ptr+"/"+k+"/"+escapePointer(name))
				}
			}
		}
		return out
	}

	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var visit func(ptr string) error
	visit = func(ptr string) error {
		switch state[ptr] {
		case onPath:
			return fmt.Errorf("the schema's $ref at %q loops without consuming input", ptr)
		case done:
			return nil
		}
		state[ptr] = onPath
		for _, next := range edges(ptr) {
			if _, ok := nodes[next]; !ok {
				continue // true/false schemas and missing targets end here
			}
			if err := visit(next); err != nil {
				return err
			}
		}
		state[ptr] = done
		return nil
	}
	for ptr := range nodes {
		if err := visit(ptr); err != nil {
			return err
		}
	}
	return nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// lookup follows a local JSON pointer ("/a/b") from root.
func lookup(root any, ptr string) (any, bool) {
	if ptr == "" {
		return root, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := root
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// Deref follows a property schema's local "#/..." $refs (a few hops at most)
// to the schema that says its type. It returns m itself when m has no $ref.
func Deref(root, m map[string]any) map[string]any {
	for range maxRefHops {
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#") {
			return m
		}
		frag, err := url.PathUnescape(ref[1:])
		if err != nil {
			return m
		}
		t, ok := lookup(root, frag)
		next, isMap := t.(map[string]any)
		if !ok || !isMap {
			return m
		}
		m = next
	}
	return m
}

// numberBeyondFloat finds the first number in args beyond the range of float64
// (1e400), which encoding/json refuses to read into the float64s the validator
// compares: it returns the field as a dotted path with list indexes (path.deep[1])
// and the number as written, cut to 40 characters. ok is false when args has no
// such number (they are not an object at all).
func numberBeyondFloat(args json.RawMessage) (field, num string, ok bool) {
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", "", false
	}
	if _, isObject := v.(map[string]any); !isObject {
		return "", "", false
	}
	var walk func(v any, path string) bool
	walk = func(v any, path string) bool {
		switch x := v.(type) {
		case json.Number:
			if _, err := strconv.ParseFloat(string(x), 64); err != nil {
				field, num = path, string(x)
				if len(num) > 40 {
					num = num[:40] + "…"
				}
				return true
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				p := k
				if path != "" {
					p = path + "." + k
				}
				if walk(x[k], p) {
					return true
				}
			}
		case []any:
			for i, e := range x {
				if walk(e, path+"["+strconv.Itoa(i)+"]") {
					return true
				}
			}
		}
		return false
	}
	ok = walk(v, "")
	return field, num, ok
}

// FieldError finds which field a jsonschema-go validation error concerns and
// returns it with the message stripped of the schema locations. jsonschema-go
// names schemas by their JSON pointer: "validating root: validating
// /properties/NAME: type: ...". name is "" when no field matches.
func FieldError(err error, fields []string) (name, msg string) {
	s := err.Error()
	// Drop the root's own "validating X: " (X is "root" or the root's $id).
	if strings.HasPrefix(s, "validating ") {
		if i := strings.Index(s, ": "); i >= 0 {
			s = s[i+2:]
		}
	}
	best := ""
	for _, f := range fields {
		p := "validating /properties/" + escapePointer(f)
		if (strings.HasPrefix(s, p+": ") || strings.HasPrefix(s, p+"/")) && len(f) >= len(best) {
			best, name = f, f
		}
	}
	if name != "" {
		p := "validating /properties/" + escapePointer(name)
		for strings.HasPrefix(s, p) {
			i := strings.Index(s[len(p):], ": ")
			if i < 0 {
				break
			}
			s = s[len(p)+i+2:]
		}
	}
	for strings.HasPrefix(s, "validating /") {
		i := strings.Index(s, ": ")
		if i < 0 {
			break
		}
		s = s[i+2:]
	}
	return name, s
}

// CheckArgs validates call arguments against a tool's input schema exactly as the
// call form does (same bounds, no outside references). The error names the field
// it concerns. A schema that is absent or does not describe an object checks
// nothing; one that cannot be compiled is an error.
func CheckArgs(inputSchema, args json.RawMessage) error {
	return Load(inputSchema).Check(args)
}

// Check validates call arguments against the schema, as CheckArgs does; a Schema
// loaded once checks many calls.
func (s Schema) Check(args json.RawMessage) error {
	if s.Problem != nil {
		return fmt.Errorf("the tool's input schema cannot be checked: %w", s.Problem)
	}
	if s.Absent || !s.Object || s.Full == nil {
		return nil
	}
	var plain map[string]any
	if err := json.Unmarshal(args, &plain); err != nil || plain == nil {
		if field, num, ok := numberBeyondFloat(args); ok {
			return fmt.Errorf("field %q: the number %s cannot be read exactly: it is beyond what a 64-bit float holds, and the input schema is checked with 64-bit floats", field, num)
		}
		return fmt.Errorf("the arguments must be a JSON object")
	}
	if err := s.Full.Validate(plain); err != nil {
		name, msg := FieldError(err, s.Order)
		if name != "" {
			return fmt.Errorf("field %q: %s", name, msg)
		}
		return fmt.Errorf("%s", msg)
	}
	return nil
}
