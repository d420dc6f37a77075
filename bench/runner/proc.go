package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A proc is one whole-process command that a row times: started, run to its end,
// output discarded.
type proc struct {
	name string
	argv []string
	// ok checks one run's stdout before timing starts, so a row never times a
	// command that fails fast.
	ok func(stdout []byte) error
}

// procTimes are the pooled runs of one proc.
type procTimes struct {
	wall []time.Duration
	cpu  time.Duration // mean user+sys of one run, the process and its children
}

func (t *procTimes) median() time.Duration { return medianDur(t.wall) }

// verify runs each proc once and checks its exit status and output.
func verify(procs []proc) error {
	for _, p := range procs {
		var out, errb bytes.Buffer
		cmd := exec.Command(p.argv[0], p.argv[1:]...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %v\n%s", p.name, err, tail(errb.String(), 2000))
		}
		if p.ok != nil {
			if err := p.ok(out.Bytes()); err != nil {
				return fmt.Errorf("%s: %v", p.name, err)
			}
		}
	}
	return nil
}

// timeLoop times procs with a small Go loop: warmup runs, then rounds in which every
// proc runs once, the order rotated each round, so a change in the machine's load
// reaches every proc alike. Used when hyperfine is absent and in --quick.
func timeLoop(procs []proc, warmup, rounds int) (map[string]*procTimes, error) {
	res := map[string]*procTimes{}
	cpu := map[string]time.Duration{}
	for _, p := range procs {
		res[p.name] = &procTimes{}
	}
	for r := range warmup + rounds {
		for i := range procs {
			p := procs[(i+r)%len(procs)]
			cmd := exec.Command(p.argv[0], p.argv[1:]...)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("%s: %v\n%s", p.name, err, tail(errb.String(), 2000))
			}
			if r < warmup {
				continue
			}
			res[p.name].wall = append(res[p.name].wall, took)
			cpu[p.name] += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
	}
	for name, t := range res {
		t.cpu = cpu[name] / time.Duration(len(t.wall))
	}
	return res, nil
}

// hyperfineArgs is the hyperfine command line for one round of procs.
func hyperfineArgs(procs []proc, warmup, runs int, export string) []string {
	args := []string{"-N", "--style", "none", "--warmup", fmt.Sprint(warmup), "--runs", fmt.Sprint(runs)}
	if export != "" {
		args = append(args, "--export-json", export)
	}
	for _, p := range procs {
		args = append(args, "-n", p.name, shellJoin(p.argv))
	}
	return args
}

// timeHyperfine times procs with hyperfine -N (no shell) in rounds: each round runs
// every proc runs times, one after the other; the runs of all rounds are pooled.
// Rounds spread a change in the machine's load over every proc.
func timeHyperfine(hyperfine, dir string, procs []proc, warmup, rounds, runs int) (map[string]*procTimes, error) {
	res := map[string]*procTimes{}
	cpu := map[string]float64{}
	for r := range rounds {
		// Rotate the order each round, as timeLoop does.
		order := append(slices.Clone(procs[r%len(procs):]), procs[:r%len(procs)]...)
		export := filepath.Join(dir, fmt.Sprintf("hyperfine-%d.json", time.Now().UnixNano()))
		cmd := exec.Command(hyperfine, hyperfineArgs(order, warmup, runs, export)...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("hyperfine: %v\n%s", err, tail(errb.String(), 2000))
		}
		b, err := os.ReadFile(export)
		if err != nil {
			return nil, err
		}
		var out struct {
			Results []struct {
				Command string    `json:"command"`
				User    float64   `json:"user"`
				System  float64   `json:"system"`
				Times   []float64 `json:"times"`
			} `json:"results"`
		}
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, fmt.Errorf("reading %s: %w", export, err)
		}
		for _, r := range out.Results {
			t := res[r.Command]
			if t == nil {
				t = &procTimes{}
				res[r.Command] = t
			}
			for _, s := range r.Times {
				t.wall = append(t.wall, time.Duration(s*float64(time.Second)))
			}
			cpu[r.Command] += (r.User + r.System) * float64(len(r.Times))
		}
	}
	for name, t := range res {
		t.cpu = time.Duration(cpu[name] / float64(len(t.wall)) * float64(time.Second))
	}
	return res, nil
}

func medianDur(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// shellJoin quotes argv for hyperfine, which splits a command like a POSIX shell.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
