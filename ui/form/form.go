package form

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// MaxWidth is the widest a form draws itself, frame included; the root
// centres it on wider terminals.
const MaxWidth = 110

// mode is what the form is for.
type mode int

const (
	modeCall   mode = iota // a tool call's arguments
	modeElicit             // an elicitation with a schema
	modeURL                // an elicitation that asks the person to visit a URL
)

// Form is a form generated from a JSON Schema: the arguments of a tool call
// (New) or the answer to a server's elicitation (NewElicitation). It is a
// pure value: Update returns the new form and, once the person is done, an
// Action for the root to carry out.
type Form struct {
	st   theme.Styles
	keys KeyMap
	help help.Model
	mode mode
	// verb heads a call-like form ("call ", "get prompt "); suggest holds the
	// server's completion values per field name (suggest.go).
	verb    string
	suggest map[string]*suggestions

	// Server-controlled text, escaped when rendered.
	server, tool, message, url string
	// serverTrust is shown beside the server's name in an elicitation.
	serverTrust    trust.ServerTrust
	hasServerTrust bool

	sch     schema
	fields  []field
	focus   int
	raw     bool // editing the whole form as raw JSON
	rawOnly bool // the schema cannot be a form: raw JSON is all there is
	rawArea textarea.Model
	notes   []string // airlock's notes about the schema; may embed untrusted text
	topErr  []string // errors not tied to a visible field; may embed untrusted text

	vp            viewport.Model
	width, height int
	dw, iw        int
	header        []string
	focusTop      int // the focused field's first and last line in the body
	focusEnd      int
}

// New builds the call form for tool from its input schema, laid out for an
// 80x24 terminal until SetSize says otherwise. A missing schema, or one that
// does not describe an object, gives a raw JSON editor holding {}.
func New(tool model.ToolInfo, st theme.Styles) Form {
	f := newForm(st, modeCall, DefaultKeyMap())
	f.server, f.tool = tool.Ref.Server, tool.Ref.Tool
	f.build(tool.InputSchema)
	return f
}

// NewElicitation builds the form for a server's elicitation, which must not
// be nil. In form mode its fields come from the requested schema and ctrl+s
// accepts with content validated against it; in url mode it shows the URL,
// escaped, and offers accept, decline and cancel without fields. It is laid
// out for an 80x24 terminal until SetSize says otherwise.
func NewElicitation(e *model.Elicitation, st theme.Styles) Form {
	f := newForm(st, modeElicit, elicitKeyMap())
	f.server, f.message = e.Server, e.Message
	if e.Mode == "url" {
		f.mode, f.url = modeURL, e.URL
		f.updateKeys()
		f.layout(false)
		return f
	}
	f.build(e.Schema)
	return f
}

// SetServerTrust shows the asking server's trust beside its name, first thing
// in an elicitation.
func (f *Form) SetServerTrust(t trust.ServerTrust) {
	f.serverTrust, f.hasServerTrust = t, true
	f.layout(false)
}

func newForm(st theme.Styles, m mode, keys KeyMap) Form {
	h := help.New()
	h.Styles = help.Styles{
		ShortKey: st.HelpKey, ShortDesc: st.Help, ShortSeparator: st.Help, Ellipsis: st.Help,
		FullKey: st.HelpKey, FullDesc: st.Help, FullSeparator: st.Help,
	}
	vp := viewport.New()
	vp.KeyMap = viewport.KeyMap{}
	vp.MouseWheelEnabled = true
	return Form{st: st, keys: keys, help: h, mode: m, vp: vp, width: 80, height: 24, rawArea: newArea(st, "{}")}
}

// build reads the schema and makes the fields, or the raw editor.
func (f *Form) build(raw json.RawMessage) {
	f.sch = loadSchema(raw)
	f.notes = f.sch.Notes
	switch {
	case f.sch.Absent && f.mode == modeCall:
		f.rawOnly = true
		f.notes = append(f.notes, "the tool declares no input schema: edit the arguments as JSON; they are not checked")
	case f.sch.Absent:
		// An elicitation without a schema asks only for a yes or no.
	case f.sch.Root == nil || !f.sch.Object:
		f.rawOnly = true
	case len(f.sch.Order) > MaxFields:
		f.rawOnly = true
		f.notes = append(f.notes, fmt.Sprintf("the schema has %d properties, more than the %d the form lays out: edit them as JSON", len(f.sch.Order), MaxFields))
	default:
		for _, name := range f.sch.Order {
			f.fields = append(f.fields, newField(name, f.sch.Props[name], f.sch.Root, f.sch.Required[name], f.st))
		}
	}
	if f.rawOnly {
		f.raw = true
		f.rawArea.SetValue("{}")
		f.rawArea.Focus()
	} else if len(f.fields) > 0 {
		f.fields[0].focus()
	}
	f.updateKeys()
	f.layout(false)
}

// KeyMap returns the bindings as they stand in the form's current state,
// for the root's help view.
func (f Form) KeyMap() KeyMap { return f.keys }

// Raw reports whether the form is in raw JSON mode.
func (f Form) Raw() bool { return f.raw }

// SetSize lays the form out for w columns and h rows: it is at most MaxWidth
// wide and at most h high, and the fields scroll when they do not fit.
func (f *Form) SetSize(w, h int) {
	f.width, f.height = w, h
	f.layout(false)
}

// Update handles one message. It returns the form, the decision if the
// person made one (nil otherwise) and a command to run.
func (f Form) Update(msg tea.Msg) (Form, Action, tea.Cmd) {
	// The fields are edited in place below; work on a copy of the slice so
	// the form Update was called on keeps its own.
	f.fields = slices.Clone(f.fields)
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return f.key(msg)
	case tea.MouseWheelMsg:
		var cmd tea.Cmd
		f.vp, cmd = f.vp.Update(msg)
		return f, nil, cmd
	}
	// Pastes and cursor messages belong to the focused editor.
	cmd := f.forward(msg)
	f.layout(true)
	return f, nil, cmd
}

func (f Form) key(msg tea.KeyPressMsg) (Form, Action, tea.Cmd) {
	k := f.keys
	switch {
	case key.Matches(msg, k.Submit):
		return f.submit()
	case key.Matches(msg, k.Decline):
		return f, Decline{}, nil
	case key.Matches(msg, k.Cancel):
		return f, Cancel{}, nil
	case key.Matches(msg, k.Suggest):
		f.takeSuggestion()
		f.layout(false)
		return f, nil, nil
	case key.Matches(msg, k.Raw):
		f.toggleRaw()
		f.updateKeys()
		f.layout(false)
		return f, nil, nil
	case key.Matches(msg, k.PageDown):
		f.vp.PageDown()
		return f, nil, nil
	case key.Matches(msg, k.PageUp):
		f.vp.PageUp()
		return f, nil, nil
	}
	if !f.raw && len(f.fields) == 0 && f.mode == modeCall && key.Matches(msg, k.Enter) {
		// Nothing to fill in: enter sends, as on a form's last field.
		return f.submit()
	}
	if f.mode == modeURL || (!f.raw && len(f.fields) == 0) {
		return f, nil, nil
	}
	if f.raw {
		cmd := f.forward(msg)
		f.layout(false)
		return f, nil, cmd
	}

	fd := &f.fields[f.focus]
	var cmd tea.Cmd
	switch {
	case key.Matches(msg, k.Next, k.Down):
		f.move(1)
	case key.Matches(msg, k.Prev, k.Up):
		f.move(-1)
	case key.Matches(msg, k.Enter):
		if f.focus == len(f.fields)-1 {
			if f.mode != modeCall {
				// A server's request for input is answered with Submit only:
				// Enter is every screen's "open", and a person who goes on
				// navigating must not accept what a server asked.
				break
			}
			return f.submit()
		}
		f.move(1)
	case key.Matches(msg, k.AddItem) && fd.item != nil:
		if err := fd.addItem(); err != nil {
			fd.err = err.Error()
		} else {
			fd.err = ""
		}
	case fd.kind == kindMulti && key.Matches(msg, k.Toggle):
		fd.toggle()
		fd.err = ""
	case key.Matches(msg, k.Toggle, k.ChoiceNext):
		fd.cycle(1)
		fd.err = ""
	case key.Matches(msg, k.ChoicePrev):
		fd.cycle(-1)
		fd.err = ""
	case fd.choiceField():
		// Other keys mean nothing on a choice.
	default:
		cmd = f.forward(msg)
		fd.err = ""
	}
	f.updateKeys()
	f.layout(false)
	return f, nil, cmd
}

// forward sends msg to the focused editor.
func (f *Form) forward(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	switch {
	case f.mode == modeURL:
	case f.raw:
		f.rawArea, cmd = f.rawArea.Update(msg)
	case len(f.fields) > 0:
		fd := &f.fields[f.focus]
		switch {
		case fd.inputField():
			fd.input, cmd = fd.input.Update(msg)
		case fd.kind == kindJSON:
			fd.area, cmd = fd.area.Update(msg)
		}
	}
	return cmd
}

// move changes focus by d fields, wrapping around.
func (f *Form) move(d int) {
	n := len(f.fields)
	f.fields[f.focus].blur()
	f.focus = (f.focus + d + n) % n
	f.fields[f.focus].focus()
}

// updateKeys enables exactly the bindings that work in the current state.
func (f *Form) updateKeys() {
	k := &f.keys
	url := f.mode == modeURL
	hasFields := !url && !f.raw && len(f.fields) > 0
	var fd *field
	if hasFields {
		fd = &f.fields[f.focus]
	}
	many := hasFields && len(f.fields) > 1
	k.Next.SetEnabled(many)
	k.Prev.SetEnabled(many)
	notJSON := fd != nil && fd.kind != kindJSON
	k.Down.SetEnabled(many && notJSON)
	k.Up.SetEnabled(many && notJSON)
	k.Enter.SetEnabled(notJSON || (!url && !f.raw && len(f.fields) == 0))
	if (fd != nil && f.focus == len(f.fields)-1) || (!url && !f.raw && len(f.fields) == 0) {
		k.Enter.SetHelp("enter", k.Submit.Help().Desc)
		// In a server's request for input only Submit (ctrl+s) sends.
		k.Enter.SetEnabled(k.Enter.Enabled() && f.mode == modeCall)
	} else {
		k.Enter.SetHelp("enter", "next field")
	}
	k.AddItem.SetEnabled(fd != nil && fd.item != nil)
	k.Suggest.SetEnabled(fd != nil && fd.kind == kindText && f.suggest[fd.name] != nil)
	choice := fd != nil && fd.choiceField()
	k.Toggle.SetEnabled(choice)
	k.ChoiceNext.SetEnabled(choice)
	k.ChoicePrev.SetEnabled(choice)
	k.Raw.SetEnabled(!url && !f.rawOnly && !(f.mode == modeElicit && f.sch.Absent))
	if f.raw {
		k.Raw.SetHelp("ctrl+r", "back to fields")
	} else {
		k.Raw.SetHelp("ctrl+r", "raw JSON")
	}
	scroll := url || (fd != nil && fd.kind != kindJSON) || (!f.raw && len(f.fields) == 0)
	k.PageDown.SetEnabled(scroll)
	k.PageUp.SetEnabled(scroll)
}

// submit validates and returns the form's Action, or shows what is wrong.
func (f Form) submit() (Form, Action, tea.Cmd) {
	if f.mode == modeURL {
		return f, Accept{Content: map[string]any{}}, nil
	}
	args, ok := f.collect()
	if !ok {
		f.updateKeys()
		f.layout(false)
		return f, nil, nil
	}
	if f.mode == modeCall {
		return f, Submit{Args: args}, nil
	}
	content := map[string]any{}
	if err := json.Unmarshal(args, &content); err != nil {
		f.topErr = []string{"the answer cannot be read back: " + err.Error()}
		f.layout(false)
		return f, nil, nil
	}
	return f, Accept{Content: content}, nil
}

// collect gathers the arguments and validates them, putting each error at
// its field (or at the top). ok is false when anything is wrong.
func (f *Form) collect() (json.RawMessage, bool) {
	f.topErr = nil
	for i := range f.fields {
		f.fields[i].err = ""
	}
	var args json.RawMessage
	if f.raw {
		text := strings.TrimSpace(f.rawArea.Value())
		if text == "" {
			f.topErr = []string{"the JSON is empty: type {} for no arguments"}
			return nil, false
		}
		b, err := compactJSON([]byte(text))
		if err != nil {
			f.topErr = []string{err.Error()}
			return nil, false
		}
		if b[0] != '{' {
			f.topErr = []string{"the arguments must be a JSON object, {...}"}
			return nil, false
		}
		if _, err := trust.CanonicalArgs(b, 0); err != nil { // duplicate keys, lone surrogates
			f.topErr = []string{err.Error()}
			return nil, false
		}
		args = b
	} else {
		var err error
		if args, err = f.fieldsJSON(true); err != nil {
			return nil, false
		}
	}

	if f.sch.Problem != nil {
		f.topErr = []string{"cannot check the input: " + f.sch.Problem.Error()}
		return nil, false
	}
	if f.sch.Full == nil {
		return args, true // no schema, or not an object schema: nothing to check
	}
	var inst map[string]any
	if err := json.Unmarshal(args, &inst); err != nil {
		f.topErr = []string{err.Error()}
		return nil, false
	}
	byField, top := f.validate(inst)
	if len(byField) == 0 && top == "" {
		return args, true
	}
	if top != "" {
		f.topErr = append(f.topErr, top)
	}
	if f.raw {
		names := make([]string, 0, len(byField))
		for n := range byField {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			f.topErr = append(f.topErr, n+": "+byField[n])
		}
		return nil, false
	}
	first := -1
	for i := range f.fields {
		if msg, ok := byField[f.fields[i].name]; ok {
			f.fields[i].err = msg
			if first < 0 {
				first = i
			}
		}
	}
	if first >= 0 {
		f.focusOn(first)
	}
	return nil, false
}

// validate runs the schema over inst and returns errors by field and one
// error that concerns no field. jsonschema-go stops at the first error, so a
// field in error is taken out and the rest validated again, to show every
// field's error at once.
func (f *Form) validate(inst map[string]any) (map[string]string, string) {
	names := make([]string, len(f.fields))
	for i, fd := range f.fields {
		names[i] = fd.name
	}
	byField := map[string]string{}
	work := make(map[string]any, len(inst))
	for k, v := range inst {
		work[k] = v
	}
	for range len(names) + 1 {
		err := f.sch.NoRequired.Validate(work)
		if err == nil {
			break
		}
		name, msg := fieldError(err, names)
		if _, present := work[name]; name == "" || !present {
			return byField, msg
		}
		byField[name] = msg
		delete(work, name)
	}
	if len(byField) > 0 {
		return byField, ""
	}
	if err := f.sch.Full.Validate(inst); err != nil {
		name, msg := fieldError(err, names)
		if name != "" {
			byField[name] = msg
			return byField, ""
		}
		return byField, msg
	}
	return byField, ""
}

// fieldsJSON builds the arguments from the fields: a compact object of the
// fields that are set, in the schema's order. With strict, a field that
// cannot be read, or a required field left empty, is an error at the field;
// without, such fields are left out.
func (f *Form) fieldsJSON(strict bool) (json.RawMessage, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	first, bad := true, -1
	for i := range f.fields {
		fd := &f.fields[i]
		v, set, err := fd.value()
		switch {
		case err != nil:
			if strict {
				fd.err = err.Error()
			}
			if bad < 0 {
				bad = i
			}
			continue
		case !set:
			if strict && fd.required {
				fd.err = "required"
				if bad < 0 {
					bad = i
				}
			}
			continue
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		name, _ := marshal(fd.name)
		buf.Write(name)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	if strict && bad >= 0 {
		f.focusOn(bad)
		return nil, fmt.Errorf("field %d is not ready", bad)
	}
	return buf.Bytes(), nil
}

func (f *Form) focusOn(i int) {
	if i == f.focus || f.raw {
		return
	}
	f.fields[f.focus].blur()
	f.focus = i
	f.fields[i].focus()
}

// toggleRaw switches between the fields and raw JSON. Going back to the
// fields only happens when every key of the JSON is a field and every value
// fits it; otherwise the form stays raw and says why.
func (f *Form) toggleRaw() {
	f.topErr = nil
	if !f.raw {
		args, _ := f.fieldsJSON(false)
		var left []string
		for i := range f.fields {
			if _, _, err := f.fields[i].value(); err != nil {
				left = append(left, f.fields[i].name)
			}
			f.fields[i].blur()
		}
		if len(left) > 0 {
			f.topErr = []string{"left out because they hold errors: " + strings.Join(left, ", ")}
		}
		f.rawArea.SetValue(editable(args))
		f.rawArea.Focus()
		f.raw = true
		return
	}

	text := strings.TrimSpace(f.rawArea.Value())
	var obj map[string]any
	if text != "" {
		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		if err := checkDepth([]byte(text), MaxArgsDepth); err != nil {
			f.topErr = []string{"staying in raw JSON: the JSON " + err.Error()}
			return
		}
		if err := dec.Decode(&obj); err != nil || obj == nil {
			f.topErr = []string{"staying in raw JSON: it must be one JSON object to go back to the fields"}
			return
		}
	}
	index := map[string]int{}
	for i, fd := range f.fields {
		index[fd.name] = i
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		i, ok := index[k]
		if !ok {
			f.topErr = []string{"staying in raw JSON: " + k + " is not a field of the form"}
			return
		}
		if err := f.fields[i].set(obj[k], true); err != nil {
			f.topErr = []string{"staying in raw JSON: " + k + ": " + err.Error()}
			return
		}
	}
	for i := range f.fields {
		f.fields[i].clear()
		f.fields[i].err = ""
	}
	for _, k := range keys {
		_ = f.fields[index[k]].set(obj[k], false)
	}
	f.rawArea.Blur()
	f.raw = false
	if len(f.fields) > 0 {
		f.fields[f.focus].focus()
	}
}
