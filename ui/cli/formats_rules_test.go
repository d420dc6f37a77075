package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
)

// brokenRulesReport is check's report of the example config with two rules that can
// never match: a deny on a field send_email does not declare (a typo), and rules
// for a tool the mail server does not list. It returns the lines they are on.
func brokenRulesReport(t *testing.T) (r Report, typoLine, missingLine int) {
	t.Helper()
	src, err := os.ReadFile("../../config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	src = bytes.ReplaceAll(src, []byte(`command = "airlock"`), []byte(`command = "/nonexistent/mcp-server"`))
	typoLine = 1 + bytes.Count(src, []byte("\n")) + 1
	src = append(src, []byte("\n[[servers.mail.tools.send_email.rules]]\nwhen = { t0 = { equals = \"ceo@example.com\" } }\npolicy = \"deny\"\n\n[[servers.mail.tools.sned_email.rules]]\nwhen = { to = { equals = \"ceo@example.com\" } }\npolicy = \"deny\"\n")...)
	missingLine = typoLine + 4
	home := t.TempDir()
	cfg, err := config.Parse(src, "config.example.toml", func(k string) (string, bool) { return home, k == "HOME" })
	if err != nil {
		t.Fatal(err)
	}
	m, _ := session.NewOffline(cfg, demoRecording(t), session.Options{})
	defer m.Close()
	r = Build(m.Snapshot(), Input{Source: "snapshot", Policy: cfg.Policy, Locations: config.LocateSource("config.example.toml", src)})
	return r, typoLine, missingLine
}

// A rule that can never match fails the check (exit 1); every CI format says which
// rule and where, so a red job is never shown without its reason.
func TestCheckFormats_CarryRuleErrors(t *testing.T) {
	r, typoLine, missingLine := brokenRulesReport(t)
	if r.ExitCode() != ExitConfig {
		t.Fatalf("exit %d, want %d; servers %+v", r.ExitCode(), ExitConfig, r.Servers)
	}
	var n int
	for _, s := range r.Servers {
		n += len(s.RuleErrors)
	}
	if n != 2 {
		t.Fatalf("%d rule errors, want 2", n)
	}

	sarif := written(t, sarifTo(r))
	if err := sarifSchema(t).Validate(plainJSON(t, sarif.Bytes())); err != nil {
		t.Fatalf("SARIF with rule errors invalid: %v", err)
	}
	var log sarifLog
	_ = json.Unmarshal(sarif.Bytes(), &log)
	lines := map[int]bool{}
	for _, x := range log.Runs[0].Results {
		if x.RuleID != sarifRuleErrorID {
			continue
		}
		if x.Level != "error" || x.RuleIndex < 0 || log.Runs[0].Tool.Driver.Rules[x.RuleIndex].ID != x.RuleID {
			t.Errorf("rule error result %+v", x)
		}
		if len(x.Locations) == 1 && x.Locations[0].PhysicalLocation.ArtifactLocation.URI == "config.example.toml" && x.Locations[0].PhysicalLocation.Region != nil {
			lines[x.Locations[0].PhysicalLocation.Region.StartLine] = true
		}
	}
	if !lines[typoLine] || !lines[missingLine] || len(lines) != 2 {
		t.Errorf("SARIF rule errors at lines %v, want %d and %d:\n%s", lines, typoLine, missingLine, sarif.String())
	}

	junit := written(t, r.WriteJUnit)
	var suites junitSuites
	if err := xml.Unmarshal(junit.Bytes(), &suites); err != nil {
		t.Fatal(err)
	}
	var failed []junitCase
	for _, s := range suites.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil && strings.Contains(c.Failure.Text, "can never match") || c.Failure != nil && strings.Contains(c.Failure.Text, "no listed tool") {
				failed = append(failed, c)
			}
		}
	}
	if len(failed) != 2 || failed[0].Line != typoLine || failed[1].Line != missingLine {
		t.Errorf("JUnit failing rule cases %+v, want lines %d and %d:\n%s", failed, typoLine, missingLine, junit.String())
	}

	gh := written(t, r.WriteGitHub)
	for _, l := range []int{typoLine, missingLine} {
		if !strings.Contains(gh.String(), "::error file=config.example.toml,line="+strconv.Itoa(l)+",title=airlock%3A rule error") {
			t.Errorf("GitHub output has no error at line %d:\n%s", l, gh.String())
		}
	}

	md := written(t, r.WriteMarkdown)
	out := md.String()
	if !strings.Contains(out, "**Verdict: fail** (exit 1)") || !strings.Contains(out, "## Rule errors (2)") || !strings.Contains(out, "t0") || !strings.Contains(out, "sned") {
		t.Errorf("markdown has no rule errors section:\n%s", out)
	}
}
