package form

// Arguments of a prompt or a resource template: the same form
// as a call's, with its own verb ("get prompt", "read template"), and completion
// suggestions a server offers for a text field (completion/complete). The root
// asks the server (debounced, through session.Manager.Complete) for the value the
// focused field holds and hands the values in with SetSuggestions; ctrl+n puts the
// next one in the field. Suggestions are server text: shown escaped, and only a
// value a text input can show as is is ever put into the field.

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/airlock-mcp/airlock/ui/dialog/wrap"
	"github.com/airlock-mcp/airlock/ui/safetext"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// MaxSuggestionsShown bounds the suggestions listed under a field.
const MaxSuggestionsShown = 8

// suggestions are a server's completion values for one field.
type suggestions struct {
	values []string
	more   bool
	next   int // the value ctrl+n puts in next
}

// NewFor builds a form for a server's named thing that is not a tool call (a
// prompt's or a resource template's arguments): the header says "verb server ›
// name", and ctrl+s submits the arguments like a call's.
func NewFor(verb, server, name string, schema json.RawMessage, st theme.Styles) Form {
	f := newForm(st, modeCall, DefaultKeyMap())
	f.verb = verb
	f.keys.Submit.SetHelp("ctrl+s", strings.TrimSpace(verb))
	f.server, f.tool = server, name
	f.build(schema)
	return f
}

// Focused returns the focused field's name and value when it is a text field
// (the only kind completions are asked for).
func (f Form) Focused() (name, value string, ok bool) {
	if f.raw || f.focus >= len(f.fields) || f.mode != modeCall {
		return "", "", false
	}
	fd := f.fields[f.focus]
	if fd.kind != kindText {
		return "", "", false
	}
	return fd.name, fd.input.Value(), true
}

// Values returns every text field's current value (the arguments already
// filled in, for a completion's context).
func (f Form) Values() map[string]string {
	out := map[string]string{}
	for _, fd := range f.fields {
		if fd.kind == kindText && fd.input.Value() != "" {
			out[fd.name] = fd.input.Value()
		}
	}
	return out
}

// SetSuggestions shows values under the field called name (nil clears them).
func (f *Form) SetSuggestions(name string, values []string, more bool) {
	if f.suggest == nil {
		f.suggest = map[string]*suggestions{}
	}
	if len(values) == 0 {
		delete(f.suggest, name)
	} else {
		f.suggest[name] = &suggestions{values: values, more: more}
	}
	f.updateKeys()
	f.layout(true)
}

// takeSuggestion puts the focused field's next suggestion in it, skipping values
// a text input cannot show as is.
func (f *Form) takeSuggestion() {
	name, _, ok := f.Focused()
	s := f.suggest[name]
	if !ok || s == nil {
		return
	}
	for range s.values {
		v := s.values[s.next%len(s.values)]
		s.next++
		if safeInline(v) {
			f.fields[f.focus].input.SetValue(v)
			f.fields[f.focus].input.CursorEnd()
			return
		}
	}
}

// suggestionLines lists the focused field's suggestions, escaped.
func (f Form) suggestionLines(fd *field) []string {
	s := f.suggest[fd.name]
	if s == nil || fd.kind != kindText {
		return nil
	}
	shown := s.values
	if len(shown) > MaxSuggestionsShown {
		shown = shown[:MaxSuggestionsShown]
	}
	parts := make([]string, len(shown))
	for i, v := range shown {
		parts[i] = wrap.Inline(safetext.Limit(v, maxNameBytes), f.mark)
	}
	text := strings.Join(parts, f.st.Muted.Render(" · "))
	if rest := len(s.values) - len(shown); rest > 0 || s.more {
		more := "more"
		if rest > 0 {
			more = strconv.Itoa(rest) + " more"
		}
		text += f.st.Muted.Render(" · … " + more)
	}
	return wrap.Hang(text, f.iw, "    "+f.st.Muted.Render("suggested (ctrl+n): "))
}
