package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/tomlw"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

// Location is a place in the config file: the table of a server or a tool.
type Location struct {
	File string `json:"file"`
	// Line is from 1; 0 (left out) when the file does not name the server or tool.
	Line int `json:"line,omitempty"`
}

// HazardReport is one hazard of the report with what CI needs around it.
type HazardReport struct {
	trust.Hazard
	// ID identifies the hazard as it is (its kind and every tool of every leg): a
	// baseline entry of this ID accepts it while it is no more severe and no less
	// guarded than the entry, and a tool joining it makes it new.
	ID string `json:"id"`
	// Baselined is true when --baseline accepted this hazard: it never fails the run.
	Baselined bool `json:"baselined"`
	// BaselineChange says how the hazard is worse than the baseline's entry of the
	// same ID ("now unguarded; the baseline had it guarded"): such a hazard is not
	// accepted. "" when the baseline has no entry or accepts it.
	BaselineChange string `json:"baseline_change,omitempty"`
	// Fixes are the smallest config changes that break (or guard) it, verified.
	Fixes    []FixHint `json:"fixes"`
	Location *Location `json:"location,omitempty"`
}

// FixHint is one fix with the TOML to put in the config.
type FixHint struct {
	trust.Fix
	// Text says the fix in words ("deny mail__send_email").
	Text string `json:"text"`
	// TOML is the table headers and keys to set (replace a key the table already has).
	TOML string `json:"toml"`
}

// Verdict is the outcome of the run and why.
type Verdict struct {
	// FailOn is the --fail-on rule as given ("" when none).
	FailOn string `json:"fail_on"`
	// Failed is true when the exit code is not 0.
	Failed   bool `json:"failed"`
	ExitCode int  `json:"exit_code"`
	// Matched lists what the rule matched: hazard IDs, and "drift" findings as
	// "drift:KIND:SERVER[:TOOL]".
	Matched []string `json:"matched"`
}

// MaxFixedHazards bounds the hazards that get fix hints: each costs a few
// reclassifications of the whole toolset, and a hostile listing can describe
// thousands of shadowing hazards.
const MaxFixedHazards = 50

// Input is what Build needs beyond the snapshot.
type Input struct {
	// Source is "live" or "snapshot".
	Source string
	// Policy is the config's, for fix hints.
	Policy trust.Policy
	// Locations of the config's servers and tools (nil: none).
	Locations *config.Locations
	Drift     []model.DriftFinding
	Notes     []string
	// Warnings are said in every format and change no exit code.
	Warnings []string
	// Policy is what the managed policy set (nil: no policy applied).
	Managed *PolicyReport
	// Baseline holds the accepted hazards (nil: none).
	Baseline Baseline
	// FailOn is the rule (nil: none) and FailOnSpec how it was written.
	FailOn     *FailOn
	FailOnSpec string
}

// Build makes the full report of a check: the snapshot's servers, tools and hazards,
// each hazard with its ID, fix hints and config location, the drift findings, and the
// verdict (exit code) under the baseline and the --fail-on rule.
func Build(s *model.Snapshot, in Input) Report {
	r := NewReport(s)
	if in.Source != "" {
		r.Source = in.Source
	}
	r.Notes = in.Notes
	r.Policy = in.Managed
	if in.Drift != nil {
		r.Drift = in.Drift
	}
	loc := func(line int) *Location {
		if in.Locations == nil || in.Locations.File == "" {
			return nil
		}
		return &Location{File: in.Locations.File, Line: line}
	}
	if in.Locations != nil {
		r.Config = in.Locations.File
	}
	for _, w := range in.Warnings {
		r.Warnings = append(r.Warnings, Warning{Message: w, Location: loc(in.Locations.Key("policy", "approval_timeout"))})
	}
	for _, w := range persistentHints(s) {
		r.Suggestions = append(r.Suggestions, Warning{Message: w.message, Location: loc(in.Locations.Server(w.server))})
	}
	for i := range r.Servers {
		sv := &r.Servers[i]
		sv.Location = loc(in.Locations.Server(sv.Name))
		for j := range sv.ruleErrs {
			e := &sv.ruleErrs[j]
			e.Location = loc(in.Locations.Rule(sv.Name, e.Tool, e.Rule))
		}
	}
	for i := range r.Tools {
		r.Tools[i].Location = loc(in.Locations.Tool(r.Tools[i].Server, r.Tools[i].Name))
	}
	for i := range r.Hazards {
		h := &r.Hazards[i]
		h.Baselined, h.BaselineChange = in.Baseline.Accepts(h.ID, h.Hazard)
		if i == MaxFixedHazards {
			r.Notes = append(r.Notes, fmt.Sprintf("fix hints are computed for the first %d hazards only (%d in all)", MaxFixedHazards, len(r.Hazards)))
		}
		if i >= MaxFixedHazards {
			continue
		}
		for _, f := range s.Fixes(in.Policy, h.Hazard) {
			h.Fixes = append(h.Fixes, FixHint{Fix: f, Text: fixText(f), TOML: fixTOML(f)})
		}
		if server, tool, ok := firstTool(h.Hazard); ok {
			h.Location = loc(in.Locations.Tool(server, tool))
		}
	}
	r.Verdict = r.verdict(in.FailOn, in.FailOnSpec)
	return r
}

// verdict decides the exit code: 3 when a server failed, else 4 when the rule matches
// a hazard that is not baselined or (with the drift term) any drift, else 0.
func (r Report) verdict(rule *FailOn, spec string) Verdict {
	v := Verdict{FailOn: spec, Matched: []string{}}
	if rule != nil {
		for _, h := range r.Hazards {
			if !h.Baselined && len(rule.Match([]trust.Hazard{h.Hazard})) > 0 {
				v.Matched = append(v.Matched, h.ID)
			}
		}
		if rule.Drift() {
			for _, d := range r.Drift {
				v.Matched = append(v.Matched, driftID(d))
			}
		}
	}
	v.ExitCode = r.ExitCode()
	if v.ExitCode == ExitOK && len(v.Matched) > 0 {
		v.ExitCode = ExitHazard
	}
	v.Failed = v.ExitCode != ExitOK
	return v
}

// HazardID is "KIND:" and 12 hex digits of a hash over the hazard's kind and every
// leg's sorted tools: the same hazard gives the same ID on every run and machine.
func HazardID(h trust.Hazard) string {
	return string(h.Kind) + ":" + hazardDigest(h)[:12]
}

func hazardDigest(h trust.Hazard) string {
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\x00", h.Kind)
	keys := make([]string, 0, len(h.Legs))
	for k := range h.Legs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		names := slices.Clone(h.Legs[k])
		sort.Strings(names)
		fmt.Fprintf(sum, "%s\x00%s\x00\x00", k, strings.Join(names, "\x00"))
	}
	return hex.EncodeToString(sum.Sum(nil))
}

func driftID(d model.DriftFinding) string {
	id := "drift:" + string(d.Kind) + ":" + d.Server
	if d.Tool != "" {
		id += ":" + d.Tool
	}
	return id
}

// Baseline is what a `check --format json` report written earlier accepted: each
// hazard ID with the severity and guarded state it had then.
type Baseline map[string]BaselineEntry

// BaselineEntry is one accepted hazard as the baseline saw it.
type BaselineEntry struct {
	// Severity is the hazard's severity then; an entry without a known severity
	// is read as the lowest (medium), so it accepts no more than that.
	Severity trust.Severity
	// Unguarded is whether the hazard was unguarded then; an entry without the
	// field is read as guarded, so it accepts only a guarded hazard.
	Unguarded bool
	// Kind and Legs are the hazard's kind and legs then (nil Legs: the entry did
	// not say). The ID is a short hash of them, and a short hash can be matched by
	// other tool names made for it: an entry that says its legs accepts only a
	// hazard with exactly those legs.
	Kind trust.HazardKind
	Legs map[string][]string
}

// Accepts reports whether the baseline accepts hazard h (whose ID is id): it has an
// entry for id (the same kind and legs) and h is no worse than the entry, that is,
// no more severe and not unguarded where the entry was guarded. When the entry is
// there but h is worse, change says how ("now unguarded; the baseline had it
// guarded"). A nil Baseline accepts nothing.
func (b Baseline) Accepts(id string, h trust.Hazard) (ok bool, change string) {
	e, found := b[id]
	if !found || e.Kind != "" && e.Kind != h.Kind || e.Legs != nil && !sameLegs(e.Legs, h.Legs) {
		return false, ""
	}
	var worse []string
	if h.Unguarded && !e.Unguarded {
		worse = append(worse, "now unguarded; the baseline had it guarded")
	}
	if severityRank(h.Severity) > severityRank(e.Severity) {
		worse = append(worse, "now "+string(h.Severity)+"; the baseline had it "+string(e.Severity))
	}
	if len(worse) > 0 {
		return false, strings.Join(worse, "; ")
	}
	return true, ""
}

// sameLegs reports whether a and b name the same tools in the same legs, in any
// order.
func sameLegs(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, as := range a {
		bs, ok := b[k]
		if !ok || len(as) != len(bs) {
			return false
		}
		as, bs = slices.Clone(as), slices.Clone(bs)
		sort.Strings(as)
		sort.Strings(bs)
		if !slices.Equal(as, bs) {
			return false
		}
	}
	return true
}

// severityRank orders severities from the least (0, medium and anything unknown)
// to the most severe.
func severityRank(s trust.Severity) int {
	switch s {
	case trust.SeverityCritical:
		return 2
	case trust.SeverityHigh:
		return 1
	}
	return 0
}

// ReadBaseline reads the accepted hazards from a `check --format json` report
// written earlier. An entry's severity and guarded state are read fail-closed: a
// missing or unknown severity is medium, a missing guarded state is guarded; an
// entry's kind and legs, where it has them, must be the hazard's.
func ReadBaseline(r io.Reader) (Baseline, error) {
	var b struct {
		SchemaVersion *int `json:"schema_version"`
		Hazards       []struct {
			ID        string              `json:"id"`
			Kind      trust.HazardKind    `json:"kind"`
			Severity  trust.Severity      `json:"severity"`
			Unguarded *bool               `json:"unguarded"`
			Legs      map[string][]string `json:"legs"`
		} `json:"hazards"`
	}
	dec := json.NewDecoder(io.LimitReader(r, 64<<20))
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("reading baseline: %w", err)
	}
	if b.SchemaVersion == nil || *b.SchemaVersion != ReportSchemaVersion {
		return nil, fmt.Errorf("baseline is not a `check --format json` report of schema_version %d", ReportSchemaVersion)
	}
	base := Baseline{}
	for _, h := range b.Hazards {
		if h.ID == "" {
			return nil, fmt.Errorf("baseline has a hazard without an id")
		}
		e := BaselineEntry{Severity: h.Severity, Unguarded: h.Unguarded != nil && *h.Unguarded, Kind: h.Kind, Legs: h.Legs}
		if severityRank(e.Severity) == 0 {
			e.Severity = trust.SeverityMedium
		}
		if prev, dup := base[h.ID]; dup {
			// The same ID twice (a file edited by hand): the stricter reading.
			e.Unguarded = e.Unguarded && prev.Unguarded
			if severityRank(prev.Severity) < severityRank(e.Severity) {
				e.Severity = prev.Severity
			}
			if e.Kind == "" {
				e.Kind = prev.Kind
			}
			if e.Legs == nil {
				e.Legs = prev.Legs
			}
			if prev.Kind != "" && prev.Kind != e.Kind || prev.Legs != nil && !sameLegs(prev.Legs, e.Legs) {
				// Two entries that disagree on what the hazard is: a kind no
				// hazard has, so that the ID accepts nothing.
				e.Kind = "(entries disagree)"
			}
		}
		base[h.ID] = e
	}
	return base, nil
}

// legOrder is the order legs are read in for a hazard's first tool.
var legOrder = []string{string(trust.LegUntrustedContent), string(trust.LegPrivateData), string(trust.LegExfiltration), trust.HazardLegDestructive, trust.HazardLegPersistent, trust.HazardLegShadowing, trust.HazardLegShadowed}

// firstTool is the tool a hazard is located at: the first tool of its first leg (one
// that runs unasked, when the leg has one: trust.Hazards lists those first).
func firstTool(h trust.Hazard) (string, string, bool) {
	for _, k := range legOrder {
		if names := h.Legs[k]; len(names) > 0 {
			server, tool, ok := strings.Cut(names[0], "__")
			return server, tool, ok
		}
	}
	return "", "", false
}

// fixText says a fix in words.
func fixText(f trust.Fix) string {
	parts := make([]string, 0, len(f.Changes))
	for _, c := range f.Changes {
		q := trust.Ref{Server: c.Server, Tool: c.Tool}.Qualified()
		switch c.Kind {
		case trust.ChangeDenyTool:
			parts = append(parts, "deny "+q)
		case trust.ChangeAskTool:
			parts = append(parts, "ask before "+q)
		case trust.ChangeAskChannel:
			verb := "reading "
			if k, _ := trust.ChannelOf(c.Tool); k == trust.KindPrompts {
				verb = "getting "
			}
			parts = append(parts, "ask before "+verb+trust.LegName(q))
		case trust.ChangeDenyChannel:
			parts = append(parts, "deny "+trust.LegName(q))
		case trust.ChangeDropToolLabel:
			parts = append(parts, "drop the "+string(c.Label)+" label of "+q)
		case trust.ChangeDropServerLabel:
			parts = append(parts, "drop the "+string(c.Label)+" label of server "+c.Server)
		case trust.ChangeFenceServer:
			parts = append(parts, "fence server "+c.Server+` with network = "none"`)
		case trust.ChangeUntrustServer:
			parts = append(parts, "untrust server "+c.Server)
		case trust.ChangeBlockServer:
			parts = append(parts, "block server "+c.Server)
		}
	}
	return strings.Join(parts, " and ")
}

// fixTOML writes a fix as config tables, one header per table, in the order the
// changes come (tomlw.Printable: a tool name that is not a bare key is quoted).
func fixTOML(f trust.Fix) string {
	type table struct {
		header string
		lines  []string
	}
	var tables []*table
	get := func(keys ...string) *table {
		h := tomlw.Printable.Table(keys...)
		for _, t := range tables {
			if t.header == h {
				return t
			}
		}
		t := &table{header: h}
		tables = append(tables, t)
		return t
	}
	labels := func(ls []trust.Leg) string {
		q := make([]string, len(ls))
		for i, l := range ls {
			q[i] = string(l)
		}
		return "labels = " + tomlw.Printable.Array(q)
	}
	for _, c := range f.Changes {
		server := []string{"servers", c.Server}
		tool := []string{"servers", c.Server, "tools", c.Tool}
		switch c.Kind {
		case trust.ChangeDenyTool:
			t := get(tool...)
			t.lines = append(t.lines, `policy = "deny"`)
		case trust.ChangeAskTool:
			t := get(tool...)
			t.lines = append(t.lines, `policy = "ask"`)
		case trust.ChangeAskChannel, trust.ChangeDenyChannel:
			k, _ := trust.ChannelOf(c.Tool)
			a := "ask"
			if c.Kind == trust.ChangeDenyChannel {
				a = "deny"
			}
			t := get(server...)
			t.lines = append(t.lines, string(k)+` = "`+a+`"`)
		case trust.ChangeDropToolLabel:
			t := get(tool...)
			t.lines = append(t.lines, labels(c.Labels))
		case trust.ChangeDropServerLabel:
			t := get(server...)
			t.lines = append(t.lines, labels(c.Labels))
		case trust.ChangeFenceServer:
			t := get("servers", c.Server, "sandbox")
			t.lines = append(t.lines, `network = "none"`)
		case trust.ChangeUntrustServer:
			t := get(server...)
			t.lines = append(t.lines, `trust = "untrusted"`)
		case trust.ChangeBlockServer:
			t := get(server...)
			t.lines = append(t.lines, `trust = "blocked"`)
		}
	}
	var b strings.Builder
	for i, t := range tables {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(t.header + "\n")
		for _, l := range t.lines {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func writeFixesText(w io.Writer, fixes []FixHint) {
	if len(fixes) == 0 {
		return
	}
	fmt.Fprintln(w, "  fix hints (each one alone; set in the config, replacing a key the table has):")
	for _, f := range fixes {
		effect := "breaks it"
		if f.Effect == trust.FixGuards {
			effect = "keeps it, but asks you first"
		}
		fmt.Fprintf(w, "    - %s (%s):\n", safetext.Inline(f.Text), effect)
		for _, l := range strings.Split(strings.TrimRight(f.TOML, "\n"), "\n") {
			if l == "" {
				fmt.Fprintln(w)
				continue
			}
			fmt.Fprintf(w, "        %s\n", safetext.Inline(l))
		}
	}
}

func writeDriftText(w io.Writer, drift []model.DriftFinding) {
	if len(drift) == 0 {
		return
	}
	fmt.Fprintf(w, "\nDrift from the snapshot (%d):\n", len(drift))
	for _, d := range drift {
		what := d.Server
		if d.Tool != "" {
			what = trust.Ref{Server: d.Server, Tool: d.Tool}.Qualified()
		}
		fmt.Fprintf(w, "  %-22s %s: %s\n", d.Kind, safetext.Inline(what), safetext.Inline(d.Detail))
		if diff := driftDiff(d); len(diff) > 0 {
			fmt.Fprintf(w, "    snapshot (-) to live (+):\n")
			for _, l := range diff {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
	}
}

// relPath is path relative to the working directory when it is below it, with
// forward slashes (what SARIF and GitHub annotations want), else the path as given.
func relPath(path string) string {
	if path == "" {
		return ""
	}
	if abs, err := filepath.Abs(path); err == nil {
		if wd, err := filepath.Abs("."); err == nil {
			if rel, err := filepath.Rel(wd, abs); err == nil && !strings.HasPrefix(rel, "..") {
				return filepath.ToSlash(rel)
			}
		}
	}
	return filepath.ToSlash(path)
}

type persistentHint struct{ server, message string }

// persistentHints are the warnings for the servers that look like persistent stores
// (trust.LooksPersistent) and are not labelled persistent, nor any of their tools:
// without the label a tainted context writes to them unasked under a grant.
func persistentHints(s *model.Snapshot) []persistentHint {
	var out []persistentHint
	for _, sv := range s.Servers {
		if sv.Trust == trust.BlockedServer || slices.Contains(sv.Labels, trust.LegPersistent) {
			continue
		}
		var names []string
		labelled := false
		for _, t := range s.Tools {
			if t.Ref.Server != sv.Name {
				continue
			}
			names = append(names, t.Ref.Tool)
			labelled = labelled || slices.Contains(t.ToolLabels, trust.LegPersistent)
		}
		word, named, ok := trust.LooksPersistent(sv.Name, names)
		if !ok || labelled {
			continue
		}
		why := "its name says " + strconv.Quote(word)
		if len(named) > 0 {
			why = "its tools " + shortJoin(named, 3)
			if word != "" {
				why = "its name says " + strconv.Quote(word) + ", " + why
			}
		}
		out = append(out, persistentHint{server: sv.Name, message: "server " + sv.Name + " looks like a persistent store (" + why + "): with labels = [\"persistent\"] in [servers." + sv.Name + "], a context that read untrusted content asks before writing to it"})
	}
	return out
}
