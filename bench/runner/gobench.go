package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// benchSamples are the results of go benchmarks: name (without the -GOMAXPROCS
// suffix) -> unit -> one value per run.
type benchSamples map[string]map[string][]float64

// median is the median of one benchmark's unit, and whether there was any.
func (s benchSamples) median(name, unit string) (float64, bool) {
	v := s[name][unit]
	if len(v) == 0 {
		return 0, false
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2], true
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2, true
}

// compileTest builds the test binary of one package (go test -c), so the rounds that
// follow time the benchmarks, not the compiler.
func compileTest(root, pkg, out string) error {
	cmd := exec.Command("go", "test", "-c", "-o", out, "./"+pkg)
	cmd.Dir = root
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &errb, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go test -c ./%s: %v\n%s", pkg, err, tail(errb.String(), 3000))
	}
	return nil
}

// runBench runs the benchmarks matching pattern from a compiled test binary, in the
// package's folder, rounds times with -test.count=1 each: every round runs all the
// matching benchmarks one after the other, so a comparison within a round shares the
// machine's load of the moment (go test -count=N would run N of one benchmark, then N
// of the next). The raw output, benchstat's format, is appended to raw.
func runBench(bin, dir, pattern, benchtime string, rounds int, raw io.Writer) (benchSamples, error) {
	s := benchSamples{}
	for range rounds {
		cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", pattern, "-test.benchtime", benchtime, "-test.count", "1", "-test.benchmem")
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		_, _ = raw.Write(out.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s -test.bench %s: %v\n%s", filepath.Base(bin), pattern, err, tail(out.String(), 3000))
		}
		parseBench(out.Bytes(), s)
	}
	return s, nil
}

var procSuffix = regexp.MustCompile(`-\d+$`)

// parseBench reads lines of the go test benchmark format into s.
func parseBench(out []byte, s benchSamples) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := procSuffix.ReplaceAllString(f[0], "")
		if s[name] == nil {
			s[name] = map[string][]float64{}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			s[name][f[i+1]] = append(s[name][f[i+1]], v)
		}
	}
}

// goBenchRun is one package's benchmarks as bench/run runs them.
type goBenchRun struct {
	pkg       string // folder under the module root
	pattern   string // -test.bench
	benchtime string
	rounds    int
}

// run runs r from the test binary compiled in this run (compiled, package -> binary,
// compiling it first if needed), appending the raw output to rawDir/PKG.txt.
func (r goBenchRun) run(root, work, rawDir string, compiled map[string]string) (benchSamples, error) {
	bin, ok := compiled[r.pkg]
	if !ok {
		bin = filepath.Join(work, strings.ReplaceAll(r.pkg, "/", "_")+".test")
		if err := compileTest(root, r.pkg, bin); err != nil {
			return nil, err
		}
		compiled[r.pkg] = bin
	}
	f, err := os.OpenFile(filepath.Join(rawDir, strings.ReplaceAll(r.pkg, "/", "_")+".txt"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return runBench(bin, filepath.Join(root, r.pkg), r.pattern, r.benchtime, r.rounds, f)
}
