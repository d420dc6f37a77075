package form

import (
	"encoding/json"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/internal/keytest"
	"github.com/airlock-mcp/airlock/ui/theme"
)

func plain() theme.Styles { return theme.New(true, true) }

// allKinds has one property of every kind the form knows.
const allKinds = `{
  "type": "object",
  "properties": {
    "title":   {"type": "string", "description": "The note's one-line title."},
    "weight":  {"type": "number", "description": "How much it matters."},
    "count":   {"type": "integer", "default": 3},
    "urgent":  {"type": "boolean"},
    "kind":    {"type": "string", "enum": ["personal", "work", "other"], "default": "work"},
    "tags":    {"type": "array", "items": {"type": "string"}},
    "meta":    {"type": "object", "properties": {"color": {"type": "string"}}}
  },
  "required": ["title", "count"]
}`

func tool(schema string) model.ToolInfo {
	return model.ToolInfo{
		Ref:         trust.Ref{Server: "notes", Tool: "create_note"},
		InputSchema: json.RawMessage(schema),
	}
}

func press(name string) tea.KeyPressMsg { return keytest.Press(name) }

// typed is one key press per rune of s.
func typed(s string) []tea.Msg { return keytest.Type(s) }

func keys(names ...string) []tea.Msg {
	var msgs []tea.Msg
	for _, n := range names {
		msgs = append(msgs, press(n))
	}
	return msgs
}

func seq(parts ...[]tea.Msg) []tea.Msg {
	var out []tea.Msg
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// run sends msgs in order and returns the form and the first action. The
// commands returned are cursor and clipboard work for a program; the form
// needs none of them to reach a decision, so they are not run.
func run(f Form, msgs ...tea.Msg) (Form, Action) {
	return keytest.Run(f, Form.Update, msgs...)
}

func text(v string) string { return ansi.Strip(v) }

// flat is the stripped view as one line of words, frame removed.
func flat(v string) string { return keytest.Flat(v) }
