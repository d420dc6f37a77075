package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

// Asker answers servers' requests of the person (elicitation, sampling) for the
// commands without a TUI. Without a terminal (Interactive false) it declines at once
// and says so on Out, so that a server never waits for an answer nobody can give.
// On a terminal it shows the whole request, escaped, and asks on In; Drain, when
// set, discards what was typed ahead before each question, so that keys typed
// before the person could read it never answer it.
type Asker struct {
	In          io.Reader
	Out         io.Writer
	Interactive bool
	Drain       func()
	// Trust names each server's trust for the heading ("" when unknown).
	Trust func(server string) string
}

var _ model.Asker = Asker{}

func (a Asker) heading(server, what string) {
	t := ""
	if a.Trust != nil {
		if s := a.Trust(server); s != "" {
			t = " (" + s + ")"
		}
	}
	fmt.Fprintf(a.Out, "\nairlock: server %s%s %s\n", safetext.Inline(server), t, what)
	fmt.Fprintln(a.Out, "  (this request comes from the server; it is not an airlock approval)")
}

func (a Asker) ask(ctx context.Context, prompt string) (string, error) {
	if a.Drain != nil {
		a.Drain()
	}
	fmt.Fprint(a.Out, prompt)
	line, err := readLine(ctx, a.In)
	if err != nil {
		fmt.Fprintln(a.Out)
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// Elicit implements model.Asker.
func (a Asker) Elicit(ctx context.Context, e *model.Elicitation) (string, map[string]any, error) {
	a.heading(e.Server, "asks you for input")
	fmt.Fprintln(a.Out, safetext.Gutter(e.Message, "  │ "))
	if e.Mode == "url" {
		fmt.Fprintf(a.Out, "  address: %s\n", safetext.Inline(e.URL))
	}
	if !a.Interactive {
		fmt.Fprintln(a.Out, "Not a terminal: nobody can answer, so the request is declined.")
		return "decline", nil, nil
	}
	if e.Mode == "url" {
		line, err := a.ask(ctx, "Open that address yourself and go on? [y/N] ")
		if err != nil || !yes(line) {
			return "decline", nil, nil
		}
		return "accept", nil, nil
	}
	fields, err := elicitFields(e.Schema)
	if err != nil {
		fmt.Fprintf(a.Out, "airlock cannot ask for this schema here (%s): declined.\n", safetext.Inline(err.Error()))
		return "decline", nil, nil
	}
	content := map[string]any{}
	for _, f := range fields {
		for tries := 0; ; tries++ {
			line, err := a.ask(ctx, "  "+f.prompt()+": ")
			if err != nil {
				return "cancel", nil, nil
			}
			if strings.TrimSpace(line) == "" && !f.required {
				break
			}
			v, perr := f.parse(line)
			if perr == nil {
				content[f.name] = v
				break
			}
			fmt.Fprintf(a.Out, "  %s\n", safetext.Inline(perr.Error()))
			if tries == 2 {
				fmt.Fprintln(a.Out, "Declined.")
				return "decline", nil, nil
			}
		}
	}
	line, err := a.ask(ctx, "Send these answers to "+safetext.Inline(e.Server)+"? [y/N] ")
	if err != nil || !yes(line) {
		return "decline", nil, nil
	}
	return "accept", content, nil
}

// Sample implements model.Asker.
func (a Asker) Sample(ctx context.Context, r *model.SamplingRequest) (model.SamplingAnswer, error) {
	a.heading(r.Server, "asks for an LLM completion (sampling)")
	WriteSampling(a.Out, r)
	if !a.Interactive {
		fmt.Fprintln(a.Out, "Not a terminal: nobody can write a reply, so the sampling request is declined.")
		return model.SamplingAnswer{Decline: true}, nil
	}
	line, err := a.ask(ctx, "Write the reply the server gets as the model's answer.\nOne line; an empty line declines:\n> ")
	if err != nil || strings.TrimSpace(line) == "" {
		fmt.Fprintln(a.Out, "Declined.")
		return model.SamplingAnswer{Decline: true}, nil
	}
	return model.SamplingAnswer{Reply: line}, nil
}

// WriteSampling writes everything a sampling request carries, escaped, multi-line
// text in a gutter, image and audio as a placeholder.
func WriteSampling(w io.Writer, r *model.SamplingRequest) {
	e := safetext.Inline
	if r.SystemPrompt != "" {
		fmt.Fprintln(w, "  system prompt:")
		fmt.Fprintln(w, safetext.Gutter(r.SystemPrompt, "    │ "))
	} else {
		fmt.Fprintln(w, "  system prompt: none")
	}
	for i, m := range r.Messages {
		fmt.Fprintf(w, "  message %d of %d (%s):\n", i+1, len(r.Messages), e(m.Role))
		for _, p := range m.Parts {
			switch p.Kind {
			case "text":
				fmt.Fprintln(w, safetext.Gutter(p.Text, "    │ "))
			case "image", "audio":
				fmt.Fprintf(w, "    │ [%s %s, %d bytes — not shown]\n", p.Kind, e(p.MIME), p.Size)
			default:
				fmt.Fprintf(w, "    │ %s:\n", e(p.Kind))
				fmt.Fprintln(w, safetext.Gutter(p.Text, "    │ "))
			}
		}
	}
	ic := r.IncludeContext
	if ic == "" {
		ic = "none"
	}
	fmt.Fprintf(w, "  include context: %s (airlock includes none)\n", e(ic))
	var prefs []string
	if len(r.ModelHints) > 0 {
		prefs = append(prefs, "hints "+e(strings.Join(r.ModelHints, ", ")))
	}
	for _, p := range []struct {
		n string
		v float64
	}{{"cost", r.CostPriority}, {"speed", r.SpeedPriority}, {"intelligence", r.IntelligencePriority}} {
		if p.v != 0 {
			prefs = append(prefs, p.n+" "+strconv.FormatFloat(p.v, 'g', 3, 64))
		}
	}
	if len(prefs) == 0 {
		prefs = []string{"none"}
	}
	fmt.Fprintf(w, "  model preferences: %s\n", strings.Join(prefs, "; "))
	fmt.Fprintf(w, "  max tokens: %d\n", r.MaxTokens)
	if r.Temperature != 0 {
		fmt.Fprintf(w, "  temperature: %g\n", r.Temperature)
	}
	if len(r.StopSequences) > 0 {
		fmt.Fprintf(w, "  stop sequences: %s\n", e(strings.Join(r.StopSequences, " | ")))
	}
	fmt.Fprintf(w, "  tools offered: %d%s\n", len(r.Tools), map[bool]string{true: " (airlock runs none)"}[len(r.Tools) > 0])
	for _, t := range r.Tools {
		fmt.Fprintf(w, "    - %s\n", e(t.Name))
		if t.Description != "" {
			fmt.Fprintln(w, safetext.Gutter(t.Description, "      │ "))
		}
	}
	if r.Metadata != "" {
		fmt.Fprintln(w, "  metadata:")
		fmt.Fprintln(w, safetext.Gutter(r.Metadata, "    │ "))
	}
}

func yes(s string) bool {
	s = strings.TrimSpace(s)
	return s == "y" || s == "Y" || s == "yes"
}

// elicitField is one property of a flat elicitation schema.
type elicitField struct {
	name     string
	typ      string
	enum     []string
	required bool
	title    string
}

func (f elicitField) prompt() string {
	p := safetext.Inline(f.name)
	if f.title != "" && f.title != f.name {
		p += " — " + safetext.Inline(f.title)
	}
	kind := f.typ
	if len(f.enum) > 0 {
		kind = "one of " + safetext.Inline(strings.Join(f.enum, "|"))
	}
	if f.required {
		kind += ", required"
	} else {
		kind += ", empty skips"
	}
	return p + " (" + kind + ")"
}

func (f elicitField) parse(s string) (any, error) {
	s = strings.TrimSpace(s)
	if len(f.enum) > 0 {
		if slices.Contains(f.enum, s) {
			return s, nil
		}
		return nil, fmt.Errorf("want one of %s", strings.Join(f.enum, ", "))
	}
	switch f.typ {
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("want an integer")
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("want a number")
		}
		return n, nil
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("want yes or no")
	}
	if s == "" {
		return nil, fmt.Errorf("a value is required")
	}
	return s, nil
}

// elicitFields reads a flat elicitation schema's properties, required ones first,
// then by name.
func elicitFields(raw json.RawMessage) ([]elicitField, error) {
	var sch struct {
		Properties map[string]struct {
			Type  string   `json:"type"`
			Title string   `json:"title"`
			Enum  []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &sch); err != nil {
			return nil, fmt.Errorf("the schema is not a flat object of primitive fields")
		}
	}
	var out []elicitField
	for name, p := range sch.Properties {
		switch p.Type {
		case "string", "integer", "number", "boolean":
		default:
			return nil, fmt.Errorf("field %s has type %q", name, p.Type)
		}
		out = append(out, elicitField{name: name, typ: p.Type, enum: p.Enum, required: slices.Contains(sch.Required, name), title: p.Title})
	}
	slices.SortFunc(out, func(a, b elicitField) int {
		if a.required != b.required {
			if a.required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	return out, nil
}
