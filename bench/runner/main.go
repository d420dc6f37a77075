// Command runner is bench/run: it builds airlock and its references, measures each
// row against its reference within one run, prints the table, and (without
// --quick) writes BENCHMARKS.md with the machine, the date and the command that
// reproduces it, and rewrites README.md's measured summary from the same rows.
//
// The rows:
//
//  1. Whole-process time of `airlock check --json` on one stdio server against
//     bench/bareclient (a bare go-sdk client that connects and lists tools) and the
//     MCP Inspector CLI (testdata/inspector), all three on `airlock demo-server docs`.
//  2. Connect fan-out: `airlock check --json` on 1, 5 and 20 distinct demo docs
//     servers against the slowest of the 20 servers checked alone.
//  3. The agent gateway: session/gateway's BenchmarkCallThroughGateway (no audit log)
//     against BenchmarkCallThroughBareProxy, its floor, and BenchmarkCallDirect (p50 and
//     p99, 10 rounds of 1,000 calls each in turn), BenchmarkAuditedApprovals, and
//     session/audit's BenchmarkAppendDecisionSynced against its floor,
//     BenchmarkFloorFdatasyncFilled (and BenchmarkFloorFdatasyncAppend beside it).
//  4. trust's BenchmarkClassifyAndHazards at 100, 1,000 and 10,000 tools, and
//     session's BenchmarkWhatIfRecompute and BenchmarkRelistOneServer at 10,000.
//  5. ui's BenchmarkView (one frame, one key press) at 10,000 tools over 50 servers,
//     and the peak RSS of the real TUI in a pseudo-terminal on one stdio server
//     listing 10,000 tools (bench/manytools), against bench/manytools' own figure
//     for a session Manager alone on the same server.
//  6. Gateway vs peers: an auto-allowed read call of `airlock demo-server
//     docs` direct over stdio, through supergateway (pinned in testdata/npm), through
//     the real airlock (TUI in a pseudo-terminal, audit log on) and through
//     bench/bareproxy, with agents on go-sdk (bench/agent) and the TypeScript SDK
//     (bench/agent/agent.mjs): p50, p99, and 16 concurrent agents' calls/s; and the
//     older goal of 0.8x supergateway at p50 against the bare proxy's floor.
//  7. The same gateway under GC settings (GOGC, GOMEMLIMIT): latency, calls/s, RSS.
//  8. 50 agent sessions listing and calling: RSS per session, p99; and a soak
//     (--soak, 10 minutes; not in --quick) showing airlock's RSS stays flat.
//
// Whole-process rows are timed with hyperfine -N when it is installed (pooled over
// rounds whose order rotates), else with a small Go loop that interleaves the
// commands; Go benchmarks run from compiled test binaries in rounds of -count=1, so
// the two sides of a comparison share the machine's load of the moment. --quick runs
// every row once with few iterations, needs no hyperfine, Inspector or terminal, and
// writes nothing: it is CI's check that the benchmarks still build and run.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	quick := flag.Bool("quick", false, "run everything once with few iterations (CI); write nothing")
	out := flag.String("out", "", "write the report here (default BENCHMARKS.md at the module root; none with --quick)")
	keep := flag.String("work", "", "keep binaries, configs and raw benchmark output in this folder (default: a temporary one, removed)")
	only := flag.String("rows", "", "run only these groups of rows, e.g. 1,3 (the report is then written only with --out)")
	soak := flag.Duration("soak", 10*time.Minute, "how long row 8b's 50 agent sessions run (0: skip; --quick always skips it)")
	flag.Parse()
	if *quick {
		*soak = 0
	}
	if err := run(*quick, *out, *keep, *only, *soak); err != nil {
		fmt.Fprintln(os.Stderr, "bench/run:", err)
		os.Exit(1)
	}
}

// A row is one line of the table: airlock's figure, its reference's, the comparison
// and whether the goal was met.
type row struct {
	id, what  string
	airlock   string
	reference string
	result    string
	goal      string
	verdict   string // met | MISSED | waits for go-sdk | info | skipped: why | FAILED: why
	load      string
	brief     string // the row's figure in README's summary; "" = result
}

type runner struct {
	root, work, raw string
	quick           bool
	hyperfine       string // "" = the Go loop
	node, inspector string // "" = the Inspector rows are skipped
	airlock, bare   string
	manytools       string
	waiting         string          // bench/waiting
	agent           string          // bench/agent
	bareproxy       string          // bench/bareproxy
	supergateway    string          // its entry point in testdata/npm; "" = the peer rows are skipped
	nodeAny         string          // a Node for supergateway and agent.mjs (any >= 20)
	only            map[string]bool // nil = every group
	rows            []row
	failed          []string
	compiled        map[string]string // package -> test binary built in this run
	commands        []string          // how each measurement was run, for the report
	machine         []string
	rev             string // the commit measured, taken before anything is written
	// airlockPatched and bareproxyPatched are airlock and bench/bareproxy built
	// against go-sdk with bench/go-sdk-unmarshal-in-place.patch applied (row 6);
	// "" when they could not be built, and patchedWhy says why.
	airlockPatched, bareproxyPatched, patchedWhy string
}

func run(quick bool, out, keep, only string, soak time.Duration) error {
	start := time.Now()
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	r := &runner{root: root, quick: quick, compiled: map[string]string{}}
	if only != "" {
		r.only = map[string]bool{}
		for _, g := range strings.Split(only, ",") {
			r.only[strings.TrimSpace(g)] = true
		}
	}
	if keep != "" {
		r.work, err = filepath.Abs(keep)
		if err == nil {
			err = os.MkdirAll(r.work, 0o755)
		}
	} else {
		r.work, err = os.MkdirTemp("", "airlock-bench-")
		defer os.RemoveAll(r.work)
	}
	if err != nil {
		return err
	}
	r.raw = filepath.Join(r.work, "raw")
	_ = os.RemoveAll(r.raw) // a kept --work folder holds the previous run's
	if err := os.MkdirAll(r.raw, 0o755); err != nil {
		return err
	}
	if !quick {
		if p, err := exec.LookPath("hyperfine"); err == nil {
			r.hyperfine = p
		} else {
			logf("hyperfine not found: whole-process rows use the Go timing loop")
		}
	}
	loadStart := loadavg3()
	logf("building airlock and the references")
	if err := r.build(); err != nil {
		return err
	}
	r.findInspector()
	r.findSupergateway()
	r.rev = revision(root)
	r.machine = machine(r)

	r.section("1", r.rowCheck)
	r.section("2", r.rowFanOut)
	r.section("3", r.rowGateway)
	r.section("4", r.rowTrust)
	r.section("5", r.rowUI)
	r.section("5", r.rowTUIMemory)
	r.section("6", r.rowPeers)
	r.section("7", r.rowGCCurve)
	r.section("8", func() ([]row, error) { return r.rowManyAgents(soak) })
	r.section("9", r.rowWaiting)

	table := r.table()
	fmt.Println()
	fmt.Print(table)
	if quick {
		fmt.Println("\n--quick: a few iterations each, so the verdicts are indicative only; the full bench/run measures")
	}
	took := time.Since(start).Round(time.Second)
	fmt.Printf("\nload average (1, 5, 15 min) %s at the start, %s at the end; %v in all\n", loadStart, loadavg3(), took)
	if keep != "" {
		fmt.Printf("raw benchmark output (benchstat's format): %s\n", r.raw)
	}
	// Only the full run, writing BENCHMARKS.md at the module root, rewrites README's summary.
	full := !quick && r.only == nil && out == ""
	if (quick || r.only != nil) && out == "" {
		fmt.Println("BENCHMARKS.md not written (only the full bench/run writes it, or --out FILE)")
	} else {
		if out == "" {
			out = filepath.Join(root, "BENCHMARKS.md")
		}
		page, err := r.report(table, loadStart, loadavg3(), took)
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, []byte(page), 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", out)
	}
	if full {
		readme := filepath.Join(root, "README.md")
		old, err := os.ReadFile(readme)
		if err != nil {
			return err
		}
		text, err := replaceMeasured(string(old), measuredSummary(r.rows, r.rev, time.Now().UTC().Format("2006-01-02")))
		if err != nil {
			return err
		}
		if err := os.WriteFile(readme, []byte(text), 0o644); err != nil {
			return err
		}
		fmt.Println("wrote README.md's measured summary")
	}
	if len(r.failed) > 0 {
		return fmt.Errorf("%d rows failed to run: %s", len(r.failed), strings.Join(r.failed, "; "))
	}
	return nil
}

// section runs one group of rows, noting the load average before and after on each.
// A group that fails adds a FAILED row and the run goes on.
func (r *runner) section(id string, f func() ([]row, error)) {
	if r.only != nil && !r.only[id] {
		return
	}
	before := loadavg()
	rows, err := f()
	load := before + " → " + loadavg()
	for _, rw := range rows {
		if rw.load == "" {
			rw.load = load
		}
		r.rows = append(r.rows, rw)
	}
	if err != nil {
		logf("row %s failed: %v", id, err)
		first, _, _ := strings.Cut(err.Error(), "\n")
		r.rows = append(r.rows, row{id: id, what: "(this group)", verdict: "FAILED: " + first, load: load})
		r.failed = append(r.failed, id+": "+first)
	}
}

func (r *runner) build() error {
	r.airlock = filepath.Join(r.work, "airlock")
	r.bare = filepath.Join(r.work, "bareclient")
	r.manytools = filepath.Join(r.work, "manytools")
	r.agent = filepath.Join(r.work, "agent")
	r.bareproxy = filepath.Join(r.work, "bareproxy")
	r.waiting = filepath.Join(r.work, "waiting")
	for _, b := range [][2]string{{r.airlock, "./cmd/airlock"}, {r.bare, "./bench/bareclient"}, {r.manytools, "./bench/manytools"}, {r.agent, "./bench/agent"}, {r.bareproxy, "./bench/bareproxy"}, {r.waiting, "./bench/waiting"}} {
		cmd := exec.Command("go", "build", "-o", b[0], b[1])
		cmd.Dir = r.root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	if r.only != nil && !r.only["6"] {
		return nil // only row 6 runs them
	}
	if err := r.buildPatched(); err != nil {
		// The report's cell says why in one line; the log has all of it.
		why, _, _ := strings.Cut(err.Error(), "\n")
		r.airlockPatched, r.bareproxyPatched, r.patchedWhy = "", "", why
		logf("row 6 without go-sdk patched: %v", err)
	}
	return nil
}

// goSDK is the module whose patch row 6 measures beside the release.
const goSDK = "github.com/modelcontextprotocol/go-sdk"

// buildPatched builds airlock and bench/bareproxy once more against a copy of the
// go-sdk this module requires, with bench/go-sdk-unmarshal-in-place.patch applied:
// row 6 measures what that change to go-sdk would give, in the same run. The copy
// and a go.mod that points at it (go build -modfile) are in the work folder; the
// tree is not touched.
func (r *runner) buildPatched() error {
	list := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", goSDK)
	list.Dir = r.root
	dirOut, err := list.Output()
	if err != nil {
		return fmt.Errorf("locating %s: %v", goSDK, err)
	}
	src := strings.TrimSpace(string(dirOut))
	if src == "" {
		return fmt.Errorf("locating %s: not in the module cache", goSDK)
	}
	dst := filepath.Join(r.work, "go-sdk-patched")
	_ = os.RemoveAll(dst)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		return fmt.Errorf("copying %s: %v", goSDK, err)
	}
	apply := exec.Command("git", "apply", filepath.Join(r.root, "bench/go-sdk-unmarshal-in-place.patch"))
	apply.Dir = dst
	// Not a repository, even when the work folder is inside one: git apply then
	// patches the files under its directory, as patch(1) would.
	apply.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dst))
	if out, err := apply.CombinedOutput(); err != nil {
		return fmt.Errorf("applying bench/go-sdk-unmarshal-in-place.patch: %v\n%s", err, out)
	}
	mod, err := os.ReadFile(filepath.Join(r.root, "go.mod"))
	if err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(r.root, "go.sum"))
	if err != nil {
		return err
	}
	modfile := filepath.Join(r.work, "go.patched.mod")
	mod = fmt.Appendf(mod, "\nreplace %s => %s\n", goSDK, dst)
	if err := os.WriteFile(modfile, mod, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.work, "go.patched.sum"), sum, 0o644); err != nil {
		return err
	}
	r.airlockPatched = filepath.Join(r.work, "airlock-patched")
	r.bareproxyPatched = filepath.Join(r.work, "bareproxy-patched")
	for _, b := range [][2]string{{r.airlockPatched, "./cmd/airlock"}, {r.bareproxyPatched, "./bench/bareproxy"}} {
		cmd := exec.Command("go", "build", "-modfile", modfile, "-o", b[0], b[1])
		cmd.Dir = r.root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build -modfile %s %s: %v\n%s", modfile, b[1], err, out)
		}
	}
	return nil
}

// findInspector finds a Node >= 22.19 and the pinned Inspector. The full run installs
// what is missing (network, once); --quick only uses what is there.
func (r *runner) findInspector() {
	conformanceNode := filepath.Join(r.root, "testdata/conformance/node_modules/.bin/node")
	inspectorDir := filepath.Join(r.root, "testdata/inspector")
	launcher := filepath.Join(inspectorDir, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")
	for _, n := range []string{"node", conformanceNode} {
		if p, err := exec.LookPath(n); err == nil && nodeAtLeast(p, 22, 19) {
			r.node = p
			break
		}
	}
	if r.node == "" && !r.quick {
		logf("installing Node 22 (testdata/conformance, npm ci)")
		if npm(filepath.Join(r.root, "testdata/conformance"), "", "ci") == nil && nodeAtLeast(conformanceNode, 22, 19) {
			r.node = conformanceNode
		}
	}
	if r.node == "" {
		logf("no Node >= 22.19: the Inspector rows are skipped")
		return
	}
	if _, err := os.Stat(launcher); err != nil && !r.quick {
		// npm install, not npm ci: the lock is complete, but npm ci also wants an entry
		// for vite's optional napi-windows-process-start-time, which the registry does
		// not serve (404), so no lock can hold it. npm install keeps to the lock's
		// versions but rewrites some of its entries (their optional and peer flags), so
		// the committed lock is put back as it was once the install is done.
		logf("installing the Inspector CLI (testdata/inspector, npm install from its lock)")
		lock := filepath.Join(inspectorDir, "package-lock.json")
		kept, err := os.ReadFile(lock)
		_ = npm(inspectorDir, filepath.Dir(r.node), "install")
		if err == nil {
			if err := os.WriteFile(lock, kept, 0o644); err != nil {
				logf("putting back testdata/inspector/package-lock.json: %v", err)
			}
		}
	}
	if _, err := os.Stat(launcher); err != nil {
		logf("the Inspector is not installed (cd testdata/inspector && npm install): its rows are skipped")
		return
	}
	r.inspector = launcher
}

// findSupergateway finds a Node (any >= 20: the one found for the Inspector, else
// node on PATH) and supergateway as pinned in testdata/npm (.ci/run's npm ci installs
// it). Without either, the peer rows are skipped.
func (r *runner) findSupergateway() {
	r.nodeAny = r.node
	if r.nodeAny == "" {
		if p, err := exec.LookPath("node"); err == nil && nodeAtLeast(p, 20, 0) {
			r.nodeAny = p
		}
	}
	sg := filepath.Join(r.root, "testdata/npm/node_modules/supergateway/dist/index.js")
	if _, err := os.Stat(sg); err != nil || r.nodeAny == "" {
		logf("no Node >= 20 or no supergateway in testdata/npm (cd testdata/npm && npm ci): the peer rows are skipped")
		return
	}
	r.supergateway = sg
}

func npm(dir, pathFirst, verb string) error {
	cmd := exec.Command("npm", verb, "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if pathFirst != "" {
		cmd.Env = append(os.Environ(), "PATH="+pathFirst+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	return cmd.Run()
}

func nodeAtLeast(node string, major, minor int) bool {
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return false
	}
	var ma, mi, pa int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "v%d.%d.%d", &ma, &mi, &pa); err != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// timeProcs times procs with hyperfine or the Go loop and records how. describe, when
// not empty, stands for the list of commands in the report.
func (r *runner) timeProcs(procs []proc, warmup, rounds, runs int, describe string) (map[string]*procTimes, error) {
	if err := verify(procs); err != nil {
		return nil, err
	}
	if r.hyperfine == "" {
		n := rounds * runs
		if describe == "" {
			describe = procNames(procs)
		}
		r.commands = append(r.commands, fmt.Sprintf("Go loop, %d warm-up and %d interleaved runs each: %s", warmup, n, describe))
		return timeLoop(procs, warmup, n)
	}
	if describe == "" {
		r.commands = append(r.commands, fmt.Sprintf("%d rounds (order rotated) of: hyperfine %s", rounds, shellJoin(hyperfineArgs(procs, warmup, runs, ""))))
	} else {
		r.commands = append(r.commands, fmt.Sprintf("%d rounds (order rotated) of: hyperfine -N --warmup %d --runs %d over %s", rounds, warmup, runs, describe))
	}
	return timeHyperfine(r.hyperfine, r.work, procs, warmup, rounds, runs)
}

func procNames(procs []proc) string {
	var s []string
	for _, p := range procs {
		s = append(s, shellJoin(p.argv))
	}
	return "`" + strings.Join(s, "`, `") + "`"
}

// checkReady is the ok of `airlock check --json` on n servers: all of them ready.
func checkReady(n int) func([]byte) error {
	return func(out []byte) error {
		var rep struct {
			Servers []struct {
				Name   string `json:"name"`
				Status string `json:"status"`
			} `json:"servers"`
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			return fmt.Errorf("check --json: %v", err)
		}
		ready := 0
		for _, s := range rep.Servers {
			if s.Status == "ready" {
				ready++
			}
		}
		if ready != n || len(rep.Tools) != 2*n {
			return fmt.Errorf("check --json: %d of %d servers ready, %d tools, want %d ready and %d tools", ready, len(rep.Servers), len(rep.Tools), n, 2*n)
		}
		return nil
	}
}

func contains(want string) func([]byte) error {
	return func(out []byte) error {
		if !bytes.Contains(out, []byte(want)) {
			return fmt.Errorf("output lacks %q: %s", want, tail(string(out), 300))
		}
		return nil
	}
}

// writeConfig writes a config of n demo docs servers (docs-01...) with its own state
// folder. Each server has its own AIRLOCK_BENCH_INSTANCE, so they are distinct
// servers (distinct pins) running the same program.
func (r *runner) writeConfig(name string, instances ...int) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "state_dir = %q\n", filepath.Join(r.work, "state-"+name))
	for _, i := range instances {
		fmt.Fprintf(&b, "\n[servers.docs-%02d]\ncommand = %q\nargs = [\"demo-server\", \"docs\"]\nenv = { AIRLOCK_BENCH_INSTANCE = \"%02d\" }\ntrust = \"trusted\"\n", i, r.airlock, i)
	}
	p := filepath.Join(r.work, name+".toml")
	return p, os.WriteFile(p, []byte(b.String()), 0o644)
}

func (r *runner) rowCheck() ([]row, error) {
	logf("row 1: airlock check vs a bare go-sdk client vs the Inspector CLI")
	cfg, err := r.writeConfig("one", 1)
	if err != nil {
		return nil, err
	}
	procs := []proc{
		{name: "bare", argv: []string{r.bare, r.airlock, "demo-server", "docs"}, ok: contains("2 tools")},
		{name: "airlock", argv: []string{r.airlock, "check", "--config", cfg, "--json"}, ok: checkReady(1)},
	}
	if r.inspector != "" {
		procs = append(procs, proc{name: "inspector", argv: []string{r.node, r.inspector, "--cli", r.airlock, "demo-server", "docs", "--method", "tools/list"}, ok: contains(`"get_doc"`)})
	}
	warmup, rounds, runs := 3, 5, 10
	if r.quick {
		warmup, rounds, runs = 1, 1, 5
	}
	t, err := r.timeProcs(procs, warmup, rounds, runs, "")
	if err != nil {
		return nil, err
	}
	a, bare := t["airlock"].median(), t["bare"].median()
	n := len(t["airlock"].wall)
	rows := []row{{
		id: "1a", what: "`airlock check --json`, one stdio server, whole process (median of " + strconv.Itoa(n) + ")",
		airlock:   ms(a) + " (CPU " + ms(t["airlock"].cpu) + ")",
		reference: "bare go-sdk client " + ms(bare) + " (CPU " + ms(t["bare"].cpu) + ")",
		result:    ratio(a, bare), goal: "≤ 1.15x",
		verdict: verdict(float64(a)/float64(bare) <= 1.15),
	}}
	if insp, ok := t["inspector"]; ok {
		rows = append(rows, row{
			id: "1b", what: "the same against the MCP Inspector CLI 2.12.0 `--cli … --method tools/list`",
			airlock: ms(a), reference: "Inspector " + ms(insp.median()) + " (CPU " + ms(insp.cpu) + ")",
			result: fmt.Sprintf("%.1fx faster", float64(insp.median())/float64(a)), goal: "≥ 3x faster",
			verdict: verdict(float64(insp.median())/float64(a) >= 3),
		})
	} else {
		rows = append(rows, row{id: "1b", what: "the same against the MCP Inspector CLI", verdict: "skipped: Inspector or Node >= 22.19 not installed"})
	}
	return rows, nil
}

func (r *runner) rowFanOut() ([]row, error) {
	logf("row 2: connect fan-out to 1, 5 and 20 stdio servers")
	const most = 20
	var procs []proc
	var singles []string
	for i := 1; i <= most; i++ {
		cfg, err := r.writeConfig(fmt.Sprintf("single-%02d", i), i)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("single-%02d", i)
		singles = append(singles, name)
		procs = append(procs, proc{name: name, argv: []string{r.airlock, "check", "--config", cfg, "--json"}, ok: checkReady(1)})
	}
	sizes := []int{1, 5, most}
	for _, n := range sizes {
		var inst []int
		for i := 1; i <= n; i++ {
			inst = append(inst, i)
		}
		cfg, err := r.writeConfig(fmt.Sprintf("fan-%d", n), inst...)
		if err != nil {
			return nil, err
		}
		procs = append(procs, proc{name: fmt.Sprintf("fan-%d", n), argv: []string{r.airlock, "check", "--config", cfg, "--json"}, ok: checkReady(n)})
		procs = append(procs, proc{name: fmt.Sprintf("bare-fan-%d", n), argv: []string{r.bare, "-n", strconv.Itoa(n), r.airlock, "demo-server", "docs"}, ok: contains(fmt.Sprintf("%d tools", 2*n))})
	}
	warmup, rounds, runs := 2, 4, 5
	if r.quick {
		warmup, rounds, runs = 1, 1, 3
	}
	t, err := r.timeProcs(procs, warmup, rounds, runs, fmt.Sprintf("%d commands: `$WORK/airlock check --config $WORK/single-NN.toml --json` for NN = 01 to %d; "+
		"`$WORK/airlock check --config $WORK/fan-N.toml --json` and `$WORK/bareclient -n N $WORK/airlock demo-server docs` for N = 1, 5, %d. "+
		"Server NN of every config is `[servers.docs-NN]` with `command = \"$WORK/airlock\"`, `args = [\"demo-server\", \"docs\"]`, "+
		"`env = { AIRLOCK_BENCH_INSTANCE = \"NN\" }`, `trust = \"trusted\"`, each config with its own `state_dir` (pinned by the warm-up runs)", len(procs), most, most))
	if err != nil {
		return nil, err
	}
	slowest, slowestName := time.Duration(0), ""
	for _, s := range singles {
		if m := t[s].median(); m > slowest {
			slowest, slowestName = m, s
		}
	}
	var rows []row
	for i, n := range sizes {
		ft, bt := t[fmt.Sprintf("fan-%d", n)], t[fmt.Sprintf("bare-fan-%d", n)]
		f, bare := ft.median(), bt.median()
		rw := row{
			id: "2" + string(rune('a'+i)), what: fmt.Sprintf("connect fan-out: `airlock check --json` on %d stdio %s, all ready", n, plural(n, "server")),
			airlock: ms(f) + " (CPU " + ms(ft.cpu) + ")",
			reference: fmt.Sprintf("slowest single server (%s) %s; bare go-sdk client on %d at once %s (CPU %s)",
				strings.TrimPrefix(slowestName, "single-"), ms(slowest), n, ms(bare), ms(bt.cpu)),
			result:  fmt.Sprintf("%s the slowest single; %s the bare client", ratio(f, slowest), ratio(f, bare)),
			verdict: "info",
		}
		if n == most {
			// The goal: what airlock adds over a bare client doing the same
			// fan-out. The older "≤ 1.3x the slowest single" needs about ten idle
			// cores (bench/analysis.md, row 2); the result column keeps that ratio.
			rw.goal = "≤ 1.1x the bare client"
			rw.verdict = verdict(float64(f)/float64(bare) <= 1.1)
			// What the cores can do: the CPU of all those processes spread over every core.
			floor := ft.cpu / time.Duration(runtime.NumCPU())
			rw.result += fmt.Sprintf("; CPU/%d cores alone is %s (%s)", runtime.NumCPU(), ms(floor), ratio(floor, slowest))
			rw.brief = fmt.Sprintf("%s, %s the bare client", ms(f), ratio(f, bare))
		}
		rows = append(rows, rw)
	}
	return rows, nil
}

func (r *runner) rounds() int {
	if r.quick {
		return 1
	}
	return 6
}

func (r *runner) benchtime(quick string) string {
	if r.quick {
		return quick
	}
	return "1s"
}

func (r *runner) goBench(g goBenchRun) (benchSamples, error) {
	r.commands = append(r.commands, fmt.Sprintf("%d rounds of: go test -run '^$' -bench '%s' -benchtime %s -count 1 -benchmem ./%s", g.rounds, g.pattern, g.benchtime, g.pkg))
	return g.run(r.root, r.work, r.raw, r.compiled)
}

// benchOne runs the one benchmark name of pkg for the run's rounds (benchtime is
// its -benchtime under --quick) and returns the median of its figure in unit.
func (r *runner) benchOne(pkg, name, benchtime, unit string) (float64, error) {
	s, err := r.goBench(goBenchRun{pkg: pkg, pattern: "^" + name + "$", benchtime: r.benchtime(benchtime), rounds: r.rounds()})
	if err != nil {
		return 0, err
	}
	v, ok := s.median(name, unit)
	if !ok {
		return 0, errors.New("no figure from " + name)
	}
	return v, nil
}

// gatewayRounds and gatewayCalls are how rows 3a and 3b run: rounds of gatewayCalls
// timed calls per benchmark, the direct call, the gateway and the bare go-sdk proxy in
// turn within each round, so that the gateway and its floor share the machine's load
// of the moment. Each benchmark makes 20 untimed warm-up calls before its timer starts,
// and the first of each process 1,000 (see processWarm in the benchmarks). The process
// runs airlock's collector policy (internal/gctune, as the binary does) for all three
// alike, and the gateway's Manager has its events read, as the TUI reads them.
const (
	gatewayRounds = 10
	gatewayCalls  = 1000
)

func (r *runner) rowGateway() ([]row, error) {
	logf("row 3: the gateway against the bare go-sdk proxy; audited approvals")
	rounds := gatewayRounds
	if r.quick {
		rounds = 1
	}
	s, err := r.goBench(goBenchRun{pkg: "session/gateway", pattern: "^(BenchmarkCallDirect|BenchmarkCallThroughGateway|BenchmarkCallThroughBareProxy)$", benchtime: fmt.Sprintf("%dx", gatewayCalls), rounds: rounds})
	if err != nil {
		return nil, err
	}
	rows, err := gatewayRows(s, rounds)
	if err != nil {
		return rows, err
	}
	a, err := r.goBench(goBenchRun{pkg: "session", pattern: "^(BenchmarkAuditedApprovals|BenchmarkAuditAppendParallel)$", benchtime: r.benchtime("200x"), rounds: r.rounds()})
	if err != nil {
		return rows, err
	}
	ap, ok1 := a.median("BenchmarkAuditedApprovals", "approvals/s")
	ar, ok2 := a.median("BenchmarkAuditAppendParallel", "records/s")
	if !ok1 || !ok2 {
		return rows, errors.New("no figures from the audit benchmarks")
	}
	rows = append(rows, row{
		id: "3c", what: "audited approvals (ask → allow-once → decision synced → call → outcome audited), 16 in flight",
		airlock: fmt.Sprintf("%.0f /s", ap), reference: fmt.Sprintf("audit log appends alone %.0f records/s", ar),
		result: fmt.Sprintf("%.0f /s", ap), goal: "≥ 1,000 /s", verdict: verdict(ap >= 1000),
	})
	d, err := r.goBench(goBenchRun{pkg: "session/audit", pattern: "^(BenchmarkAppendDecisionSynced|BenchmarkFloorFdatasyncFilled|BenchmarkFloorFdatasyncAppend|BenchmarkFloorFsyncGrowingAppend)$", benchtime: r.benchtime("200x"), rounds: r.rounds()})
	if err != nil {
		return rows, err
	}
	dec, ok1 := d.median("BenchmarkAppendDecisionSynced", "ns/op")
	grow, ok2 := d.median("BenchmarkFloorFsyncGrowingAppend", "ns/op")
	if !ok1 || !ok2 {
		return rows, errors.New("no figures from the synced decision benchmarks")
	}
	rw := row{
		id: "3d", what: "a call's decision record appended and synced before the call is forwarded, one at a time",
		airlock: msf(dec), reference: fmt.Sprintf("a growing file, fsync'd: %s", msf(grow)),
		result: fmt.Sprintf("%.2fx the growing file", dec/grow), goal: "—", verdict: "info",
	}
	// The floors sync with fdatasync, which only Linux has. The floor is a record's
	// bytes written inside a file's size, so that the sync commits nothing else;
	// the append floor beside it also commits the new size.
	floor, ok1 := d.median("BenchmarkFloorFdatasyncFilled", "ns/op")
	app, ok2 := d.median("BenchmarkFloorFdatasyncAppend", "ns/op")
	if ok1 && ok2 {
		rw.reference = fmt.Sprintf("floor: a record's size written inside a file's size (over bytes written before), fdatasync'd: %s; appended to a preallocated file, fdatasync'd: %s; %s", msf(floor), msf(app), rw.reference)
		rw.result = fmt.Sprintf("%.2fx the floor, %.2fx the append", dec/floor, dec/app)
		rw.goal, rw.verdict = "≤ 1.3x the floor", verdict(dec <= 1.3*floor)
	}
	rows = append(rows, rw)
	return rows, nil
}

// gatewayRows are rows 3a and 3b from rounds of BenchmarkCallDirect,
// BenchmarkCallThroughGateway and BenchmarkCallThroughBareProxy: the median over the
// rounds of each round's p50 (p99), and the spread of airlock's own cost, the gateway's
// figure minus the bare proxy's of the same round.
func gatewayRows(s benchSamples, rounds int) ([]row, error) {
	var rows []row
	for i, q := range []string{"p50", "p99"} {
		d, ok1 := s.median("BenchmarkCallDirect", q+"-µs")
		g, ok2 := s.median("BenchmarkCallThroughGateway", q+"-µs")
		p, ok3 := s.median("BenchmarkCallThroughBareProxy", q+"-µs")
		gs, ps := s["BenchmarkCallThroughGateway"][q+"-µs"], s["BenchmarkCallThroughBareProxy"][q+"-µs"]
		if !ok1 || !ok2 || !ok3 || len(gs) != len(ps) {
			return rows, fmt.Errorf("no %s figures from the gateway benchmarks", q)
		}
		own := make([]float64, len(gs))
		for k := range gs {
			own[k] = gs[k] - ps[k]
		}
		ownMed, _ := benchSamples{"own": {"µs": own}}.median("own", "µs")
		rows = append(rows, row{
			id: "3" + string(rune('a'+i)),
			what: fmt.Sprintf("auto-allowed call through the gateway, unaudited (no audit log), %s latency (agent and upstream over streamable HTTP; %d rounds of %d calls, gateway and bare proxy in turn, warm-up excluded; the process under airlock's collector policy)",
				q, rounds, gatewayCalls),
			airlock:   fmt.Sprintf("%.0f µs (round %ss %s)", g, q, spread(gs)),
			reference: fmt.Sprintf("bare go-sdk proxy (the same two hops, nothing else) %.0f µs (%s); direct to the upstream %.0f µs", p, spread(ps), d),
			result:    fmt.Sprintf("airlock's own %+.0f µs over the bare proxy (rounds %s); second hop %+.0f µs over direct", ownMed, spreadSigned(own), p-d),
			goal:      "≤ +150 µs over the bare proxy",
			verdict:   verdict(ownMed <= 150),
		})
	}
	return rows, nil
}

// spread is "min-max µs" of v.
func spread(v []float64) string {
	return fmt.Sprintf("%.0f-%.0f µs", slices.Min(v), slices.Max(v))
}

// spreadSigned is "min to max µs" of v, each with its sign.
func spreadSigned(v []float64) string {
	return fmt.Sprintf("%+.0f to %+.0f µs", slices.Min(v), slices.Max(v))
}

func (r *runner) rowTrust() ([]row, error) {
	logf("row 4: classification and hazards; what-if recompute")
	s, err := r.goBench(goBenchRun{pkg: "trust", pattern: "^BenchmarkClassifyAndHazards$", benchtime: r.benchtime("10x"), rounds: r.rounds()})
	if err != nil {
		return nil, err
	}
	var rows []row
	var at10k float64
	for i, n := range []int{100, 1000, 10000} {
		ns, ok := s.median(fmt.Sprintf("BenchmarkClassifyAndHazards/tools=%d", n), "ns/op")
		if !ok {
			return rows, fmt.Errorf("no figure for %d tools", n)
		}
		rw := row{
			id: "4" + string(rune('a'+i)), what: fmt.Sprintf("classify every tool + toolset hazards, %s tools", thousands(n)),
			airlock: msf(ns), reference: "—", result: msf(ns), verdict: "info",
		}
		if n == 10000 {
			at10k = ns
			rw.goal, rw.verdict = "< 20 ms", verdict(ns < 20e6)
		}
		rows = append(rows, rw)
	}
	ns, err := r.benchOne("session", "BenchmarkWhatIfRecompute", "3x", "ns/op")
	if err != nil {
		return rows, err
	}
	rows = append(rows, row{
		id: "4d", what: "what-if: toggle one server's trust and take the new snapshot, 10,000 tools over 50 servers",
		airlock: msf(ns), reference: "classify + hazards alone (4c) " + msf(at10k), result: fmt.Sprintf("%.2fx", ns/at10k),
		goal: "≤ 4 ms", verdict: verdict(ns <= 4e6), brief: msf(ns),
	})
	// The same recompute when a server changes: one of the 50 re-lists with a new
	// description (a tools/list_changed, its 200 tools listed again); build-µs is the
	// Snapshot call that built the new snapshot.
	us, err := r.benchOne("session", "BenchmarkRelistOneServer", "20x", "build-µs")
	if err != nil {
		return rows, err
	}
	rows = append(rows, row{
		id: "4e", what: "one server of the 50 re-lists with a tool's description changed: the new snapshot's build (reclassification and hazards)",
		airlock: msf(us * 1e3), reference: "what-if (4d) " + msf(ns), result: fmt.Sprintf("%.2fx", us*1e3/ns),
		goal: "—", verdict: "info",
	})
	return rows, nil
}

func (r *runner) rowUI() ([]row, error) {
	logf("row 5: the UI's View() and a key press at 10,000 tools")
	s, err := r.goBench(goBenchRun{pkg: "ui", pattern: "^BenchmarkView$/^(frame|down)$/", benchtime: r.benchtime("20x"), rounds: r.rounds()})
	if err != nil {
		return nil, err
	}
	var rows []row
	for i, c := range []struct {
		sub, what string
		budget    float64
		goal      string
	}{
		{"frame/120x40", "one frame, `View()`, 120x40, 10,000 tools over 50 servers", 4e6, "< 4 ms"},
		{"frame/80x24", "one frame, `View()`, 80x24", 4e6, "< 4 ms"},
		{"down/120x40", "one key press (down) through the root `Update`, 120x40", 1e6, "< 1 ms"},
		{"down/80x24", "one key press (down), 80x24", 1e6, "< 1 ms"},
	} {
		ns, ok := s.median("BenchmarkView/"+c.sub, "ns/op")
		if !ok {
			return rows, fmt.Errorf("no figure for BenchmarkView/%s", c.sub)
		}
		rows = append(rows, row{
			id: "5" + string(rune('a'+i)), what: c.what, airlock: msf(ns), reference: "budget " + msf(c.budget),
			result: fmt.Sprintf("%.0f%% of budget", 100*ns/c.budget), goal: c.goal, verdict: verdict(ns < c.budget),
		})
	}
	return rows, nil
}

func (r *runner) rowTUIMemory() ([]row, error) {
	if r.quick {
		logf("row 5: TUI peak RSS skipped in --quick")
		return []row{{id: "5e", what: "peak RSS of the TUI at 10,000 tools", verdict: "skipped: --quick"}}, nil
	}
	logf("row 5: peak RSS of the TUI at 10,000 tools, in a pseudo-terminal")
	var rows []row
	var onScreen *row // 5g, from 5e's first starts
	for i, c := range []struct {
		desc      int
		what      string
		goal      string
		important bool
	}{
		{120, "peak RSS of the TUI (real binary, pseudo-terminal 120x40), one stdio server listing 10,000 tools", "< 80 MB", true},
		{1 << 20, "the same, the first tool's description 1 MB (hostile case 14)", "—", false},
	} {
		args := []string{"-tools", "10000", "-desc", strconv.Itoa(c.desc)}
		state := filepath.Join(r.work, fmt.Sprintf("state-tui-%d", i))
		var b strings.Builder
		fmt.Fprintf(&b, "state_dir = %q\n\n[servers.many]\ncommand = %q\nargs = [%q, %q, %q, %q]\nenv = { AIRLOCK_MANYTOOLS_SERVE = \"1\" }\nconnect_timeout = \"2m\"\n",
			state, r.manytools, args[0], args[1], args[2], args[3])
		cfg := filepath.Join(r.work, fmt.Sprintf("tui-%d.toml", i))
		if err := os.WriteFile(cfg, []byte(b.String()), 0o644); err != nil {
			return rows, err
		}
		// Five first starts (a fresh state folder each: the pins are written as on a
		// first start); the median time to the screen, the highest peak.
		var readies []time.Duration
		peak := 0
		for range tuiRuns {
			if err := os.RemoveAll(state); err != nil {
				return rows, err
			}
			p, ready, err := tuiPeak(r.airlock, cfg, "10000 tools", nil)
			if err != nil {
				return rows, fmt.Errorf("TUI: %w", err)
			}
			readies = append(readies, ready)
			peak = max(peak, p)
		}
		slices.Sort(readies)
		ready := readies[len(readies)/2]
		// The reference: a session Manager alone on the same server (bench/manytools).
		out, err := exec.Command(r.manytools, args...).CombinedOutput()
		if err != nil {
			return rows, fmt.Errorf("manytools: %v\n%s", err, out)
		}
		ref, refSnap := 0, ""
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM (peak RSS):"); ok {
				ref, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			}
			if v, ok := strings.CutPrefix(line, "time to snapshot:"); ok {
				refSnap = strings.TrimSpace(v)
			}
		}
		r.commands = append(r.commands, fmt.Sprintf("airlock --config CFG in a 120x40 pseudo-terminal, CFG's one server `manytools %s` (AIRLOCK_MANYTOOLS_SERVE=1); %d first starts, each with its state folder removed: the time until the screen shows \"10000 tools\" (looked at after every read), then VmHWM of the airlock process after a few keys; reference `go run ./bench/manytools %s`", strings.Join(args, " "), tuiRuns, strings.Join(args, " ")))
		rw := row{
			id: "5" + string(rune('e'+i)), what: c.what,
			airlock:   fmt.Sprintf("%.1f MB (on screen in %s, median of %d first starts, %s-%s)", float64(peak)/1024, ms(ready), tuiRuns, ms(readies[0]), ms(readies[len(readies)-1])),
			reference: fmt.Sprintf("session Manager alone %.1f MB", float64(ref)/1024),
			result:    fmt.Sprintf("+%.1f MB for the TUI", float64(peak-ref)/1024),
			goal:      c.goal, verdict: "info",
			brief: fmt.Sprintf("%.1f MB peak", float64(peak)/1024),
		}
		if c.important {
			rw.verdict = verdict(float64(peak)/1024 < 80)
			onScreen = &row{
				id: "5g", what: "10,000 tools on screen from start (the same first starts as 5e: real binary, pseudo-terminal 120x40, one stdio server, a fresh state folder)",
				airlock:   fmt.Sprintf("%s (median of %d; %s-%s)", ms(ready), tuiRuns, ms(readies[0]), ms(readies[len(readies)-1])),
				reference: "session Manager alone, time to its first snapshot: " + refSnap,
				result:    "the process's start, the server's, the listing and the first frame included",
				goal:      "≤ 200 ms", verdict: verdict(ready <= 200*time.Millisecond), brief: ms(ready),
			}
		}
		rows = append(rows, rw)
	}
	if onScreen != nil {
		rows = append(rows, *onScreen)
	}
	return rows, nil
}

// tuiRuns is how many first starts rows 5e-5g time.
const tuiRuns = 5

// rowWaiting measures the memory that calls waiting for a person cost (bench/waiting:
// a Manager and its gateway under the binary's own collector policy, nobody
// answering): one agent session sending many large calls at once, and many sessions
// sending one each. The highest peak of three runs is the figure.
func (r *runner) rowWaiting() ([]row, error) {
	logf("row 9: the memory of calls waiting for a person")
	runs, timeout := 3, "3s"
	cases := []struct {
		id, what, goal string
		args           []string
		goalMB         float64
	}{
		{"9a", "one agent session sends 80 calls of 3 MB at once, nobody answers: peak RSS", "≤ 150 MB",
			[]string{"-agents", "1", "-calls", "80", "-size", "3000000"}, 150},
		{"9b", "120 agent sessions send one call of 4 MB each at once, nobody answers: peak RSS", "≤ 250 MB",
			[]string{"-agents", "120", "-calls", "1", "-size", "4000000"}, 250},
	}
	if r.quick {
		runs, timeout = 1, "1s"
		cases[0].args = []string{"-agents", "1", "-calls", "8", "-size", "300000"}
		cases[1].args = []string{"-agents", "12", "-calls", "1", "-size", "400000"}
	}
	var rows []row
	for _, c := range cases {
		args := append(slices.Clone(c.args), "-timeout", timeout)
		var peaks []int
		var waited, refused string
		for range runs {
			out, err := exec.Command(r.waiting, args...).CombinedOutput()
			if err != nil {
				return rows, fmt.Errorf("waiting %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if v, ok := strings.CutPrefix(line, "VmHWM (peak RSS):"); ok {
					kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
					peaks = append(peaks, kb)
				}
				if v, ok := strings.CutPrefix(line, "waited for a person (then timed out): "); ok {
					waited, refused, _ = strings.Cut(v, "; refused at once by the bounds: ")
					refused, _, _ = strings.Cut(refused, ";")
				}
			}
		}
		if len(peaks) == 0 {
			return rows, fmt.Errorf("waiting %s: no VmHWM line", strings.Join(args, " "))
		}
		peak := float64(slices.Max(peaks)) * 1024 / 1e6
		r.commands = append(r.commands, fmt.Sprintf("row %s: `go run ./bench/waiting %s`, %d runs, the highest VmHWM", c.id, strings.Join(args, " "), runs))
		rows = append(rows, row{
			id: c.id, what: c.what,
			airlock:   fmt.Sprintf("%.0f MB (highest of %d runs)", peak, runs),
			reference: fmt.Sprintf("%s waited, %s refused at once by [limits]", waited, refused),
			result:    fmt.Sprintf("%.0f MB", peak),
			goal:      c.goal, verdict: verdict(peak <= c.goalMB),
		})
	}
	return rows, nil
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "MISSED"
}

func ms(d time.Duration) string { return msf(float64(d)) }

func msf(ns float64) string {
	switch {
	case ns >= 100e6:
		return fmt.Sprintf("%.0f ms", ns/1e6)
	case ns >= 1e6:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	default:
		return fmt.Sprintf("%.0f µs", ns/1e3)
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func ratio(a, b time.Duration) string { return fmt.Sprintf("%.2fx", float64(a)/float64(b)) }

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func (r *runner) table() string {
	var b strings.Builder
	b.WriteString("| # | what | airlock | reference | result | goal | verdict | load (1 min) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, rw := range r.rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", rw.id, rw.what, dash(rw.airlock), dash(rw.reference), dash(rw.result), dash(rw.goal), rw.verdict, rw.load)
	}
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// maxPageLines is the most lines BENCHMARKS.md may have: one page, the history and the
// profiles staying in bench/analysis.md, which the page links.
const maxPageLines = 150

// report is BENCHMARKS.md: the machine, the table, how to reproduce it and how each
// row was measured. It fails when the page would be longer than maxPageLines.
func (r *runner) report(table, loadStart, loadEnd string, took time.Duration) (string, error) {
	var b strings.Builder
	b.WriteString("# Benchmarks\n\n")
	b.WriteString("Written by `bench/run`: each row measures airlock against a reference in the same run.\n")
	b.WriteString("Do not edit the figures by hand; run it again. Why a goal is missed, the profiles and the\n")
	b.WriteString("history of every row are in [bench/analysis.md](bench/analysis.md).\n\n")
	b.WriteString("Reproduce (from the module root; hyperfine installed, network once for the pinned Inspector):\n\n")
	b.WriteString("```sh\nbench/run            # this file, about " + strconv.Itoa(max(1, int(took.Round(time.Minute).Minutes()))) + " minutes\nbench/run --quick    # CI's smoke run: compiles and runs every row once, writes nothing\nbench/run --rows 3 --out /tmp/rows3.md   # one group of rows\n```\n\n")
	b.WriteString("## Machine\n\n")
	for _, m := range r.machine {
		b.WriteString("- " + m + "\n")
	}
	fmt.Fprintf(&b, "- load average (1, 5, 15 min): %s at the start, %s at the end (the benchmark's own processes included)\n\n", loadStart, loadEnd)
	b.WriteString("## Results\n\n")
	b.WriteString(table)
	b.WriteString("\n\"load\" is the 1-minute load average before and after the row's group (it counts the benchmark's own processes too: row 2 starts up to 21 at once). Ratios compare figures taken in the same rounds.\n\n")
	b.WriteString("## How each row was measured\n\n")
	for _, c := range r.commands {
		c = strings.ReplaceAll(c, r.work, "$WORK")
		c = strings.ReplaceAll(c, r.root+"/", "")
		b.WriteString("- " + c + "\n")
	}
	b.WriteString("\n$WORK is a temporary folder holding the binaries built from this tree (`go build ./cmd/airlock ./bench/bareclient ./bench/manytools`) and generated configs; `bench/run --work DIR` keeps it, with the raw `go test` output in benchstat's format under DIR/raw.\n")
	page := b.String()
	if n := strings.Count(page, "\n"); n > maxPageLines {
		return page, fmt.Errorf("the report is %d lines, more than the %d of one page", n, maxPageLines)
	}
	return page, nil
}

func machine(r *runner) []string {
	var m []string
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	mem := ""
	if kb, err := procStatusKBFile("/proc/meminfo", "MemTotal"); err == nil {
		mem = fmt.Sprintf(", %.1f GB memory", float64(kb)/1024/1024)
	}
	m = append(m, fmt.Sprintf("%s, %d cores%s", cpu, runtime.NumCPU(), mem))
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	m = append(m, fmt.Sprintf("%s/%s, Linux %s", runtime.GOOS, runtime.GOARCH, strings.TrimSpace(string(kernel))))
	m = append(m, "toolchain: "+firstLine(exec.Command("go", "version")))
	if r.hyperfine != "" {
		m = append(m, "timing: "+firstLine(exec.Command(r.hyperfine, "--version"))+" -N")
	} else {
		m = append(m, "timing: bench/runner's Go loop (no hyperfine)")
	}
	if r.node != "" {
		m = append(m, "node: "+firstLine(exec.Command(r.node, "--version")))
	}
	m = append(m, "commit: "+r.rev)
	m = append(m, "date: "+time.Now().UTC().Format("2006-01-02 15:04 MST"))
	return m
}

// revision is the short commit of the tree at root, marked when it has changes not
// committed.
func revision(root string) string {
	rev := firstLine(exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD"))
	if out, _ := exec.Command("git", "-C", root, "status", "--porcelain").Output(); len(bytes.TrimSpace(out)) > 0 {
		rev += " with uncommitted changes"
	}
	return rev
}

func procStatusKBFile(path, field string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no %s in %s", field, path)
}

func firstLine(cmd *exec.Cmd) string {
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	l, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return l
}

// loadavg is the 1-minute load average.
func loadavg() string {
	l, _, _ := strings.Cut(loadavg3(), " ")
	return l
}

// loadavg3 is the 1, 5 and 15-minute load averages.
func loadavg3() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the airlock module")
	}
	return filepath.Dir(mod), nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench/run: "+format+"\n", args...)
}
