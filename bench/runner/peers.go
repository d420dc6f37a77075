package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
)

// A gatewayUnderTest is one way for an agent to reach `airlock demo-server docs`:
// directly over stdio, or over streamable HTTP through supergateway, airlock's gateway
// or the bare go-sdk proxy.
type gatewayUnderTest struct {
	name  string
	url   string // "" = the agent starts the stdio server itself
	token string
	tool  string
	pid   int // the gateway's process (its RSS), 0 for direct
	stop  func()
}

// agentResult is one line of bench/agent's (or agent.mjs's) output.
type agentResult struct {
	Calls     int     `json:"calls"`
	P50us     float64 `json:"p50_us"`
	P99us     float64 `json:"p99_us"`
	CallsPerS float64 `json:"calls_per_s"`
	Error     string  `json:"error"`
}

// agentArgs is the agent command line (go-sdk when ts is false) for one target.
func (r *runner) agentArgs(ts bool, g *gatewayUnderTest, extra ...string) []string {
	var argv []string
	if ts {
		argv = []string{r.nodeAny, filepath.Join(r.root, "bench/agent/agent.mjs"), "-sdk", filepath.Join(r.root, "testdata/npm/node_modules/@modelcontextprotocol/sdk")}
	} else {
		argv = []string{r.agent}
	}
	argv = append(argv, "-tool", g.tool)
	if g.url != "" {
		argv = append(argv, "-url", g.url)
		if g.token != "" {
			argv = append(argv, "-token", g.token)
		}
	}
	argv = append(argv, extra...)
	if g.url == "" {
		argv = append(argv, "--", r.airlock, "demo-server", "docs")
	}
	return argv
}

// runAgent runs an agent to its end and returns its figures.
func runAgent(argv []string) (agentResult, error) {
	var res agentResult
	cmd := exec.Command(argv[0], argv[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &res); jerr != nil && err == nil {
		err = fmt.Errorf("agent output %q: %v", tail(out.String(), 300), jerr)
	}
	if err == nil && res.Error != "" {
		err = errors.New(res.Error)
	}
	if err != nil {
		return res, fmt.Errorf("%s: %v %s %s", shellJoin(argv), err, res.Error, tail(errb.String(), 1000))
	}
	return res, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitCall waits until one call through g succeeds (the gateway listens and its
// upstream is connected), for up to a minute.
func (r *runner) waitCall(g *gatewayUnderTest, exited <-chan error) error {
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := runAgent(r.agentArgs(false, g, "-n", "1", "-warmup", "0"))
		if err == nil {
			return nil
		}
		select {
		case e := <-exited:
			return fmt.Errorf("%s exited (%v) before serving: %v", g.name, e, err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no successful call within a minute: %v", g.name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startSupergateway starts the pinned supergateway, stateful (one stdio server per
// agent session, as airlock keeps one connection), on a free port.
func (r *runner) startSupergateway() (*gatewayUnderTest, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(r.nodeAny, r.supergateway, "--stateful", "--stdio", shellJoin([]string{r.airlock, "demo-server", "docs"}),
		"--outputTransport", "streamableHttp", "--port", strconv.Itoa(port), "--logLevel", "none")
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	g := &gatewayUnderTest{name: "supergateway", url: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), tool: "get_doc", pid: cmd.Process.Pid,
		stop: func() { killGroup(cmd); <-exited }}
	if err := r.waitCall(g, exited); err != nil {
		g.stop()
		return nil, err
	}
	return g, nil
}

// startBareProxy starts the bench/bareproxy binary bin on `airlock demo-server docs`.
func (r *runner) startBareProxy(bin string) (*gatewayUnderTest, error) {
	cmd := exec.Command(bin, r.airlock, "demo-server", "docs")
	ownGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	stop := func() { killGroup(cmd); <-exited }
	url, err := bufio.NewReader(out).ReadString('\n')
	go func() { exited <- cmd.Wait() }()
	if err != nil {
		stop()
		return nil, fmt.Errorf("bareproxy: %v", err)
	}
	g := &gatewayUnderTest{name: "bare go-sdk proxy", url: strings.TrimSpace(url), tool: "docs__get_doc", pid: cmd.Process.Pid, stop: stop}
	if err := r.waitCall(g, exited); err != nil {
		stop()
		return nil, err
	}
	return g, nil
}

// startAirlock starts the real airlock binary, its TUI in a 120x40 pseudo-terminal
// behind a virtual terminal, with [gateway] on a free port and one trusted server,
// `airlock demo-server docs`; the audit log is on (the default, in the state dir).
func (r *runner) startAirlock(name string, env ...string) (*gatewayUnderTest, error) {
	return r.startAirlockWith(name, "", env...)
}

// startAirlockWith is startAirlock with more config appended (e.g. an [audit] table).
func (r *runner) startAirlockWith(name, extra string, env ...string) (*gatewayUnderTest, error) {
	return r.startAirlockBin(r.airlock, name, extra, env...)
}

// startAirlockBin is startAirlockWith running the airlock binary bin as the TUI; the
// upstream server is always this tree's `airlock demo-server docs`, so that only the
// gateway differs between targets.
func (r *runner) startAirlockBin(bin, name, extra string, env ...string) (*gatewayUnderTest, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	state := filepath.Join(r.work, "state-"+name)
	_ = os.RemoveAll(state)
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, err
	}
	token := strings.Repeat("be", 32)
	if err := os.WriteFile(filepath.Join(state, "gateway.token"), []byte(token+"\n"), 0o600); err != nil {
		return nil, err
	}
	cfg := filepath.Join(r.work, name+".toml")
	conf := fmt.Sprintf("state_dir = %q\n\n[gateway]\nlisten = \"127.0.0.1:%d\"\n\n[servers.docs]\ncommand = %q\nargs = [\"demo-server\", \"docs\"]\ntrust = \"trusted\"\n%s", state, port, r.airlock, extra)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	t, err := startTUI(bin, cfg, env)
	if err != nil {
		return nil, err
	}
	g := &gatewayUnderTest{name: "airlock", url: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), token: token, tool: "docs__get_doc", pid: t.cmd.Process.Pid, stop: t.stop}
	if err := r.waitCall(g, t.done); err != nil {
		t.stop()
		return nil, fmt.Errorf("%v; the screen:\n%s", err, t.screen())
	}
	return g, nil
}

// tuiProc is the real TUI running in a pseudo-terminal.
type tuiProc struct {
	cmd    *exec.Cmd
	f      *os.File
	done   chan error
	screen func() string
	stop   func()
}

// startTUI starts airlock --config config in a 120x40 pseudo-terminal behind a
// virtual terminal, which answers the TUI's queries as a real one would.
func startTUI(airlock, config string, env []string) (*tuiProc, error) {
	const cols, rows = 120, 40
	cmd := exec.Command(airlock, "--config", config)
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "TERM=xterm-256color")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: rows, Cols: cols})
	if err != nil {
		return nil, err
	}
	emu := vt.NewEmulator(cols, rows)
	var mu sync.Mutex
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				mu.Lock()
				_, _ = emu.Write(buf[:n])
				mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { _, _ = io.Copy(f, emu) }() // the terminal's answers
	t := &tuiProc{cmd: cmd, f: f, done: make(chan error, 1)}
	go func() { t.done <- cmd.Wait() }()
	t.screen = func() string {
		mu.Lock()
		defer mu.Unlock()
		return emu.String()
	}
	var once sync.Once
	t.stop = func() {
		once.Do(func() {
			_, _ = f.Write([]byte("q"))
			select {
			case <-t.done:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
			}
			f.Close()
		})
	}
	return t, nil
}

// rowPeers is the gateway's overhead: the same auto-allowed read call direct, through
// supergateway, through airlock and through the bare go-sdk proxy, with agents on
// go-sdk and on the TypeScript SDK, in rounds whose order rotates.
func (r *runner) rowPeers() ([]row, error) {
	logf("row 6: an agent's call direct, through supergateway, airlock and a bare go-sdk proxy")
	if r.supergateway == "" {
		return []row{{id: "6", what: "gateway vs peers", verdict: "skipped: Node or the pinned supergateway not installed (cd testdata/npm && npm ci)"}}, nil
	}
	rounds, n, dur := 3, "1000", "5s"
	if r.quick {
		rounds, n, dur = 1, "50", "1s"
	}
	type key struct{ target, agent, what string }
	samples := map[key][]float64{}
	names := []string{"direct", "supergateway", "airlock", "bare", "written"}
	if r.airlockPatched != "" {
		names = append(names, "airlock-patched", "bare-patched")
	}
	agents := []string{"go"}
	if _, err := os.Stat(filepath.Join(r.root, "testdata/npm/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js")); err == nil {
		agents = append(agents, "ts")
	}
	for round := range rounds {
		for i := range names {
			target := names[(i+round)%len(names)]
			var g *gatewayUnderTest
			var err error
			switch target {
			case "direct":
				g = &gatewayUnderTest{name: "direct", tool: "get_doc", stop: func() {}}
			case "supergateway":
				g, err = r.startSupergateway()
			case "airlock":
				g, err = r.startAirlock(fmt.Sprintf("peers-%d", round))
			case "bare":
				g, err = r.startBareProxy(r.bareproxy)
			case "written": // airlock with decisions written, not synced, before forwarding
				g, err = r.startAirlockWith(fmt.Sprintf("written-%d", round), "\n[audit]\nsync_before_forward = false\n")
			case "airlock-patched": // as "airlock", built against go-sdk patched
				g, err = r.startAirlockBin(r.airlockPatched, fmt.Sprintf("patched-%d", round), "")
			case "bare-patched":
				g, err = r.startBareProxy(r.bareproxyPatched)
			}
			if err != nil {
				return nil, err
			}
			for _, a := range agents {
				res, err := runAgent(r.agentArgs(a == "ts", g, "-n", n))
				if err != nil {
					g.stop()
					return nil, err
				}
				samples[key{target, a, "p50"}] = append(samples[key{target, a, "p50"}], res.P50us)
				samples[key{target, a, "p99"}] = append(samples[key{target, a, "p99"}], res.P99us)
			}
			res, err := runAgent(r.agentArgs(false, g, "-c", "16", "-d", dur))
			g.stop()
			if err != nil {
				return nil, err
			}
			samples[key{target, "go", "rate"}] = append(samples[key{target, "go", "rate"}], res.CallsPerS)
		}
	}
	r.commands = append(r.commands, fmt.Sprintf("%d rounds (order rotated), each target started afresh: bench/agent (go-sdk) and bench/agent/agent.mjs (TypeScript SDK %s), "+
		"`-tool get_doc -n %s` (one session, 100 warm-up calls), then bench/agent `-c 16 -d %s` (16 sessions calling in a loop); targets: `$WORK/airlock demo-server docs` over stdio (direct; with -c 16, 16 of them), "+
		"`supergateway --stateful --stdio '$WORK/airlock demo-server docs' --outputTransport streamableHttp` (supergateway %s), the airlock TUI in a pseudo-terminal with `[gateway]` and that one server trusted, audit log on (tool docs__get_doc), "+
		"`bench/bareproxy $WORK/airlock demo-server docs`, the airlock TUI again with `[audit] sync_before_forward = false` (\"written\"), "+
		"and the airlock TUI and bench/bareproxy once more, built with `go build -modfile` against a copy of go-sdk with bench/go-sdk-unmarshal-in-place.patch applied (\"patched\": the agents and the upstream stay as built from the tree); protocol 2025-11-25 for every agent", rounds, npmVersion(r.root, "@modelcontextprotocol/sdk"), n, dur, npmVersion(r.root, "supergateway")))
	med := func(k key) float64 {
		v := slices.Clone(samples[k])
		slices.Sort(v)
		if len(v) == 0 {
			return 0
		}
		return v[len(v)/2]
	}
	fig := func(target, agent, q string) float64 { return med(key{target, agent, q}) }
	return peerRows(agents, fig, r.patchedWhy), nil
}

// peerRows are rows 6a-6g from the medians fig(target, agent, figure) of row 6's
// rounds: target is direct, supergateway, airlock, bare, written, airlock-patched or
// bare-patched; agent go or ts; figure p50, p99 (µs) or rate (calls/s, the go agent
// only). A figure not measured is 0: the patched ones are not when patchedWhy says
// why.
func peerRows(agents []string, fig func(target, agent, q string) float64, patchedWhy string) []row {
	missing := patchedWhy
	if missing == "" {
		missing = "not measured"
	}
	// patched is what the go-sdk change would give airlock and the bare proxy, as
	// this run measured it, each against supergateway's sg.
	patched := func(a, q string, sg float64) string {
		ap, bp := fig("airlock-patched", a, q), fig("bare-patched", a, q)
		if ap == 0 || bp == 0 {
			return "with go-sdk patched: not measured (" + missing + ")"
		}
		unit := "µs"
		if q == "rate" {
			unit = "/s"
		}
		return fmt.Sprintf("with go-sdk patched (bench/go-sdk-unmarshal-in-place.patch, this run): airlock %.0f %s (%.2fx), bare proxy %.0f %s (%.2fx)",
			ap, unit, ap/sg, bp, unit, bp/sg)
	}
	sdkName := map[string]string{"go": "go-sdk", "ts": "TypeScript SDK"}
	var rows []row
	id := 'a'
	for _, a := range agents {
		sdk := sdkName[a]
		for _, q := range []string{"p50", "p99"} {
			al, sg, d, b := fig("airlock", a, q), fig("supergateway", a, q), fig("direct", a, q), fig("bare", a, q)
			w := fig("written", a, q)
			rw := row{
				id:        "6" + string(id),
				what:      fmt.Sprintf("auto-allowed read call, agent on %s, %s (stdio upstream `airlock demo-server docs`, audit log on, decisions synced before forwarding: the default)", sdk, q),
				airlock:   fmt.Sprintf("%.0f µs", al),
				reference: fmt.Sprintf("supergateway %.0f µs; direct stdio %.0f µs; bare go-sdk proxy %.0f µs", sg, d, b),
				result: fmt.Sprintf("%.2fx supergateway; airlock's own %+.0f µs over the bare proxy; with decisions written, not synced (`sync_before_forward = false`, not the default): %.0f µs, %.2fx; %s",
					al/sg, al-b, w, w/sg, patched(a, q, sg)),
				goal:    "≤ 1.0x supergateway",
				verdict: verdict(al <= sg),
				brief:   fmt.Sprintf("%.2fx (%.0f µs against %.0f µs)", al/sg, al, sg),
			}
			if q == "p99" {
				rw.goal, rw.verdict = "≤ 0.8x supergateway", verdict(al <= 0.8*sg)
			}
			rows = append(rows, rw)
			id++
		}
	}
	al, sg, d, b := fig("airlock", "go", "rate"), fig("supergateway", "go", "rate"), fig("direct", "go", "rate"), fig("bare", "go", "rate")
	w := fig("written", "go", "rate")
	rows = append(rows, row{
		id: "6" + string(id), what: "16 concurrent agents (go-sdk), each its own session, calling in a loop: calls/s",
		airlock:   fmt.Sprintf("%.0f /s", al),
		reference: fmt.Sprintf("supergateway %.0f /s (a stdio server per session); direct stdio %.0f /s (16 servers); bare go-sdk proxy %.0f /s", sg, d, b),
		result:    fmt.Sprintf("%.2fx supergateway; decisions written, not synced: %.0f /s, %.2fx; the floor, the bare go-sdk proxy: %.2fx; %s", al/sg, w, w/sg, b/sg, patched("go", "rate", sg)),
		goal:      "≥ 1.5x supergateway",
		verdict:   rateVerdict(al, b, fig("airlock-patched", "go", "rate"), sg),
		brief:     fmt.Sprintf("%.2fx (%.0f against %.0f calls/s)", al/sg, al, sg),
	})
	id++
	// The older goal, 0.8x supergateway at p50, in a row of its own per agent: it
	// waits for go-sdk when the bare proxy misses it and airlock on go-sdk patched
	// meets it (oldGoalVerdict).
	for _, a := range agents {
		al, sg, b := fig("airlock", a, "p50"), fig("supergateway", a, "p50"), fig("bare", a, "p50")
		rw := row{
			id:        "6" + string(id),
			what:      fmt.Sprintf("the same call, agent on %s, p50 against the older goal of 0.8x supergateway", sdkName[a]),
			airlock:   fmt.Sprintf("%.0f µs, %.2fx supergateway", al, al/sg),
			reference: fmt.Sprintf("floor: the bare go-sdk proxy %.0f µs, %.2fx supergateway (%.0f µs); %s", b, b/sg, sg, patched(a, "p50", sg)),
			result:    fmt.Sprintf("%.2fx supergateway, the floor %.2fx", al/sg, b/sg),
			goal:      "≤ 0.8x supergateway",
			verdict:   oldGoalVerdict(al, b, fig("airlock-patched", a, "p50"), sg),
			brief:     fmt.Sprintf("%.2fx, the bare go-sdk proxy's floor %.2fx", al/sg, b/sg),
		}
		rows = append(rows, rw)
		id++
	}
	return rows
}

// oldGoalVerdict is the verdict of the 0.8x p50 goal for airlock's figure al, the bare
// go-sdk proxy's b, airlock's with go-sdk patched ap (0: not measured) and
// supergateway's sg: met; "waits for go-sdk" when the bare proxy, which runs no
// airlock code, is itself above 0.8x and airlock with go-sdk patched meets the goal
// (not measured: the bare proxy above it is enough); else MISSED, airlock's own cost.
func oldGoalVerdict(al, b, ap, sg float64) string {
	switch {
	case al <= 0.8*sg:
		return "met"
	case b > 0.8*sg && (ap == 0 || ap <= 0.8*sg):
		return "waits for go-sdk"
	default:
		return "MISSED"
	}
}

// rateVerdict is the verdict of the 16 agents' goal, 1.5x supergateway's calls/s, for
// airlock's rate al, the bare go-sdk proxy's b, airlock's with go-sdk patched ap (0:
// not measured) and supergateway's sg: met; "waits for go-sdk" when the bare proxy,
// which runs no airlock code, is itself below the goal and airlock with go-sdk
// patched meets it (not measured: airlock within 5% of the bare proxy); else MISSED,
// airlock's own cost.
func rateVerdict(al, b, ap, sg float64) string {
	switch {
	case al >= 1.5*sg:
		return "met"
	case b < 1.5*sg && (ap > 0 && ap >= 1.5*sg || ap == 0 && al >= 0.95*b):
		return "waits for go-sdk"
	default:
		return "MISSED"
	}
}

// npmVersion is the version of an npm package installed in testdata/npm.
func npmVersion(root, pkg string) string {
	b, err := os.ReadFile(filepath.Join(root, "testdata/npm/node_modules", pkg, "package.json"))
	if err != nil {
		return "?"
	}
	var p struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(b, &p)
	return p.Version
}

// rowGCCurve measures airlock's gateway under GC settings (GOGC, GOMEMLIMIT in the
// environment, which is what debug.SetGCPercent and SetMemoryLimit would set), and
// under airlock's own (none in the environment: internal/gctune keeps the heap goal
// 16 MiB above the live heap): one agent's p50 and p99, 16 agents' calls/s, and the
// airlock process's peak RSS; medians of rounds whose order rotates.
func (r *runner) rowGCCurve() ([]row, error) {
	logf("row 7: airlock's gateway under GC settings")
	rounds, n, dur := 3, "1000", "4s"
	if r.quick {
		rounds, n, dur = 1, "50", "1s"
	}
	settings := [][]string{nil, {"GOGC=100"}, {"GOGC=200"}, {"GOGC=400"}, {"GOGC=800"}, {"GOGC=200", "GOMEMLIMIT=64MiB"}, {"GOGC=off", "GOMEMLIMIT=48MiB"}}
	type figures struct{ p50, p99, rate, peak []float64 }
	got := make([]figures, len(settings))
	for round := range rounds {
		for k := range settings {
			i := (k + round) % len(settings)
			g, err := r.startAirlock(fmt.Sprintf("gc-%d-%d", round, i), settings[i]...)
			if err != nil {
				return nil, err
			}
			one, err := runAgent(r.agentArgs(false, g, "-n", n))
			var many agentResult
			if err == nil {
				many, err = runAgent(r.agentArgs(false, g, "-c", "16", "-d", dur))
			}
			peak, perr := procStatusKB(g.pid, "VmHWM")
			g.stop()
			if err == nil {
				err = perr
			}
			if err != nil {
				return nil, err
			}
			f := &got[i]
			f.p50, f.p99 = append(f.p50, one.P50us), append(f.p99, one.P99us)
			f.rate, f.peak = append(f.rate, many.CallsPerS), append(f.peak, float64(peak)/1024)
		}
	}
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	var rows []row
	for i, env := range settings {
		name := strings.Join(env, " ")
		if env == nil {
			name = "airlock's own setting (no GOGC: heap goal ≥ live + 16 MiB)"
		}
		f := got[i]
		rows = append(rows, row{
			id: "7" + string(rune('a'+i)), what: "airlock gateway with " + name + ": one agent p50 / p99; 16 agents calls/s; peak RSS of airlock",
			airlock:   fmt.Sprintf("%.0f / %.0f µs; %.0f /s; %.1f MB", median(f.p50), median(f.p99), median(f.rate), median(f.peak)),
			reference: "—", result: "—", goal: "—", verdict: "info",
		})
	}
	r.commands = append(r.commands, fmt.Sprintf("row 7: %d rounds (order rotated) of the airlock TUI as in row 6, started with each environment in turn; bench/agent `-n %s`, then `-c 16 -d %s`; VmHWM of the airlock process; medians", rounds, n, dur))
	return rows, nil
}

// rowManyAgents is the many-agents row: 50 agent sessions on one gateway, each listing
// the tools and calling: the airlock process's RSS added per session, and the p99 of
// the calls. With soak > 0 (the full run: 10 minutes) the 50 sessions keep listing and
// calling that long and the RSS is sampled: it must stay flat.
func (r *runner) rowManyAgents(soak time.Duration) ([]row, error) {
	logf("row 8: 50 agent sessions on the gateway")
	dur := "10s"
	if r.quick {
		dur = "2s"
	}
	g, err := r.startAirlock("many")
	if err != nil {
		return nil, err
	}
	defer g.stop()
	time.Sleep(time.Second)
	before, err := procStatusKB(g.pid, "VmRSS")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(r.agentArgs(false, g, "-c", "50", "-d", dur, "-list", "-hold")[0], r.agentArgs(false, g, "-c", "50", "-d", dur, "-list", "-hold")[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	br := bufio.NewReader(stdout)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, "connected") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("agent -c 50: %q %v %s", line, err, tail(errb.String(), 500))
	}
	time.Sleep(500 * time.Millisecond)
	connected, err := procStatusKB(g.pid, "VmRSS")
	if err != nil {
		return nil, err
	}
	_, _ = io.WriteString(stdin, "go\n")
	rest, _ := io.ReadAll(br)
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("agent -c 50: %v %s %s", err, rest, tail(errb.String(), 500))
	}
	var res agentResult
	if err := json.Unmarshal(bytes.TrimSpace(rest), &res); err != nil || res.Error != "" {
		return nil, fmt.Errorf("agent -c 50: %q %v", rest, err)
	}
	after, _ := procStatusKB(g.pid, "VmRSS")
	r.commands = append(r.commands, fmt.Sprintf("row 8: the airlock TUI as in row 6; VmRSS of airlock before, with 50 sessions connected (each listed the tools and called once: `bench/agent -c 50 -list -hold`), then the 50 calling in a loop, listing before every call, for %s", dur))
	rows := []row{{
		id: "8a", what: "50 concurrent agent sessions on the gateway, each listing the tools and calling: RSS added per session; p99 of the calls",
		airlock:   fmt.Sprintf("%.0f kB per session; p99 %.1f ms (p50 %.1f ms, %.0f calls/s)", float64(connected-before)/50, res.P99us/1e3, res.P50us/1e3, res.CallsPerS),
		reference: fmt.Sprintf("airlock RSS %.1f MB before, %.1f MB with 50 sessions, %.1f MB after %s of calls", float64(before)/1024, float64(connected)/1024, float64(after)/1024, dur),
		result:    "—", goal: "reported", verdict: "info",
	}}
	if soak <= 0 {
		rows = append(rows, row{id: "8b", what: "soak: 50 sessions listing and calling, RSS flat", verdict: "skipped: --quick (the full run soaks 10 minutes; --soak DURATION)"})
		return rows, nil
	}
	s, err := r.soak(g, soak)
	if err != nil {
		return rows, err
	}
	return append(rows, s), nil
}

// soak runs 50 sessions listing and calling for d and samples the airlock process's
// RSS and threads every d/20. Flat means the last quarter's highest RSS is within 10%
// (or 4 MB) of the first quarter's highest.
func (r *runner) soak(g *gatewayUnderTest, d time.Duration) (row, error) {
	logf("row 8: soak, 50 sessions for %v", d)
	argv := r.agentArgs(false, g, "-c", "50", "-d", d.String(), "-list")
	cmd := exec.Command(argv[0], argv[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return row{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var rss []int
	var threads []int
	every := d / 20
	tick := time.NewTicker(every)
	defer tick.Stop()
	var err error
loop:
	for {
		select {
		case err = <-done:
			break loop
		case <-tick.C:
			if kb, e := procStatusKB(g.pid, "VmRSS"); e == nil {
				rss = append(rss, kb)
			}
			if n, e := procStatusKB(g.pid, "Threads"); e == nil {
				threads = append(threads, n)
			}
		}
	}
	if err != nil {
		return row{}, fmt.Errorf("soak agent: %v %s %s", err, out.String(), tail(errb.String(), 500))
	}
	var res agentResult
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	_ = json.Unmarshal([]byte(lines[len(lines)-1]), &res)
	if len(rss) < 8 {
		return row{}, fmt.Errorf("soak: only %d RSS samples", len(rss))
	}
	q := len(rss) / 4
	first, last := slices.Max(rss[:q]), slices.Max(rss[len(rss)-q:])
	flat := float64(last) <= 1.1*float64(first) || last-first <= 4096
	r.commands = append(r.commands, fmt.Sprintf("row 8 soak: `bench/agent -c 50 -list -d %v` on the same airlock; VmRSS and Threads of airlock every %v", d, every))
	mb := func(kb int) string { return fmt.Sprintf("%.1f", float64(kb)/1024) }
	var samples []string
	for _, kb := range rss {
		samples = append(samples, mb(kb))
	}
	return row{
		id: "8b", what: fmt.Sprintf("soak: 50 sessions listing and calling for %v, airlock's RSS sampled every %v", d, every),
		airlock:   fmt.Sprintf("RSS MB %s; threads %d → %d; %d calls, p99 %.1f ms", strings.Join(samples, " "), threads[0], threads[len(threads)-1], res.Calls, res.P99us/1e3),
		reference: fmt.Sprintf("highest RSS of the first quarter %s MB, of the last %s MB", mb(first), mb(last)),
		result:    fmt.Sprintf("%+.1f MB", float64(last-first)/1024),
		brief:     fmt.Sprintf("%+.1f MB of RSS from the first quarter to the last over %v", float64(last-first)/1024, d),
		goal:      "flat (last quarter ≤ first +10% or +4 MB)", verdict: verdict(flat),
	}, nil
}
