package form

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"

	"github.com/airlock-mcp/airlock/ui/safetext"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// kind is how a field is edited.
type kind int

const (
	kindText    kind = iota // a string in a text input
	kindNumber              // a JSON number in a text input
	kindInteger             // a JSON integer in a text input
	kindBool                // true / false / not set
	kindEnum                // one of the schema's values / not set
	kindJSON                // any JSON in an editor: arrays, objects, the rest
	kindMulti               // an array of enum values: a checklist
)

// option is one value of an enum or boolean field.
type option struct {
	raw   json.RawMessage // compact JSON of the value
	label string          // untrusted for enums: escape before display
}

// field is one property of the schema.
type field struct {
	name     string // untrusted: escape before display
	kind     kind
	required bool
	hint     string // what to type, airlock's own words
	desc     string // untrusted
	options  []option
	choice   int // index into options, -1 when not set
	// checked marks the options of a checklist that are sent; choice is then
	// the option the cursor is on.
	checked []bool
	// item is an empty item of an array of objects (JSON), for AddItem.
	item  json.RawMessage
	input textinput.Model
	area  textarea.Model
	// unsafeDefault is a default that cannot be put in a text input as is
	// (it holds control, bidi or invisible characters); it is shown escaped
	// and left for the server to apply.
	unsafeDefault string
	err           string // shown at the field; may embed untrusted text
}

var (
	integerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`) })
	numberRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`) })
)

// newField builds the field for property name with schema prop.
func newField(name string, prop any, root map[string]any, required bool, st theme.Styles) field {
	f := field{name: name, required: required, choice: -1, kind: kindJSON, hint: "JSON"}
	m, _ := prop.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	t := deref(root, m)
	f.desc = str(m["description"])
	if f.desc == "" {
		f.desc = str(t["description"])
	}
	if title := str(m["title"]); title != "" && f.desc == "" {
		f.desc = title
	}

	typ := typeOf(t)
	switch {
	case t["enum"] != nil:
		if vals, ok := t["enum"].([]any); ok && len(vals) > 0 {
			f.kind, f.hint = kindEnum, "choice"
			for _, v := range vals {
				f.options = append(f.options, newOption(v))
			}
		}
	case t["const"] != nil:
		f.kind, f.hint = kindEnum, "choice"
		f.options = []option{newOption(t["const"])}
	case constChoices(t) != nil:
		// A titled enum: oneOf (or anyOf) of {"const": v, "title": "..."}.
		f.kind, f.hint = kindEnum, "choice"
		f.options = constChoices(t)
	case typ == "string":
		f.kind, f.hint = kindText, "text"
		if format := str(t["format"]); format != "" && safeInline(format) && len(format) <= 32 {
			f.hint = "text (" + format + ")"
		}
	case typ == "number":
		f.kind, f.hint = kindNumber, "number"
	case typ == "integer":
		f.kind, f.hint = kindInteger, "integer"
	case typ == "boolean":
		f.kind, f.hint = kindBool, "true/false"
		f.options = []option{{raw: json.RawMessage("true"), label: "true"}, {raw: json.RawMessage("false"), label: "false"}}
	case typ == "array" && enumItems(root, t) != nil:
		// A multi-select: every item one of the listed values.
		f.kind, f.hint = kindMulti, "choose any"
		f.options = enumItems(root, t)
		f.checked = make([]bool, len(f.options))
		f.choice = 0
	case typ == "array":
		f.hint = "JSON array"
		if shape := itemShape(root, t); shape != "" {
			// An array of objects: say what one item holds.
			f.hint = "JSON array of " + shape
			f.item = emptyItem(root, t)
		}
	case typ == "object":
		f.hint = "JSON object"
	}

	switch f.kind {
	case kindText, kindNumber, kindInteger:
		// The placeholder is in parentheses so that an empty field cannot
		// be read as one holding the word.
		f.input = newInput(st, "("+f.hint+")")
	case kindJSON:
		placeholder := "any JSON value"
		switch typ {
		case "array":
			placeholder = "[ … ]"
		case "object":
			placeholder = "{ … }"
		}
		f.area = newArea(st, placeholder)
	}

	def, hasDef := m["default"]
	if !hasDef {
		def, hasDef = t["default"]
	}
	if hasDef {
		f.setDefault(def)
	}
	return f
}

// enumItems returns the options of an array schema whose items are one of a
// list of values (enum, or oneOf/anyOf of constants); nil otherwise.
func enumItems(root, t map[string]any) []option {
	items, _ := t["items"].(map[string]any)
	if items == nil {
		return nil
	}
	items = deref(root, items)
	if vals, ok := items["enum"].([]any); ok && len(vals) > 0 {
		opts := make([]option, 0, len(vals))
		for _, v := range vals {
			opts = append(opts, newOption(v))
		}
		return opts
	}
	return constChoices(items)
}

// itemShape describes the objects an array holds: "{name, url}" (the first
// few property names, escaped later as any hint), or "" when its items are
// not objects with properties.
func itemShape(root, t map[string]any) string {
	items, _ := t["items"].(map[string]any)
	if items == nil {
		return ""
	}
	items = deref(root, items)
	props, _ := items["properties"].(map[string]any)
	if len(props) == 0 {
		return ""
	}
	b, _ := json.Marshal(items)
	names := propertyOrder(b, props)
	const most = 4
	var shown []string
	for _, n := range names {
		if !safeInline(n) || len(n) > 32 {
			continue
		}
		if len(shown) == most {
			shown = append(shown, "…")
			break
		}
		shown = append(shown, n)
	}
	if len(shown) == 0 {
		return ""
	}
	return "objects {" + strings.Join(shown, ", ") + "}"
}

// emptyItem is one item of an array of objects with every listed property
// empty for its type ("" for text, 0 for numbers, false, [] or {}), for the
// person to fill in.
func emptyItem(root, t map[string]any) json.RawMessage {
	items := deref(root, t["items"].(map[string]any))
	props, _ := items["properties"].(map[string]any)
	b, _ := json.Marshal(items)
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, n := range propertyOrder(b, props) {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(n)
		buf.Write(k)
		buf.WriteByte(':')
		p, _ := props[n].(map[string]any)
		switch typeOf(deref(root, p)) {
		case "string":
			buf.WriteString(`""`)
		case "number", "integer":
			buf.WriteString("0")
		case "boolean":
			buf.WriteString("false")
		case "array":
			buf.WriteString("[]")
		case "object":
			buf.WriteString("{}")
		default:
			buf.WriteString("null")
		}
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// addItem appends an empty item to the field's array.
func (f *field) addItem() error {
	v := strings.TrimSpace(f.area.Value())
	var list []json.RawMessage
	if v != "" {
		if err := json.Unmarshal([]byte(v), &list); err != nil {
			return fmt.Errorf("fix the JSON first: it is not an array (%v)", err)
		}
	}
	list = append(list, f.item)
	b, err := json.Marshal(list)
	if err != nil {
		return err
	}
	f.area.SetValue(editable(b))
	return nil
}

// typeOf is the schema's one type, ignoring "null" in a list; "" when there
// is none or more than one.
func typeOf(m map[string]any) string {
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		var only string
		for _, x := range t {
			s, _ := x.(string)
			if s == "null" {
				continue
			}
			if only != "" {
				return ""
			}
			only = s
		}
		return only
	}
	return ""
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// constChoices returns the options of a schema whose oneOf or anyOf lists
// only constants, each with an optional title; nil otherwise. The label
// shows the value itself, with the title beside it, so the person sees what
// is sent.
func constChoices(m map[string]any) []option {
	for _, k := range []string{"oneOf", "anyOf"} {
		list, ok := m[k].([]any)
		if !ok || len(list) == 0 {
			continue
		}
		var opts []option
		for _, item := range list {
			im, ok := item.(map[string]any)
			if !ok {
				return nil
			}
			c, ok := im["const"]
			if !ok {
				return nil
			}
			o := newOption(c)
			if title := str(im["title"]); title != "" && title != o.label {
				o.label += " — " + title
			}
			opts = append(opts, o)
		}
		return opts
	}
	return nil
}

func newOption(v any) option {
	b, _ := marshal(v)
	label := string(b)
	if s, ok := v.(string); ok {
		label = s
	}
	return option{raw: b, label: label}
}

// setDefault prefills the field with the schema's default.
func (f *field) setDefault(def any) {
	raw, err := marshal(def)
	if err != nil {
		return
	}
	switch f.kind {
	case kindText:
		s, ok := def.(string)
		if !ok {
			return
		}
		if safeInline(s) {
			f.input.SetValue(s)
		} else {
			f.unsafeDefault = s
		}
	case kindNumber, kindInteger:
		if n, ok := def.(json.Number); ok {
			f.input.SetValue(n.String())
		}
	case kindBool, kindEnum:
		for i, o := range f.options {
			if bytes.Equal(o.raw, raw) {
				f.choice = i
			}
		}
	case kindJSON:
		f.area.SetValue(editable(raw))
	case kindMulti:
		_ = f.set(def, false)
	}
}

// value is the field's JSON, whether the person set it, and why it cannot
// be read (an error to show at the field).
func (f *field) value() (json.RawMessage, bool, error) {
	switch f.kind {
	case kindText:
		v := f.input.Value()
		if v == "" {
			return nil, false, nil
		}
		b, err := marshal(v)
		return b, true, err
	case kindNumber, kindInteger:
		v := strings.TrimSpace(f.input.Value())
		if v == "" {
			return nil, false, nil
		}
		if f.kind == kindInteger && !integerRE().MatchString(v) {
			return nil, true, fmt.Errorf("want a whole number such as 42, got %q", v)
		}
		if !numberRE().MatchString(v) {
			return nil, true, fmt.Errorf("want a number such as 3.5, got %q", v)
		}
		return json.RawMessage(v), true, nil
	case kindBool, kindEnum:
		if f.choice < 0 || f.choice >= len(f.options) {
			return nil, false, nil
		}
		return f.options[f.choice].raw, true, nil
	case kindMulti:
		var vals []json.RawMessage
		for i, on := range f.checked {
			if on {
				vals = append(vals, f.options[i].raw)
			}
		}
		if len(vals) == 0 {
			return nil, false, nil
		}
		b, err := json.Marshal(vals)
		return b, true, err
	}
	v := strings.TrimSpace(f.area.Value())
	if v == "" {
		return nil, false, nil
	}
	b, err := compactJSON([]byte(v))
	if err != nil {
		return nil, true, err
	}
	return b, true, nil
}

// set puts v, decoded from the person's raw JSON with UseNumber, into the
// field; with dryRun it only checks. It fails, changing nothing, when the
// field cannot hold v faithfully.
func (f *field) set(v any, dryRun bool) error {
	raw, err := marshal(v)
	if err != nil {
		return err
	}
	switch f.kind {
	case kindText:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("want text, got %s", raw)
		}
		if s == "" {
			return fmt.Errorf("an empty text field is left out, so \"\" can only be sent as raw JSON")
		}
		if !safeInline(s) {
			return fmt.Errorf("the text holds characters a text field cannot show")
		}
		if !dryRun {
			f.input.SetValue(s)
		}
		return nil
	case kindNumber, kindInteger:
		n, ok := v.(json.Number)
		if !ok || (f.kind == kindInteger && !integerRE().MatchString(n.String())) || !numberRE().MatchString(n.String()) {
			return fmt.Errorf("want %s, got %s", f.hint, raw)
		}
		if !dryRun {
			f.input.SetValue(n.String())
		}
		return nil
	case kindBool, kindEnum:
		for i, o := range f.options {
			if bytes.Equal(o.raw, raw) {
				if !dryRun {
					f.choice = i
				}
				return nil
			}
		}
		return fmt.Errorf("%s is not one of the choices", raw)
	case kindMulti:
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("want a list of choices, got %s", raw)
		}
		checked := make([]bool, len(f.options))
	next:
		for _, item := range list {
			b, err := marshal(item)
			if err != nil {
				return err
			}
			for i, o := range f.options {
				if bytes.Equal(o.raw, b) {
					checked[i] = true
					continue next
				}
			}
			return fmt.Errorf("%s is not one of the choices", b)
		}
		if !dryRun {
			f.checked = checked
		}
		return nil
	}
	if !dryRun {
		f.area.SetValue(editable(raw))
	}
	return nil
}

// clear empties the field.
func (f *field) clear() {
	switch f.kind {
	case kindText, kindNumber, kindInteger:
		f.input.SetValue("")
	case kindBool, kindEnum:
		f.choice = -1
	case kindJSON:
		f.area.SetValue("")
	case kindMulti:
		clear(f.checked)
	}
}

// cycle moves a choice by d through the options and "not set".
func (f *field) cycle(d int) {
	if f.kind == kindMulti {
		// The cursor moves through the checklist; space checks.
		f.choice = (f.choice + d + len(f.options)) % len(f.options)
		return
	}
	n := len(f.options) + 1 // "not set" is position 0
	pos := (f.choice + 1 + d + n) % n
	f.choice = pos - 1
}

func (f *field) choiceField() bool {
	return f.kind == kindBool || f.kind == kindEnum || f.kind == kindMulti
}

// toggle checks or unchecks the checklist option under the cursor.
func (f *field) toggle() {
	if f.kind == kindMulti && f.choice >= 0 && f.choice < len(f.checked) {
		f.checked[f.choice] = !f.checked[f.choice]
	}
}
func (f *field) inputField() bool {
	return f.kind == kindText || f.kind == kindNumber || f.kind == kindInteger
}

func (f *field) focus() {
	switch {
	case f.inputField():
		f.input.Focus()
	case f.kind == kindJSON:
		f.area.Focus()
	}
}

func (f *field) blur() {
	f.input.Blur()
	f.area.Blur()
}

// safeInline reports whether s can go into a text input as is: escaping
// would not change it and it is one line.
func safeInline(s string) bool {
	return !strings.ContainsAny(s, "\n\t") && safetext.Escape(s) == s
}

// marshal encodes v as compact JSON without HTML escaping, so the bytes are
// what the person typed.
func marshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// compactJSON checks b is one bounded JSON value and returns it compact.
func compactJSON(b []byte) (json.RawMessage, error) {
	if err := checkDepth(b, MaxArgsDepth); err != nil {
		return nil, fmt.Errorf("the JSON %w", err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if !json.Valid(buf.Bytes()) {
		return nil, fmt.Errorf("not one JSON value")
	}
	return buf.Bytes(), nil
}

// editable is JSON pretty-printed for an editor, with every rune that
// safetext would mark written as a \u escape: the editor shows its value as
// is, and in valid JSON such runes can only sit inside strings, where the
// escape means the same value.
func editable(raw []byte) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		buf.Reset()
		buf.Write(raw)
	}
	s := buf.String()
	if safetext.Escape(s) == s && !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == '\n' || (r != utf8.RuneError && safetext.Escape(string(r)) == string(r)) {
			b.WriteRune(r)
			continue
		}
		// An invalid byte decodes as U+FFFD and is written as \ufffd: invalid
		// UTF-8 cannot sit in the editor, and the escape says so.
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		} else {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// newInput is a one-line text input styled by the theme. Its cursor does
// not blink, so the form needs no timer.
func newInput(st theme.Styles, placeholder string) textinput.Model {
	ti := textinput.New()
	ti.Prompt = ""
	ti.Placeholder = placeholder
	ti.CharLimit = 64 << 10
	s := textinput.DefaultStyles(st.Dark)
	plain := lipgloss.NewStyle()
	s.Focused = textinput.StyleState{Text: plain, Placeholder: st.Muted, Suggestion: st.Muted, Prompt: plain}
	s.Blurred = s.Focused
	s.Cursor.Blink = false
	if st.NoColor {
		s.Cursor.Color = lipgloss.NoColor{}
	}
	ti.SetStyles(s)
	return ti
}

// newArea is a JSON editor styled by the theme.
func newArea(st theme.Styles, placeholder string) textarea.Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = "┆ "
	ta.Placeholder = placeholder
	ta.CharLimit = 0
	ta.MaxHeight = 0
	plain := lipgloss.NewStyle()
	state := textarea.StyleState{
		Base: plain, Text: plain, LineNumber: st.Muted, CursorLineNumber: st.Muted,
		CursorLine: plain, EndOfBuffer: st.Muted, Placeholder: st.Muted, Prompt: st.Gutter,
		Selection: plain.Reverse(true),
	}
	s := textarea.DefaultStyles(st.Dark)
	s.Focused, s.Blurred = state, state
	s.Cursor.Blink = false
	if st.NoColor {
		s.Cursor.Color = lipgloss.NoColor{}
	}
	ta.SetStyles(s)
	ta.SetHeight(3)
	return ta
}
