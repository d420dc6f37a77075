package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/airlock-mcp/airlock/internal/conformancesuite"
)

// The test binary doubles as the adapter: the conformance suite runs it with the
// server URL as its last argument, and AIRLOCK_CONFORMANCE_CLIENT=1 (inherited
// through the suite) makes it play the client instead of running the tests.
func TestMain(m *testing.M) {
	if os.Getenv("AIRLOCK_CONFORMANCE_CLIENT") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// revisions are the requirement sets whose client scenarios are run, each at its
// own wire (the suite's --spec-version).
var revisions = []string{"2025-11-25", "2026-07-28"}

// baseScenarios are the non-auth client scenarios airlock is held to, run at every
// revision whose requirement set lists them; every auth/* scenario of a set is run
// too. json-schema-2020-12-preservation was added after both releases (reported,
// not scored by the suite) and is run at both.
var baseScenarios = []string{"initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults", "request-metadata"}

const unscoredScenario = "json-schema-2020-12-preservation"

// expectedFailure is one entry of testdata/conformance/expected-failures.toml.
type expectedFailure struct {
	Revision string `toml:"revision"`
	Scenario string `toml:"scenario"`
	Check    string `toml:"check"` // "" = every failing check of the scenario
	Reason   string `toml:"reason"`
}

type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

type scenarioRun struct {
	revision, scenario string
	checks             []check
	output             string
	err                error
}

// TestClientConformance runs the MCP conformance suite's client scenarios against
// airlock's session layer through this adapter: initialize, tools_call, sse-retry,
// elicitation-sep1034-client-defaults, json-schema-2020-12-preservation,
// request-metadata and every auth/* scenario of the 2025-11-25 and 2026-07-28
// requirement sets. Every failing check must be listed in
// testdata/conformance/expected-failures.toml with a reason, and every entry there
// must still fail, so the file stays true.
func TestClientConformance(t *testing.T) {
	node, script := conformancesuite.Locate(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(self, " \t") {
		t.Skipf("the suite splits its --command on spaces, and this test binary's path has one: %s", self)
	}
	expected := loadExpected(t)

	type job struct{ revision, scenario string }
	var jobs []job
	for _, rev := range revisions {
		required := requiredClientScenarios(t, node, script, rev)
		for _, s := range required {
			if slices.Contains(baseScenarios, s) || strings.HasPrefix(s, "auth/") {
				jobs = append(jobs, job{rev, s})
			}
		}
		jobs = append(jobs, job{rev, unscoredScenario})
	}

	out := t.TempDir()
	results := make([]scenarioRun, len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 3) // node is heavy; CI has two cores
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = runScenario(node, script, self, j.revision, j.scenario, filepath.Join(out, fmt.Sprint(i)))
		}()
	}
	wg.Wait()

	passed, failed, scenariosPassed := 0, 0, 0
	used := make([]bool, len(expected))
	for _, r := range results {
		if r.err != nil {
			t.Errorf("%s %s: %v\n%s", r.revision, r.scenario, r.err, r.output)
			continue
		}
		clean := true
		for _, c := range r.checks {
			switch c.Status {
			case "SUCCESS":
				passed++
				continue
			case "FAILURE", "WARNING":
			default:
				continue
			}
			failed++
			clean = false
			i := slices.IndexFunc(expected, func(e expectedFailure) bool {
				return e.Revision == r.revision && e.Scenario == r.scenario && (e.Check == "" || e.Check == c.ID)
			})
			if i < 0 {
				t.Errorf("%s %s: check %s %s (%s), not in expected-failures.toml\n%s", r.revision, r.scenario, c.ID, c.Status, c.ErrorMessage, r.output)
				continue
			}
			used[i] = true
		}
		if clean {
			scenariosPassed++
		}
	}
	for i, e := range expected {
		if !used[i] {
			t.Errorf("expected-failures.toml: %s %s %s passes now (or was not run): remove the entry", e.Revision, e.Scenario, e.Check)
		}
	}
	t.Logf("conformance: %d of %d scenario runs passed every check; %d checks passed, %d failed, all under the %d entries of expected-failures.toml",
		scenariosPassed, len(results), passed, failed, len(expected))
}

// loadExpected reads the expected failures; every entry must say why.
func loadExpected(t *testing.T) []expectedFailure {
	t.Helper()
	var f struct {
		Failure []expectedFailure `toml:"failure"`
	}
	path := filepath.Join("..", "..", "..", "testdata", "conformance", "expected-failures.toml")
	md, err := toml.DecodeFile(path, &f)
	if err != nil {
		t.Fatal(err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		t.Fatalf("%s: unknown keys %v", path, u)
	}
	for i, e := range f.Failure {
		if strings.TrimSpace(e.Reason) == "" || e.Scenario == "" || !slices.Contains(revisions, e.Revision) {
			t.Fatalf("%s: entry %d (%s %s %s) needs a revision (%v), a scenario and a reason", path, i+1, e.Revision, e.Scenario, e.Check, revisions)
		}
	}
	return f.Failure
}

var scenarioRE = regexp.MustCompile(`^\s+- (\S+)$`)

// requiredClientScenarios lists the client scenarios of a requirement set, as the
// suite itself says (`list --requirements REV`).
func requiredClientScenarios(t *testing.T, node, script, rev string) []string {
	t.Helper()
	b, err := exec.Command(node, script, "list", "--requirements", rev).Output()
	if err != nil {
		t.Fatalf("listing the %s requirement set: %v", rev, err)
	}
	var out []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "Client scenarios"):
			in = true
		case in && strings.TrimSpace(line) == "":
			return out
		case in:
			if m := scenarioRE.FindStringSubmatch(line); m != nil {
				out = append(out, m[1])
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("the %s requirement set lists no client scenarios:\n%s", rev, b)
	}
	return out
}

// runScenario runs one scenario at one revision's wire and reads its checks.
func runScenario(node, script, self, rev, scenario, dir string) scenarioRun {
	r := scenarioRun{revision: rev, scenario: scenario}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, "client", "--command", self, "--scenario", scenario,
		"--spec-version", rev, "--timeout", "40000", "-o", dir)
	// Under -race every adapter process would otherwise sleep a second at exit.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(os.Environ(), "AIRLOCK_CONFORMANCE_CLIENT=1", "NO_COLOR=1", "GORACE="+gorace)
	b, _ := cmd.CombinedOutput() // a failing scenario exits 1; its checks say why
	r.output = string(b)
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	if more, _ := filepath.Glob(filepath.Join(dir, "*", "*", "checks.json")); len(more) > 0 {
		files = append(files, more...) // auth/NAME makes a directory level of its own
	}
	if len(files) != 1 {
		r.err = fmt.Errorf("want one checks.json, found %d", len(files))
		return r
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		r.err = err
		return r
	}
	if err := json.Unmarshal(data, &r.checks); err != nil {
		r.err = err
		return r
	}
	if stderr, err := os.ReadFile(filepath.Join(filepath.Dir(files[0]), "stderr.txt")); err == nil {
		r.output += "\nclient stderr:\n" + string(stderr)
	}
	return r
}
