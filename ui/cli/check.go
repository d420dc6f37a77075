// Package cli renders airlock's command-line output: the `check` report (JSON and a
// readable table), the y/N prompt of `airlock call`, and call results. Every
// server-controlled string passes safetext before it is written; JSON output carries
// the raw values, with every control, bidi and zero-width character a \u escape.
package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/safetext"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// Exit codes of `airlock check` (docs/design.md).
const (
	ExitOK           = 0
	ExitConfig       = 1
	ExitServerFailed = 3
	// ExitHazard is returned by `check --fail-on` when a named hazard exists.
	ExitHazard = 4
)

// ReportSchemaVersion is the schema_version of `check --format json`. It grows when
// a key is removed or changes meaning; new keys may appear without it.
const ReportSchemaVersion = 1

// Report is the `check --json` object.
type Report struct {
	SchemaVersion int `json:"schema_version"`
	// Source is "live" (servers connected) or "snapshot" (check --snapshot).
	Source string `json:"source"`
	// Config is the config file the report is about ("" when built in code).
	Config  string         `json:"config"`
	Servers []ServerReport `json:"servers"`
	Tools   []ToolReport   `json:"tools"`
	Hazards []HazardReport `json:"hazards"`
	// Drift lists the differences from the snapshot of check --drift.
	Drift   []model.DriftFinding `json:"drift"`
	Verdict Verdict              `json:"verdict"`
	// Notes are airlock's own remarks about the run (a snapshot server the config
	// no longer has, ...).
	Notes []string `json:"notes,omitempty"`
	// Policy is what the managed policy files set (nil: none applied).
	Policy *PolicyReport `json:"policy,omitempty"`
	// Warnings are what airlock sees wrong around it, though no server is at fault:
	// an agent that gives up on a call before approval_timeout (agentlimits.go).
	// They do not change the exit code.
	Warnings []Warning `json:"warnings,omitempty"`
	// Suggestions are labels the config may want: a server that looks like a
	// persistent store and is not labelled so. They change no exit code.
	Suggestions []Warning `json:"suggestions,omitempty"`
}

// Warning is one entry of Report.Warnings, at the config line it is about.
type Warning struct {
	Message  string    `json:"message"`
	Location *Location `json:"location,omitempty"`
}

// ServerReport is one entry of Report.Servers.
type ServerReport struct {
	Name   string            `json:"name"`
	Status model.Status      `json:"status"`
	Error  string            `json:"error"`
	Trust  trust.ServerTrust `json:"trust"`
	// TrustSource is "policy: FILE:LINE" when the managed policy set the trust.
	TrustSource         string   `json:"trust_source,omitempty"`
	Protocol            string   `json:"protocol"`
	InstructionsChanged bool     `json:"instructions_changed"`
	Notices             []string `json:"notices,omitempty"`
	// RuleErrors are the config's rules that can never match the listing (each
	// names the rule and its line); any fails the check.
	RuleErrors []string  `json:"rule_errors,omitempty"`
	Location   *Location `json:"location,omitempty"`
	// Env names the environment variables a stdio server receives (never values).
	Env []string `json:"env,omitempty"`
	// Sandbox is the server's fence: what was asked for and what was applied.
	Sandbox SandboxReport `json:"sandbox"`
	// Resources, ResourceTemplates and Prompts are what the server lists besides
	// tools (empty when it offers none, or the report comes from a snapshot).
	Resources         []model.ResourceInfo         `json:"resources"`
	ResourceTemplates []model.ResourceTemplateInfo `json:"resource_templates"`
	Prompts           []model.PromptInfo           `json:"prompts"`
	// ruleErrs are RuleErrors with the config line of each, for the CI formats.
	ruleErrs []ruleErr
	// offers* say the server declared the capability (the table's "-" otherwise).
	offersResources, offersPrompts bool
}

// SandboxReport is a server's sandbox as the launcher reported it: requested and
// applied, the network setting and folders asked for, and what was applied or why
// not (detail). A server with no sandbox asked for has requested false.
type SandboxReport struct {
	Requested bool     `json:"requested"`
	Applied   bool     `json:"applied"`
	Network   string   `json:"network"`
	Read      []string `json:"read"`
	Write     []string `json:"write"`
	Detail    string   `json:"detail"`
}

func sandboxReport(f trust.Fence) SandboxReport {
	return SandboxReport{Requested: f.Requested, Applied: f.Applied, Network: f.Network, Read: orEmpty(f.Read), Write: orEmpty(f.Write), Detail: f.Detail}
}

// MarshalJSON writes read and write as lists, empty rather than null.
func (s SandboxReport) MarshalJSON() ([]byte, error) {
	type plain SandboxReport
	p := plain(s)
	p.Read, p.Write = orEmpty(p.Read), orEmpty(p.Write)
	return json.Marshal(p)
}

// fence is the report's sandbox as the trust value it came from.
func (s SandboxReport) fence() trust.Fence {
	return trust.Fence{Requested: s.Requested, Applied: s.Applied, Network: s.Network, Read: s.Read, Write: s.Write, Detail: s.Detail}
}

// ToolReport is one entry of Report.Tools.
type ToolReport struct {
	Server    string `json:"server"`
	Name      string `json:"name"`
	Qualified string `json:"qualified"`
	// ServedName is the name the gateway serves the tool under: Qualified when
	// that matches ^[A-Za-z0-9_-]{1,64}$ within [gateway] name_budget, else a
	// mapped name; "" when it cannot be served under any name.
	ServedName string          `json:"served_name"`
	Tier       trust.Tier      `json:"tier"`
	Declared   json.RawMessage `json:"declared"`
	Effective  trust.Effective `json:"effective"`
	Legs       []trust.Leg     `json:"legs"`
	// Persistent says the tool writes to a store labelled persistent (a tainted
	// context asks before it whatever policy or grants say).
	Persistent bool         `json:"persistent,omitempty"`
	Policy     trust.Action `json:"policy"`
	// PolicySource is "policy: FILE:LINE" when the managed policy holds the
	// tool's action (its own entry or its tier's).
	PolicySource string         `json:"policy_source,omitempty"`
	Pin          trust.PinState `json:"pin"`
	Reasons      []string       `json:"reasons"`
	Location     *Location      `json:"location,omitempty"`
	// Rules are the tool's argument rules from the config (docs/rules.md); omitted
	// when it has none. Remembered rules are listed by `airlock rules list`.
	Rules []RuleReport `json:"rules,omitempty"`
}

// RuleReport is one argument rule of a tool.
type RuleReport struct {
	Name   string       `json:"name"`
	Source string       `json:"source,omitempty"`
	Policy trust.Action `json:"policy"`
	Reason string       `json:"reason,omitempty"`
	When   []CondReport `json:"when"`
}

// CondReport is one condition of a rule: a field, a matcher and its operands.
type CondReport struct {
	Field   string `json:"field"`
	Matcher string `json:"matcher"`
	Values  []any  `json:"values"`
}

func ruleReports(rules []trust.Rule) []RuleReport {
	var out []RuleReport
	for _, r := range rules {
		rr := RuleReport{Name: r.Name, Source: r.Source, Policy: r.Policy, Reason: r.Reason, When: []CondReport{}}
		for _, c := range r.When {
			rr.When = append(rr.When, CondReport{Field: c.Field, Matcher: string(c.Kind), Values: c.Values})
		}
		out = append(out, rr)
	}
	return out
}

// NewReport builds the report of a snapshot, with no config locations, fix hints,
// drift or rule (see Build for those).
// PolicyReport is the managed policy in a report: its files and each value they
// set, with its source.
type PolicyReport struct {
	Files []string        `json:"files"`
	Set   []PolicySetting `json:"set"`
}

// PolicySetting is one value a policy file set.
type PolicySetting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

func NewReport(s *model.Snapshot) Report {
	r := Report{SchemaVersion: ReportSchemaVersion, Source: "live", Servers: []ServerReport{}, Tools: []ToolReport{}, Hazards: []HazardReport{}, Drift: []model.DriftFinding{}}
	for _, h := range s.Hazards {
		r.Hazards = append(r.Hazards, HazardReport{Hazard: h, ID: HazardID(h), Fixes: []FixHint{}})
	}
	for _, sv := range s.Servers {
		sr := ServerReport{
			Name:                sv.Name,
			Status:              sv.Status,
			Trust:               sv.Trust,
			TrustSource:         sv.TrustSource,
			Protocol:            sv.Protocol,
			InstructionsChanged: sv.InstructionsChanged,
			Notices:             sv.Notices,
			Env:                 sv.Env,
			Sandbox:             sandboxReport(sv.Fence),
			Resources:           orEmpty(sv.Resources),
			ResourceTemplates:   orEmpty(sv.ResourceTemplates),
			Prompts:             orEmpty(sv.Prompts),
			offersResources:     sv.OffersResources,
			offersPrompts:       sv.OffersPrompts,
		}
		if sv.Err != nil {
			sr.Error = sv.Err.Error()
		}
		for _, e := range sv.RuleErrors {
			sr.RuleErrors = append(sr.RuleErrors, e.Text)
			sr.ruleErrs = append(sr.ruleErrs, ruleErr{RuleError: e})
		}
		r.Servers = append(r.Servers, sr)
	}
	for _, t := range s.Tools {
		declared := t.Declared.Raw
		if len(declared) == 0 || !json.Valid(declared) {
			declared = json.RawMessage("null")
		}
		legs := t.Class.Legs
		if legs == nil {
			legs = []trust.Leg{}
		}
		served, _ := s.ServedName(t)
		policySource := ""
		if t.Managed.Holds() {
			policySource = t.Managed.Source
		}
		r.Tools = append(r.Tools, ToolReport{
			PolicySource: policySource,
			Server:       t.Ref.Server,
			Name:         t.Ref.Tool,
			Qualified:    t.Ref.Qualified(),
			ServedName:   served,
			Tier:         t.Class.Tier,
			Declared:     declared,
			Effective:    t.Class.Effective,
			Legs:         legs,
			Persistent:   t.Class.Persistent,
			Policy:       t.Class.Action,
			Pin:          t.Pin,
			Reasons:      t.Class.Reasons,
			Rules:        ruleReports(t.Rules),
		})
	}
	return r
}

// ExitCode is 0 when every server is ready, 3 when any failed, and 1 when a rule of
// the config can never match (the --fail-on rule is the Verdict's).
func (r Report) ExitCode() int {
	for _, s := range r.Servers {
		if s.Status != model.StatusReady {
			return ExitServerFailed
		}
	}
	for _, s := range r.Servers {
		if len(s.RuleErrors) > 0 {
			return ExitConfig
		}
	}
	return ExitOK
}

// WriteJSON writes the report as one indented JSON object.
func (r Report) WriteJSON(w io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := w.Write(EscapeJSON(b.Bytes()))
	return err
}

// EscapeJSON returns JSON text with every C0 and C1 control, DEL, line or paragraph
// separator and format character (bidi controls, zero-width characters, BOM, soft
// hyphen, tag characters: Unicode category Cf) written as a \u escape. Outside
// strings JSON is ASCII without these, so the rewrite is only ever inside a string and
// the value decodes unchanged. Invalid UTF-8 (not produced by encoding/json) becomes
// \ufffd.
func EscapeJSON(js []byte) []byte {
	out := make([]byte, 0, len(js))
	for i := 0; i < len(js); {
		c, size := utf8.DecodeRune(js[i:])
		if c == utf8.RuneError && size == 1 {
			out = append(out, `\ufffd`...)
			i++
			continue
		}
		if c < ' ' && c != '\n' || c == 0x7f || c >= 0x80 && c <= 0x9f || c == 0x2028 || c == 0x2029 || unicode.Is(unicode.Cf, c) {
			if c > 0xffff {
				r1, r2 := utf16.EncodeRune(c)
				out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
			} else {
				out = fmt.Appendf(out, `\u%04x`, c)
			}
		} else {
			out = append(out, js[i:i+size]...)
		}
		i += size
	}
	return out
}

// WriteText writes the report as readable tables: servers, tools with tier glyph and
// word, and hazards with their legs. Server-controlled text is escaped.
func (r Report) WriteText(w io.Writer) error {
	e := safetext.Inline
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATUS\tTRUST\tSANDBOX\tPROTOCOL\tTOOLS\tRESOURCES\tTEMPLATES\tPROMPTS")
	counts := map[string]int{}
	for _, t := range r.Tools {
		counts[t.Server]++
	}
	for _, s := range r.Servers {
		status := s.Status.String()
		if s.Status == model.StatusReady {
			status = "✓ ready"
		} else if s.Status == model.StatusFailed {
			status = "✗ failed"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s\t%s\t%d\t%s\t%s\t%s\n", s.Name, status, theme.TrustGlyph(s.Trust), s.Trust, trust.FenceColumn(s.Sandbox.fence()), orDash(e(s.Protocol)), counts[s.Name],
			count(s.offersResources, len(s.Resources)), count(s.offersResources, len(s.ResourceTemplates)), count(s.offersPrompts, len(s.Prompts)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Servers {
		if s.TrustSource != "" {
			fmt.Fprintf(w, "  %s: trust %s (%s)\n", s.Name, s.Trust, e(s.TrustSource))
		}
		if s.Error != "" {
			fmt.Fprintf(w, "  %s: %s\n", s.Name, e(s.Error))
		}
		if s.InstructionsChanged {
			fmt.Fprintf(w, "  %s: instructions changed since pinned; every tool is blocked until reviewed\n", s.Name)
		}
		for _, n := range s.Notices {
			fmt.Fprintf(w, "  %s: %s\n", s.Name, e(n))
		}
		for _, n := range s.RuleErrors {
			fmt.Fprintf(w, "  %s: error: %s\n", s.Name, e(n))
		}
		if len(s.Env) > 0 {
			fmt.Fprintf(w, "  %s: environment: %s\n", s.Name, e(strings.Join(s.Env, " ")))
		}
		if f := s.Sandbox.fence(); f.Requested && !f.Applied {
			fmt.Fprintf(w, "  %s: warning: %s\n", s.Name, e(trust.FenceWords(f)))
		} else if f.Requested {
			fmt.Fprintf(w, "  %s: %s\n", s.Name, e(trust.FenceWords(f)))
		}
	}
	if len(r.Tools) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tTIER\tPOLICY\tLEGS\tPIN")
		tools := slices.Clone(r.Tools)
		sort.SliceStable(tools, func(i, j int) bool { return tools[i].Tier > tools[j].Tier })
		for _, t := range tools {
			legs := make([]string, len(t.Legs))
			for i, l := range t.Legs {
				legs[i] = string(l)
			}
			if t.Persistent {
				legs = append(legs, string(trust.LegPersistent))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e(t.Qualified), theme.TierLabel(t.Tier), t.Policy, orDash(strings.Join(legs, ",")), t.Pin)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, t := range r.Tools {
			if t.PolicySource != "" {
				fmt.Fprintf(w, "  %s: policy %s (%s)\n", e(t.Qualified), t.Policy, e(t.PolicySource))
			}
			if t.ServedName != "" && t.ServedName != t.Qualified {
				fmt.Fprintf(w, "  %s: agents call it %s (the gateway's name: its own is no name every agent client accepts)\n", e(t.Qualified), t.ServedName)
			}
		}
	}
	if r.Policy != nil {
		fmt.Fprintf(w, "team policy: %s\n", e(strings.Join(r.Policy.Files, ", ")))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", e(n))
	}
	for _, x := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", e(x.Message))
	}
	for _, x := range r.Suggestions {
		fmt.Fprintf(w, "hint: %s\n", e(x.Message))
	}
	writeDriftText(w, r.Drift)
	fmt.Fprintln(w)
	if len(r.Hazards) == 0 {
		fmt.Fprintln(w, "No toolset hazards.")
		return nil
	}
	for _, h := range r.Hazards {
		guard := trust.GuardedMeaning
		if h.Unguarded {
			guard = trust.UnguardedMeaning
		}
		if h.Baselined {
			guard += " (accepted in the baseline)"
		} else if h.BaselineChange != "" {
			guard += " (changed since the baseline: " + h.BaselineChange + ")"
		}
		fmt.Fprintf(w, "%s %s %s — %s\n", theme.SeverityGlyph(h.Severity), strings.ToUpper(string(h.Severity)), h.Kind, guard)
		fmt.Fprintf(w, "  %s\n", e(h.Summary))
		keys := make([]string, 0, len(h.Legs))
		for k := range h.Legs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			names := make([]string, len(h.Legs[k]))
			for i, n := range h.Legs[k] {
				names[i] = e(trust.LegName(n)) + unaskedMark(h.Hazard, n)
			}
			fmt.Fprintf(w, "  %-18s %s\n", k+":", shortJoin(names, 6))
		}
		writeFixesText(w, h.Fixes)
	}
	return nil
}

// count is n, or "-" when the server does not offer that kind at all.
func count(offers bool, n int) string {
	if !offers && n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// orEmpty keeps a JSON list a list ([]) when there is nothing in it.
func orEmpty[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func shortJoin(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s, … (+%d more)", strings.Join(items[:n], ", "), len(items)-n)
}

// unaskedMark is " (runs unasked)" for a member of h's legs that runs without
// asking (the legs list those first), else "".
func unaskedMark(h trust.Hazard, qualified string) string {
	if _, ok := slices.BinarySearch(h.Unasked, qualified); ok {
		return " (runs unasked)"
	}
	return ""
}
