package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/safetext"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// Formats are the values of `check --format`.
var Formats = []string{"text", "json", "sarif", "junit", "github", "markdown", "mermaid"}

// Write writes the report in one of Formats; version is airlock's, for SARIF.
func (r Report) Write(w io.Writer, format, version string) error {
	switch format {
	case "", "text":
		if err := r.WriteText(w); err != nil {
			return err
		}
		return r.writeVerdictText(w)
	case "json":
		return r.WriteJSON(w)
	case "sarif":
		return r.WriteSARIF(w, version)
	case "junit":
		return r.WriteJUnit(w)
	case "github":
		return r.WriteGitHub(w)
	case "markdown":
		return r.WriteMarkdown(w)
	case "mermaid":
		return r.WriteMermaid(w)
	}
	return fmt.Errorf("unknown format %q (want one of %v)", format, Formats)
}

func (r Report) writeVerdictText(w io.Writer) error {
	if r.Verdict.FailOn == "" {
		return nil
	}
	if len(r.Verdict.Matched) == 0 {
		_, err := fmt.Fprintf(w, "\n--fail-on %s: nothing matched\n", safetext.Inline(r.Verdict.FailOn))
		return err
	}
	_, err := fmt.Fprintf(w, "\n--fail-on %s matched: %s\n", safetext.Inline(r.Verdict.FailOn), safetext.Inline(strings.Join(r.Verdict.Matched, ", ")))
	return err
}

// level is how serious a finding is for CI: "error" when the verdict fails on it
// (or, with no rule, for a critical hazard), "note" when the baseline accepts it,
// else "warning".
func (r Report) level(h HazardReport) string {
	switch {
	case h.Baselined:
		return "note"
	case r.matched(h.ID):
		return "error"
	case r.Verdict.FailOn == "" && h.Severity == trust.SeverityCritical:
		return "error"
	}
	return "warning"
}

func (r Report) driftLevel(d model.DriftFinding) string {
	if r.matched(driftID(d)) {
		return "error"
	}
	return "warning"
}

func (r Report) matched(id string) bool {
	for _, m := range r.Verdict.Matched {
		if m == id {
			return true
		}
	}
	return false
}

// message is a hazard in one paragraph of plain text: summary, guard, legs, the
// first fix. Server-controlled text is escaped.
func hazardMessage(h HazardReport) string { return hazardText(h, true) }

// hazardText is hazardMessage, with or without the first fix.
func hazardText(h HazardReport, firstFix bool) string {
	var b strings.Builder
	b.WriteString(string(h.Severity) + " " + string(h.Kind) + ": " + safetext.Inline(h.Summary) + ". ")
	if h.Unguarded {
		b.WriteString("UNGUARDED: every leg has a tool that runs without asking.")
	} else {
		b.WriteString("Guarded: a person is asked for at least one leg.")
	}
	if h.BaselineChange != "" {
		b.WriteString(" Changed since the baseline: " + h.BaselineChange + ".")
	}
	for _, k := range legOrder {
		if names, ok := h.Legs[k]; ok {
			marked := make([]string, len(names))
			for i, n := range names {
				marked[i] = n + unaskedMark(h.Hazard, n)
			}
			b.WriteString(" " + k + ": " + safetext.Inline(shortJoin(marked, 6)) + ".")
		}
	}
	if firstFix && len(h.Fixes) > 0 {
		b.WriteString(" Fix: " + safetext.Inline(h.Fixes[0].Text) + ".")
	}
	return b.String()
}

// driftDiff is a changed tool's definition diff, snapshot to live, as the
// TUI's rug-pull view shows it (PinDiff: escaped lines); nil for any other
// finding.
func driftDiff(d model.DriftFinding) []string {
	if d.Kind != model.DriftToolChanged || len(d.Was) == 0 || len(d.Now) == 0 {
		return nil
	}
	return PinDiff(d.Was, d.Now)
}

// sarifDriftMessage is the finding's sentence, then its definition diff.
func sarifDriftMessage(d model.DriftFinding) string {
	msg := driftMessage(d)
	if diff := driftDiff(d); len(diff) > 0 {
		msg += "\n" + strings.Join(diff, "\n")
	}
	return msg
}

// mdFence is a code fence longer than any run of backticks in lines, so
// that no line of server text ends the block.
func mdFence(lines []string) string {
	run := 2
	for _, l := range lines {
		n := 0
		for _, r := range l {
			if r == '`' {
				n++
				run = max(run, n)
			} else {
				n = 0
			}
		}
	}
	return strings.Repeat("`", run+1)
}

func driftMessage(d model.DriftFinding) string {
	what := "server " + d.Server
	if d.Tool != "" {
		what = "tool " + trust.Ref{Server: d.Server, Tool: d.Tool}.Qualified()
	}
	return "drift " + string(d.Kind) + ": " + safetext.Inline(what) + ": " + safetext.Inline(d.Detail)
}

// driftLocation is the config line of the server or tool a finding is about.
func (r Report) driftLocation(d model.DriftFinding) *Location {
	for _, t := range r.Tools {
		if d.Tool != "" && t.Server == d.Server && t.Name == d.Tool && t.Location != nil {
			return t.Location
		}
	}
	for _, s := range r.Servers {
		if s.Name == d.Server && s.Location != nil {
			return s.Location
		}
	}
	if r.Config != "" {
		return &Location{File: r.Config}
	}
	return nil
}

// ruleErr is a rule of the config that can never match, with its config line.
type ruleErr struct {
	model.RuleError
	Location *Location
}

// sarifUnfencedID is the SARIF rule of a server whose sandbox was asked for and
// not applied.
const sarifUnfencedID = "unfenced-server"

// unfencedMessage says a server runs without the sandbox asked for, escaped.
func unfencedMessage(s ServerReport) string {
	return "server " + safetext.Inline(s.Name) + ": " + safetext.Inline(trust.FenceWords(s.Sandbox.fence()))
}

// sarifRuleErrorID is the SARIF rule of a config rule that can never match.
const sarifRuleErrorID = "broken-rule"

// sarifAgentTimeoutID is the SARIF rule of Report.Warnings.
const sarifAgentTimeoutID = "agent-timeout"

// warningID is a warning's stable fingerprint: its text's SHA-256, which holds none
// of the text (an agent config's entry names are not the person's to vouch for).
func warningID(msg string) string {
	sum := sha256.Sum256([]byte(msg))
	return hex.EncodeToString(sum[:16])
}

// serverRuleErr is a rule error with the server it belongs to.
type serverRuleErr struct {
	server string
	ruleErr
}

// ruleErrs are the rule errors of every server, in the servers' order.
func (r Report) ruleErrs() []serverRuleErr {
	var out []serverRuleErr
	for _, s := range r.Servers {
		for _, e := range s.ruleErrs {
			out = append(out, serverRuleErr{server: s.Name, ruleErr: e})
		}
	}
	return out
}

// name is what the broken rule is called: its key path, or the rules of a tool.
func (e serverRuleErr) name() string {
	if e.Rule != "" {
		return e.Rule
	}
	return "servers." + e.server + ".tools." + e.Tool + ".rules"
}

// message is the rule error in one line of plain text, escaped.
func (e serverRuleErr) message() string {
	return "rule error in server " + safetext.Inline(e.server) + ": " + safetext.Inline(e.Text)
}

// --- SARIF 2.1.0 ---

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string       `json:"id"`
	Name                 string       `json:"name"`
	ShortDescription     sarifText    `json:"shortDescription"`
	FullDescription      sarifText    `json:"fullDescription"`
	Help                 sarifText    `json:"help"`
	DefaultConfiguration sarifDefault `json:"defaultConfiguration"`
}

type sarifDefault struct {
	Level string `json:"level"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool `json:"executionSuccessful"`
	ExitCode            int  `json:"exitCode"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
	BaselineState       string            `json:"baselineState,omitempty"`
	Properties          map[string]any    `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

// sarifRules are every rule a result can name: the hazard kinds, then the drift
// kinds.
var sarifRules = func() []sarifRule {
	hz := []struct {
		kind  trust.HazardKind
		level string
		short string
		full  string
	}{
		{trust.HazardLethalTrifecta, "error", "Lethal trifecta", "Some tool reads untrusted content, some reads private data and some can send data out: a prompt injection can exfiltrate private data."},
		{trust.HazardOpenWorldExfiltration, "warning", "Open-world exfiltration", "A tool reads untrusted content and a tool can send data out."},
		{trust.HazardUntrustedDestructive, "warning", "Untrusted content reaches a destructive tool", "A tool reads untrusted content and a tool can make destructive changes."},
		{trust.HazardUntrustedPersistence, "warning", "Untrusted content can persist", "A tool reads untrusted content and a tool writes to a store labelled persistent: an injected instruction can outlive the session."},
		{trust.HazardShadowing, "warning", "Tool shadowing", "A tool's description names another server's tool, which can steer a model's use of it."},
	}
	var out []sarifRule
	help := "Each result lists fix hints: the smallest config changes that break the hazard, verified by airlock. See docs/policy-as-code.md."
	for _, h := range hz {
		out = append(out, sarifRule{ID: string(h.kind), Name: ruleName(string(h.kind)), ShortDescription: sarifText{h.short}, FullDescription: sarifText{h.full}, Help: sarifText{help}, DefaultConfiguration: sarifDefault{h.level}})
	}
	for _, k := range []model.DriftKind{model.DriftServerAdded, model.DriftServerRemoved, model.DriftServerStatus, model.DriftInstructionsChanged, model.DriftToolAdded, model.DriftToolRemoved, model.DriftToolChanged, model.DriftSandboxLoosened} {
		id := "drift-" + string(k)
		out = append(out, sarifRule{ID: id, Name: ruleName(id), ShortDescription: sarifText{"Drift: " + strings.ReplaceAll(string(k), "-", " ")},
			FullDescription: sarifText{"The live servers differ from the committed snapshot (" + string(k) + ")."},
			Help:            sarifText{"Review the change, then take the snapshot again with `airlock snapshot`."}, DefaultConfiguration: sarifDefault{"warning"}})
	}
	out = append(out, sarifRule{ID: sarifUnfencedID, Name: ruleName(sarifUnfencedID), ShortDescription: sarifText{"Sandbox asked for and not applied"},
		FullDescription: sarifText{"The config asks for a sandbox for this server (required = false) and the launcher could not apply it: the server runs unfenced, and its legs count as without a sandbox."},
		Help:            sarifText{"Apply the sandbox on this system, or set required = true so that the server does not start without it. See docs/hazards.md."}, DefaultConfiguration: sarifDefault{"warning"}})
	out = append(out, sarifRule{ID: sarifRuleErrorID, Name: ruleName(sarifRuleErrorID), ShortDescription: sarifText{"Argument rule that can never match"},
		FullDescription: sarifText{"An argument rule names a field the tool's input schema does not declare, compares a type its matcher cannot, or is written for a tool the server does not list. It can never match, so the tool asks for every call and check fails."},
		Help:            sarifText{"Fix the rule's field, matcher or tool name. See docs/rules.md."}, DefaultConfiguration: sarifDefault{"error"}})
	out = append(out, sarifRule{ID: sarifAgentTimeoutID, Name: ruleName(sarifAgentTimeoutID), ShortDescription: sarifText{"An agent gives up before approval_timeout"},
		FullDescription: sarifText{"An agent CLI whose config points at airlock ends a tool call sooner than airlock waits for a person: it reports its own timeout, not the person's answer. Also said when an agent's config cannot be read."},
		Help:            sarifText{"Lower approval_timeout, or raise the agent's timeout for airlock's entry. See docs/agents.md."}, DefaultConfiguration: sarifDefault{"warning"}})
	return out
}()

// ruleName is a rule ID in PascalCase ("lethal-trifecta" -> "LethalTrifecta").
func ruleName(id string) string {
	var b strings.Builder
	for _, p := range strings.Split(id, "-") {
		if p != "" {
			b.WriteString(strings.ToUpper(p[:1]) + p[1:])
		}
	}
	return b.String()
}

func ruleIndex(id string) int {
	for i, r := range sarifRules {
		if r.ID == id {
			return i
		}
	}
	return -1
}

func sarifLocations(l *Location) []sarifLocation {
	if l == nil || l.File == "" {
		return nil
	}
	pl := sarifPhysical{ArtifactLocation: sarifArtifact{URI: sarifURI(relPath(l.File))}}
	if l.Line > 0 {
		pl.Region = &sarifRegion{StartLine: l.Line}
	}
	return []sarifLocation{{PhysicalLocation: pl}}
}

// sarifURI percent-encodes what a URI reference cannot hold literally.
func sarifURI(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~/:", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// WriteSARIF writes a SARIF 2.1.0 log: one result per hazard and per drift finding,
// located at the config's table of the hazard's first tool (or its server), and an
// error per rule that can never match, at the rule's line.
func (r Report) WriteSARIF(w io.Writer, version string) error {
	run := sarifRun{
		Tool:        sarifTool{Driver: sarifDriver{Name: "airlock", Version: version, InformationURI: "https://github.com/airlock-mcp/airlock", Rules: sarifRules}},
		Invocations: []sarifInvocation{{ExecutionSuccessful: r.Verdict.ExitCode != ExitServerFailed, ExitCode: r.Verdict.ExitCode}},
		Results:     []sarifResult{},
	}
	for _, h := range r.Hazards {
		res := sarifResult{
			RuleID:              string(h.Kind),
			RuleIndex:           ruleIndex(string(h.Kind)),
			Level:               r.level(h),
			Message:             sarifText{hazardMessage(h)},
			Locations:           sarifLocations(h.Location),
			PartialFingerprints: map[string]string{"airlockHazard/v1": h.ID},
			Properties:          map[string]any{"id": h.ID, "unguarded": h.Unguarded, "severity": h.Severity, "legs": h.Legs, "fixes": h.Fixes},
		}
		if r.hasBaseline() {
			res.BaselineState = "new"
			switch {
			case h.Baselined:
				res.BaselineState = "unchanged"
			case h.BaselineChange != "":
				res.BaselineState = "updated"
				res.Properties["baselineChange"] = h.BaselineChange
			}
		}
		run.Results = append(run.Results, res)
	}
	for _, d := range r.Drift {
		id := "drift-" + string(d.Kind)
		run.Results = append(run.Results, sarifResult{
			RuleID:              id,
			RuleIndex:           ruleIndex(id),
			Level:               r.driftLevel(d),
			Message:             sarifText{sarifDriftMessage(d)},
			Locations:           sarifLocations(r.driftLocation(d)),
			PartialFingerprints: map[string]string{"airlockDrift/v1": driftID(d)},
		})
	}
	for _, e := range r.ruleErrs() {
		run.Results = append(run.Results, sarifResult{
			RuleID:              sarifRuleErrorID,
			RuleIndex:           ruleIndex(sarifRuleErrorID),
			Level:               "error",
			Message:             sarifText{e.message()},
			Locations:           sarifLocations(e.Location),
			PartialFingerprints: map[string]string{"airlockRuleError/v1": e.name()},
		})
	}
	for _, s := range r.Servers {
		if f := s.Sandbox.fence(); f.Requested && !f.Applied {
			run.Results = append(run.Results, sarifResult{
				RuleID:              sarifUnfencedID,
				RuleIndex:           ruleIndex(sarifUnfencedID),
				Level:               "warning",
				Message:             sarifText{unfencedMessage(s)},
				Locations:           sarifLocations(s.Location),
				PartialFingerprints: map[string]string{"airlockUnfenced/v1": s.Name},
			})
		}
	}
	for _, x := range r.Warnings {
		run.Results = append(run.Results, sarifResult{
			RuleID:              sarifAgentTimeoutID,
			RuleIndex:           ruleIndex(sarifAgentTimeoutID),
			Level:               "warning",
			Message:             sarifText{safetext.Inline(x.Message)},
			Locations:           sarifLocations(x.Location),
			PartialFingerprints: map[string]string{"airlockWarning/v1": warningID(x.Message)},
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}

func (r Report) hasBaseline() bool {
	for _, h := range r.Hazards {
		if h.Baselined || h.BaselineChange != "" {
			return true
		}
	}
	return false
}

// --- JUnit XML ---

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func (s *junitSuite) add(c junitCase) {
	s.Cases = append(s.Cases, c)
	s.Tests++
	if c.Failure != nil {
		s.Failures++
	}
	if c.Skipped != nil {
		s.Skipped++
	}
}

func caseAt(c junitCase, l *Location) junitCase {
	if l != nil {
		c.File, c.Line = relPath(l.File), l.Line
	}
	return c
}

// WriteJUnit writes JUnit XML: a suite of servers (each connects), one of hazards,
// one of drift findings and, when a rule can never match, a failing case of it in a
// suite of rules. A hazard fails when the verdict's rule matches it, or,
// with no rule, always; a baselined hazard is skipped.
func (r Report) WriteJUnit(w io.Writer) error {
	servers := junitSuite{Name: "servers"}
	for _, s := range r.Servers {
		c := caseAt(junitCase{Classname: "airlock.servers", Name: safetext.Inline(s.Name) + " is ready"}, s.Location)
		if s.Status != model.StatusReady {
			c.Failure = &junitFailure{Message: s.Status.String(), Type: "server-" + s.Status.String(), Text: safetext.Inline(s.Error)}
		}
		servers.add(c)
		if f := s.Sandbox.fence(); f.Requested {
			c := caseAt(junitCase{Classname: "airlock.servers", Name: safetext.Inline(s.Name) + " is fenced"}, s.Location)
			if !f.Applied {
				c.Failure = &junitFailure{Message: "unfenced", Type: sarifUnfencedID, Text: unfencedMessage(s)}
			}
			servers.add(c)
		}
	}
	hazards := junitSuite{Name: "hazards"}
	for _, h := range r.Hazards {
		c := caseAt(junitCase{Classname: "airlock.hazards." + string(h.Kind), Name: h.ID}, h.Location)
		var body strings.Builder
		body.WriteString(hazardMessage(h) + "\n")
		for _, f := range h.Fixes {
			body.WriteString("\nfix: " + safetext.Inline(f.Text) + "\n" + lines(f.TOML))
		}
		switch {
		case h.Baselined:
			c.Skipped = &junitSkipped{Message: "accepted in the baseline"}
		case r.Verdict.FailOn == "" || r.matched(h.ID):
			msg := safetext.Inline(h.Summary)
			if h.BaselineChange != "" {
				msg = "changed since the baseline (" + h.BaselineChange + "): " + msg
			}
			c.Failure = &junitFailure{Message: msg, Type: string(h.Kind), Text: body.String()}
		default:
			c.SystemOut = body.String()
		}
		hazards.add(c)
	}
	drift := junitSuite{Name: "drift"}
	for _, d := range r.Drift {
		c := caseAt(junitCase{Classname: "airlock.drift." + string(d.Kind), Name: safetext.Inline(driftID(d))}, r.driftLocation(d))
		if r.Verdict.FailOn == "" || r.matched(driftID(d)) {
			c.Failure = &junitFailure{Message: driftMessage(d), Type: "drift-" + string(d.Kind), Text: driftMessage(d)}
		} else {
			c.SystemOut = driftMessage(d)
		}
		drift.add(c)
	}
	suites := []junitSuite{servers, hazards, drift}
	if errs := r.ruleErrs(); len(errs) > 0 {
		rules := junitSuite{Name: "rules"}
		for _, e := range errs {
			c := caseAt(junitCase{Classname: "airlock.rules", Name: safetext.Inline(e.name()) + " can match"}, e.Location)
			c.Failure = &junitFailure{Message: "the rule can never match", Type: sarifRuleErrorID, Text: e.message()}
			rules.add(c)
		}
		suites = append(suites, rules)
	}
	if len(r.Warnings) > 0 {
		// A warning changes no exit code, so it fails no case: it is told in the
		// case's output.
		agents := junitSuite{Name: "agents"}
		for i, x := range r.Warnings {
			c := caseAt(junitCase{Classname: "airlock.agents", Name: "warning " + strconv.Itoa(i+1), SystemOut: "warning: " + safetext.Inline(x.Message)}, x.Location)
			agents.add(c)
		}
		suites = append(suites, agents)
	}
	all := junitSuites{Name: "airlock check"}
	for _, s := range suites {
		all.Suites = append(all.Suites, s)
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// --- GitHub workflow commands ---

// ghData escapes a workflow command's message (GitHub's escapeData).
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProperty escapes a workflow command's property value (GitHub's escapeProperty).
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

func ghCommand(w io.Writer, level string, l *Location, title, msg string) error {
	props := []string{}
	if l != nil && l.File != "" {
		props = append(props, "file="+ghProperty(relPath(l.File)))
		if l.Line > 0 {
			props = append(props, "line="+strconv.Itoa(l.Line))
		}
	}
	props = append(props, "title="+ghProperty(title))
	_, err := fmt.Fprintf(w, "::%s %s::%s\n", level, strings.Join(props, ","), ghData(msg))
	return err
}

// WriteGitHub writes GitHub Actions workflow commands: an annotation per hazard and
// per drift finding at its config line (error, warning or notice as in SARIF), an
// error per rule that can never match and per server that failed, then
// a notice with the verdict. Server-controlled text is escaped twice: safetext for
// the log (which renders ANSI), then GitHub's own escaping, so no name can end the
// command or start another.
func (r Report) WriteGitHub(w io.Writer) error {
	for _, h := range r.Hazards {
		level := r.level(h)
		if level == "note" {
			level = "notice"
		}
		msg := hazardText(h, false)
		for _, f := range h.Fixes {
			msg += "\nfix: " + safetext.Inline(f.Text) + "\n" + lines(strings.TrimRight(f.TOML, "\n"))
		}
		if err := ghCommand(w, level, h.Location, "airlock: "+string(h.Severity)+" "+string(h.Kind), msg); err != nil {
			return err
		}
	}
	for _, d := range r.Drift {
		if err := ghCommand(w, r.driftLevel(d), r.driftLocation(d), "airlock: drift "+string(d.Kind), driftMessage(d)); err != nil {
			return err
		}
	}
	for _, e := range r.ruleErrs() {
		if err := ghCommand(w, "error", e.Location, "airlock: rule error", e.message()); err != nil {
			return err
		}
	}
	for _, s := range r.Servers {
		if s.Status != model.StatusReady {
			if err := ghCommand(w, "error", s.Location, "airlock: server "+safetext.Inline(s.Name)+" "+s.Status.String(), safetext.Inline(s.Error)); err != nil {
				return err
			}
		}
		if f := s.Sandbox.fence(); f.Requested && !f.Applied {
			if err := ghCommand(w, "warning", s.Location, "airlock: server "+safetext.Inline(s.Name)+" unfenced", safetext.Inline(trust.FenceWords(f))); err != nil {
				return err
			}
		}
	}
	for _, x := range r.Warnings {
		if err := ghCommand(w, "warning", x.Location, "airlock: agent timeout", safetext.Inline(x.Message)); err != nil {
			return err
		}
	}
	verdict := fmt.Sprintf("airlock check: %d hazards, %d drift findings, exit %d", len(r.Hazards), len(r.Drift), r.Verdict.ExitCode)
	if r.Verdict.FailOn != "" {
		verdict += fmt.Sprintf(" (--fail-on %s matched %d)", safetext.Inline(r.Verdict.FailOn), len(r.Verdict.Matched))
	}
	_, err := fmt.Fprintf(w, "::notice title=airlock::%s\n", ghData(verdict))
	return err
}

// --- Markdown ---

// md escapes text for markdown: terminal controls made visible, HTML neutralised,
// and markdown punctuation backslash-escaped.
func md(s string) string {
	s = safetext.Inline(s)
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '_', '{', '}', '[', ']', '(', ')', '#', '+', '-', '.', '!', '|', '~', '"', '\'', '=', ':', '@':
			b.WriteByte('\\')
			b.WriteRune(c)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// fence returns a code fence longer than any run of backticks in s.
func fence(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// WriteMarkdown writes a report for a pull request comment or a job summary: the
// verdict, servers, rules that can never match, hazards with their fix hints as TOML,
// drift, the Mermaid diagram.
func (r Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# airlock check\n\n")
	switch {
	case r.Verdict.ExitCode == ExitOK:
		b.WriteString("**Verdict: pass** (exit 0)")
	default:
		fmt.Fprintf(&b, "**Verdict: fail** (exit %d)", r.Verdict.ExitCode)
	}
	if r.Verdict.FailOn != "" {
		fmt.Fprintf(&b, " · --fail-on %s matched %d", md(r.Verdict.FailOn), len(r.Verdict.Matched))
	}
	fmt.Fprintf(&b, " · source: %s", md(r.Source))
	if r.Config != "" {
		fmt.Fprintf(&b, " · config: %s", md(relPath(r.Config)))
	}
	b.WriteString("\n\n## Servers\n\n| server | status | trust | sandbox | tools | line |\n|---|---|---|---|---|---|\n")
	counts := map[string]int{}
	for _, t := range r.Tools {
		counts[t.Server]++
	}
	for _, s := range r.Servers {
		line := ""
		if s.Location != nil && s.Location.Line > 0 {
			line = strconv.Itoa(s.Location.Line)
		}
		status := s.Status.String()
		if s.Error != "" {
			status += ": " + s.Error
		}
		sandbox := "—"
		if f := s.Sandbox.fence(); f.Requested && !f.Applied {
			sandbox = "**" + md(trust.FenceWords(f)) + "**"
		} else if f.Requested {
			sandbox = md(trust.FenceWords(f))
		}
		fmt.Fprintf(&b, "| %s | %s | %s %s | %s | %d | %s |\n", md(s.Name), md(status), theme.TrustGlyph(s.Trust), s.Trust, sandbox, counts[s.Name], line)
	}
	if errs := r.ruleErrs(); len(errs) > 0 {
		fmt.Fprintf(&b, "\n## Rule errors (%d)\n\nThese rules can never match: each tool asks for every call, and the check fails, until they are fixed.\n\n| server | rule | line | error |\n|---|---|---|---|\n", len(errs))
		for _, e := range errs {
			line := ""
			if e.Location != nil && e.Location.Line > 0 {
				line = strconv.Itoa(e.Location.Line)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", md(e.server), md(e.name()), line, md(e.Text))
		}
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintf(&b, "\n## Warnings (%d)\n\n", len(r.Warnings))
		for _, x := range r.Warnings {
			fmt.Fprintf(&b, "- ⚠ %s\n", md(x.Message))
		}
	}
	if len(r.Suggestions) > 0 {
		fmt.Fprintf(&b, "\n## Suggestions (%d)\n\n", len(r.Suggestions))
		for _, x := range r.Suggestions {
			fmt.Fprintf(&b, "- %s\n", md(x.Message))
		}
	}
	fmt.Fprintf(&b, "\n## Hazards (%d)\n\n", len(r.Hazards))
	if len(r.Hazards) == 0 {
		b.WriteString("No toolset hazards.\n")
	}
	for _, h := range r.Hazards {
		guard := "guarded"
		if h.Unguarded {
			guard = "**UNGUARDED**"
		}
		fmt.Fprintf(&b, "### %s %s · %s — %s", theme.SeverityGlyph(h.Severity), h.Severity, h.Kind, guard)
		if h.Baselined {
			b.WriteString(" (accepted in the baseline)")
		} else if h.BaselineChange != "" {
			b.WriteString(" (changed since the baseline: " + md(h.BaselineChange) + ")")
		} else if r.matched(h.ID) {
			b.WriteString(" (fails this run)")
		}
		fmt.Fprintf(&b, "\n\n%s\n\n", md(h.Summary))
		for _, k := range legOrder {
			if names, ok := h.Legs[k]; ok {
				esc := make([]string, len(names))
				for i, n := range names {
					esc[i] = md(n) + unaskedMark(h.Hazard, n)
				}
				fmt.Fprintf(&b, "- **%s**: %s\n", k, shortJoin(esc, 8))
			}
		}
		fmt.Fprintf(&b, "- id: %s\n", md(h.ID))
		if len(h.Fixes) > 0 {
			b.WriteString("\nFix hints (each alone is enough):\n\n")
			for _, f := range h.Fixes {
				effect := "breaks it"
				if f.Effect == trust.FixGuards {
					effect = "keeps it, but asks first"
				}
				toml := lines(f.TOML)
				fc := fence(toml)
				fmt.Fprintf(&b, "- %s (%s):\n\n  %stoml\n", md(f.Text), effect, fc)
				for _, l := range strings.Split(strings.TrimRight(toml, "\n"), "\n") {
					b.WriteString("  " + l + "\n")
				}
				b.WriteString("  " + fc + "\n\n")
			}
		}
		b.WriteString("\n")
	}
	if len(r.Drift) > 0 {
		fmt.Fprintf(&b, "## Drift from the snapshot (%d)\n\n| finding | server | tool | detail |\n|---|---|---|---|\n", len(r.Drift))
		for _, d := range r.Drift {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", md(string(d.Kind)), md(d.Server), md(d.Tool), md(d.Detail))
		}
		b.WriteString("\n")
		for _, d := range r.Drift {
			diff := driftDiff(d)
			if len(diff) == 0 {
				continue
			}
			fence := mdFence(diff)
			fmt.Fprintf(&b, "%s, snapshot (-) to live (+):\n\n%sdiff\n%s\n%s\n\n", md(trust.Ref{Server: d.Server, Tool: d.Tool}.Qualified()), fence, strings.Join(diff, "\n"), fence)
		}
	}
	if len(r.Hazards) > 0 {
		b.WriteString("## Diagram\n\n```mermaid\n")
		var mm strings.Builder
		_ = r.WriteMermaid(&mm)
		b.WriteString(mm.String())
		b.WriteString("```\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// --- Mermaid ---

// mermaidLabel makes a quoted flowchart label of any text: letters, digits, space
// and "_.-," stay, everything else becomes a numeric entity code (#35;), so no name
// can close the label, start a link or inject a directive. Long labels are cut.
func mermaidLabel(s string) string {
	const maxRunes = 80
	var b strings.Builder
	n := 0
	for _, c := range s {
		if n == maxRunes {
			b.WriteString("#8230;")
			break
		}
		n++
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' || c == '_' || c == '.' || c == '-' || c == ',' {
			b.WriteRune(c)
		} else {
			fmt.Fprintf(&b, "#%d;", c)
		}
	}
	return `"` + b.String() + `"`
}

// WriteMermaid writes a Mermaid flowchart of servers → legs → hazards: each server
// links to the legs its tools fill (naming up to three tools), each leg to the
// hazards it takes part in. Node IDs are airlock's own (s0, l0, h0); every label is
// escaped by mermaidLabel.
func (r Report) WriteMermaid(w io.Writer) error {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for _, x := range r.Warnings {
		// A diagram has no place for a sentence: a comment line, which renders as
		// nothing but is there for whoever reads the source.
		b.WriteString("%% warning: " + safetext.Inline(x.Message) + "\n")
	}
	servers := map[string]string{}
	var serverOrder []string
	legs := map[string]string{}
	var legOrderSeen []string
	type edge struct{ from, to string }
	serverLeg := map[edge][]string{}
	var serverLegOrder []edge
	legHazard := map[edge]bool{}
	var legHazardOrder []edge
	var classes []string
	trustOf := map[string]string{}
	for _, s := range r.Servers {
		trustOf[s.Name] = s.Trust.String()
	}
	for i, h := range r.Hazards {
		hid := "h" + strconv.Itoa(i)
		guard := "guarded"
		if h.Unguarded {
			guard = "UNGUARDED"
		}
		class := "high"
		if h.Severity == trust.SeverityCritical {
			class = "critical"
		}
		fmt.Fprintf(&b, "  %s{{%s}}\n", hid, mermaidLabel(string(h.Severity)+" "+string(h.Kind)+" - "+guard))
		classes = append(classes, "  class "+hid+" "+class+"\n")
		keys := make([]string, 0, len(h.Legs))
		for k := range h.Legs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			lid, ok := legs[k]
			if !ok {
				lid = "l" + strconv.Itoa(len(legs))
				legs[k] = lid
				legOrderSeen = append(legOrderSeen, k)
			}
			if e := (edge{lid, hid}); !legHazard[e] {
				legHazard[e] = true
				legHazardOrder = append(legHazardOrder, e)
			}
			for _, q := range h.Legs[k] {
				server, tool, _ := strings.Cut(q, "__")
				sid, ok := servers[server]
				if !ok {
					sid = "s" + strconv.Itoa(len(servers))
					servers[server] = sid
					serverOrder = append(serverOrder, server)
				}
				e := edge{sid, lid}
				if _, ok := serverLeg[e]; !ok {
					serverLegOrder = append(serverLegOrder, e)
				}
				if !containsStr(serverLeg[e], tool) {
					serverLeg[e] = append(serverLeg[e], tool)
				}
			}
		}
	}
	for _, s := range serverOrder {
		label := s
		if t := trustOf[s]; t != "" {
			label += " - " + t
		}
		fmt.Fprintf(&b, "  %s[%s]\n", servers[s], mermaidLabel(label))
	}
	for _, k := range legOrderSeen {
		fmt.Fprintf(&b, "  %s([%s])\n", legs[k], mermaidLabel(k))
	}
	for _, e := range serverLegOrder {
		tools := serverLeg[e]
		label := strings.Join(tools[:min(3, len(tools))], ", ")
		if len(tools) > 3 {
			label += fmt.Sprintf(" +%d", len(tools)-3)
		}
		fmt.Fprintf(&b, "  %s -->|%s| %s\n", e.from, mermaidLabel(label), e.to)
	}
	for _, e := range legHazardOrder {
		fmt.Fprintf(&b, "  %s --> %s\n", e.from, e.to)
	}
	if len(r.Hazards) > 0 {
		b.WriteString("  classDef critical fill:#ffebe9,stroke:#cf222e,color:#1f2328\n")
		b.WriteString("  classDef high fill:#fff1e5,stroke:#bc4c00,color:#1f2328\n")
	}
	for _, c := range classes {
		b.WriteString(c)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// lines escapes each line of multi-line text made by airlock around names.
func lines(s string) string {
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = safetext.Inline(l)
	}
	return strings.Join(ls, "\n")
}
