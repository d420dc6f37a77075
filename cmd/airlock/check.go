package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/airlock-mcp/airlock/internal/gctune"
	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/importer"
	"github.com/airlock-mcp/airlock/session/pins"
	"github.com/airlock-mcp/airlock/session/record"
	"github.com/airlock-mcp/airlock/ui/cli"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

// checkOptions are check's flags beyond the config: output, rule, snapshot, drift,
// baseline.
type checkOptions struct {
	format     string
	failOnSpec string
	failOn     *cli.FailOn
	snapshot   string
	drift      string
	baseline   string
}

// validate checks the flags together, before anything is read or connected: a bad
// combination is a usage error (2).
func (o *checkOptions) validate(asJSON bool, stderr io.Writer) int {
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "airlock: "+format+"\n", a...)
		return 2
	}
	if asJSON {
		if o.format != "" && o.format != "json" {
			return bad("--json and --format %s disagree", o.format)
		}
		o.format = "json"
	}
	if o.format != "" && !slices.Contains(cli.Formats, o.format) {
		return bad("--format %q: want one of %s", o.format, strings.Join(cli.Formats, ", "))
	}
	if o.snapshot != "" && o.drift != "" {
		return bad("--snapshot evaluates a snapshot without servers and --drift compares live servers with one: pick one")
	}
	if o.failOnSpec != "" {
		r, err := cli.ParseFailOn(o.failOnSpec)
		if err != nil {
			return bad("%v", err)
		}
		if r.Drift() && o.drift == "" {
			return bad("--fail-on drift needs --drift FILE")
		}
		o.failOn = &r
	}
	return 0
}

// printing reports whether the flags ask for printed output rather than the TUI.
func (o checkOptions) printing() bool {
	return o.format != "" || o.failOn != nil || o.snapshot != "" || o.drift != "" || o.baseline != ""
}

// readRecording reads a snapshot file written by `airlock snapshot`.
func readRecording(path string) (*model.Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading snapshot: %w", err)
	}
	defer f.Close()
	rec, err := record.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}

// runCheckReport runs check on cfg: from a snapshot with no server started, or live
// (with drift against a snapshot when asked).
func runCheckReport(ctx context.Context, cfg *config.Config, o checkOptions, stdout, stderr io.Writer) int {
	if o.snapshot != "" {
		rec, err := readRecording(o.snapshot)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return cli.ExitConfig
		}
		m, notes := session.NewOffline(cfg, rec, session.Options{Version: version})
		defer m.Close()
		return report(m, cfg, o, "snapshot", nil, notes, stdout, stderr)
	}
	gctune.Tune(true, 0) // a one-shot command: see gctune.Tune
	checkAuditLog(cfg, stderr)
	m, err := newManager(cfg, session.Options{OAuth: showAuthorization(stderr), Asker: cli.Asker{Out: stderr}})
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return cli.ExitConfig
	}
	return checkManager(ctx, m, o, stdout, stderr)
}

// checkManager starts m, waits for every server, and reports; with --drift the live
// listing is compared with the snapshot file (read before anything connects).
func checkManager(ctx context.Context, m *session.Manager, o checkOptions, stdout, stderr io.Writer) int {
	defer m.Close()
	var old *model.Recording
	if o.drift != "" {
		rec, err := readRecording(o.drift)
		if err != nil {
			fmt.Fprintf(stderr, "airlock: %v\n", err)
			return cli.ExitConfig
		}
		old = rec
	}
	m.Start()
	if err := m.Wait(ctx); err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return cli.ExitServerFailed
	}
	var drift []model.DriftFinding
	if old != nil {
		drift = record.Drift(old, m.Record())
		if drift == nil {
			drift = []model.DriftFinding{}
		}
	}
	// A state file that cannot be read changes what calls do (taint, remembered
	// rules): a notice in the report.
	return report(m, m.Config(), o, "live", drift, m.StateFileProblems(), stdout, stderr)
}

// report builds the report of m's snapshot, writes it and returns the verdict's exit
// code.
func report(m *session.Manager, cfg *config.Config, o checkOptions, source string, drift []model.DriftFinding, notes []string, stdout, stderr io.Writer) int {
	var baseline cli.Baseline
	if o.baseline != "" {
		f, err := os.Open(o.baseline)
		if err == nil {
			baseline, err = cli.ReadBaseline(f) // reads at most 64 MiB
			f.Close()
		}
		if err != nil {
			fmt.Fprintf(stderr, "airlock: --baseline %s: %v\n", o.baseline, err)
			return cli.ExitConfig
		}
	}
	var locs *config.Locations
	if cfg.Path != "" {
		if l, err := config.Locate(cfg.Path); err == nil {
			locs = l
		}
	}
	r := cli.Build(m.Snapshot(), cli.Input{
		Source: source, Policy: cfg.Policy, Locations: locs, Drift: drift, Notes: notes,
		Baseline: baseline, FailOn: o.failOn, FailOnSpec: o.failOnSpec,
		Warnings: agentWarnings(cfg), Managed: policyReport(cfg),
	})
	if err := r.Write(stdout, o.format, version); err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
	}
	for _, s := range r.Servers {
		for _, n := range s.RuleErrors {
			fmt.Fprintf(stderr, "airlock: %s: %s\n", safetext.Inline(s.Name), safetext.Inline(n))
		}
	}
	if r.Verdict.ExitCode == cli.ExitHazard {
		for _, id := range r.Verdict.Matched {
			fmt.Fprintf(stderr, "airlock: --fail-on matched %s\n", id)
		}
	}
	return r.Verdict.ExitCode
}

// policyReport is what the managed policy set, for the report (nil: none).
func policyReport(cfg *config.Config) *cli.PolicyReport {
	if cfg.Managed == nil {
		return nil
	}
	r := &cli.PolicyReport{Files: cfg.Managed.Files, Set: []cli.PolicySetting{}}
	for _, s := range cfg.Managed.Set {
		r.Set = append(r.Set, cli.PolicySetting{Key: s.Key, Value: s.Value, Source: s.Source.String()})
	}
	return r
}

// agentWarnings reads the configs of the agent CLIs on this machine that point at
// this config's gateway (its address, the running one's, or `airlock bridge`) and
// says where one of them gives up on a call before approval_timeout (a warning:
// the exit code stays).
func agentWarnings(cfg *config.Config) []string {
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	listen := defaultGatewayListen
	if cfg.Gateway != nil && cfg.Gateway.Listen != "" {
		listen = cfg.Gateway.Listen
	}
	addrs := []string{listen}
	if addr, ok := recordedGatewayAddr(cfg.StateDir); ok && addr != listen {
		addrs = append(addrs, addr)
	}
	self, _ := os.Executable()
	entries, problems := importer.AgentEntries(importer.Env{GOOS: runtime.GOOS, Home: home, Cwd: cwd, Lookup: os.LookupEnv},
		importer.AgentMatch{Addrs: addrs, Self: self})
	return cli.AgentTimeoutWarnings(cfg.ApprovalTimeout, entries, problems, home)
}

// runSnapshot connects every server and writes their listings to -o FILE (or "-",
// stdout) for `check --snapshot` and `check --drift`. Pins are kept in memory: taking
// a snapshot pins nothing. A server that failed is recorded as failed and the exit
// code is 3, so a partial snapshot is never taken silently.
func runSnapshot(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock snapshot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file")
	fromPath := fs.String("from", "", "another client's server list, imported in memory")
	out := fs.String("o", "", "write the snapshot to FILE (- for stdout)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: airlock snapshot [--config FILE] -o FILE")
		return 2
	}
	cfg, err := loadSessionConfig(*cfgPath, *fromPath)
	if err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return cli.ExitConfig
	}
	pins, _ := pins.Open("")
	m, ok := startOneShot(cfg, session.Options{Pins: pins, OAuth: showAuthorization(stderr), Asker: cli.Asker{Out: stderr}}, stderr)
	if !ok {
		return cli.ExitConfig
	}
	defer m.Close()
	if err := m.Wait(ctx); err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return cli.ExitServerFailed
	}
	rec := m.Record()
	var buf bytes.Buffer
	if err := rec.Write(&buf); err != nil {
		fmt.Fprintf(stderr, "airlock: %v\n", err)
		return 1
	}
	if *out == "-" {
		_, err = stdout.Write(buf.Bytes())
	} else {
		err = writeShared(*out, buf.Bytes())
	}
	if err != nil {
		fmt.Fprintf(stderr, "airlock: writing snapshot: %v\n", err)
		return 1
	}
	code := cli.ExitOK
	tools := 0
	for _, s := range rec.Servers {
		tools += len(s.Tools)
		if s.Status != model.StatusReady.String() {
			fmt.Fprintf(stderr, "airlock: server %s failed and is recorded as failed: %s\n", safetext.Inline(s.Name), safetext.Inline(s.Error))
			code = cli.ExitServerFailed
		}
	}
	if *out != "-" {
		fmt.Fprintf(stderr, "airlock: wrote %s: %d servers, %d tools\n", *out, len(rec.Servers), tools)
	}
	return code
}

// offlinePlaceholder stands for a ${VAR} the environment does not set when a config
// is read for `check --snapshot`: nothing is connected, so a header or env value is
// never used, and a CI runner need not hold the team's credentials.
const offlinePlaceholder = "unset-in-check-snapshot"

// loadOfflineConfig reads the config like loadConfig, except that ${VAR} left unset
// expands to offlinePlaceholder instead of failing (HOME and XDG_* are never
// replaced: they pick directories).
func loadOfflineConfig(path string) (*config.Config, error) {
	path, err := configPath(path)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	env := func(k string) (string, bool) {
		if v, ok := os.LookupEnv(k); ok {
			return v, true
		}
		if k == "HOME" || strings.HasPrefix(k, "XDG_") {
			return "", false
		}
		return offlinePlaceholder, true
	}
	cfg, err := config.Parse(data, path, env)
	if err != nil {
		return nil, err
	}
	return withPolicy(cfg)
}

// writeShared writes a file meant to be shared and committed (a snapshot): through a
// temporary file in the same folder, synced and renamed over path, mode 0644. It is
// not private state, so it does not go through statefile.
func writeShared(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// checkAuditLog verifies the whole audit log, when there is one, and prints a notice
// when it fails: check is where a person looks over what airlock stands on.
func checkAuditLog(cfg *config.Config, stderr io.Writer) {
	path := auditPath(cfg)
	// Only a log of which nothing is there is no log: a current file removed beside
	// its head or its closed segments is records removed, and check says so.
	if _, err := audit.VerifyLog(path); err != nil && !errors.Is(err, audit.ErrNoLog) {
		fmt.Fprintf(stderr, "airlock check: notice: the audit log %s does not verify: %s (see `airlock audit verify`; `airlock audit seal --start-new` moves it aside)\n", path, safetext.Inline(err.Error()))
	}
}
