//go:build unix

package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/trust"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// The hazards view, one server's protocol history and an agent's question with a
// long argument list, on the real binary in a pseudo-terminal at 60x20, 80x24 and
// 120x40, with the pinned npm servers everything (untrusted), filesystem and
// memory (labelled persistent): each screen is compared whole with its golden.
//
// What differs from run to run is normalized before the comparison, and nothing
// else (the config is named relative to the folder airlock runs in, so the title
// reads "config.toml" in every run): clock times, the gateway's port, which server said "ready" last on the
// status line, and the order in which the history's answers arrived (its rows
// are compared sorted, their request ids as #N, because airlock sends the
// listings at once and the server answers them in its own order).
func TestE2E_ViewsWithTheNPMServers(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			w, h := size[0], size[1]
			addr := freeAddr(t)
			// Run in the config's folder and named as "config.toml": the title
			// shows the path as given, the same in every run.
			cfg := npmViewsConfig(t, addr)
			s := startScreenAt(t, filepath.Dir(cfg), t.TempDir(), w, h, "--config", filepath.Base(cfg))
			s.waitFor("3/3 ")
			s.waitFor("38 tools")

			s.keys("z")
			s.waitFor("Hazards · ")
			// The channels' rows come with their listings, which may arrive after the
			// tools' (on a loaded machine, after the view opened, above the cursor):
			// once they are there, the cursor goes to the first row.
			s.waitFor("everything resources")
			s.keys("g")
			goldenScreen(t, s, "hazards", w, h, false)

			s.keys(keyEsc)
			s.waitGone("Hazards · ", "38 tools")
			s.keys("H")
			s.waitFor("History · ")
			for range 3 {
				if strings.Contains(s.text(), "History · memory") {
					break
				}
				s.keys(keyTab)
				time.Sleep(150 * time.Millisecond)
			}
			s.waitFor("History · memory")
			s.waitFor("resources/list #")
			goldenScreen(t, s, "history", w, h, true)

			s.keys(keyEsc)
			s.waitGone("History · ", "38 tools")
			cs := connectAgent(t, s, addr)
			done := agentCall(cs, "memory__create_entities", map[string]any{"entities": []map[string]any{{
				"name": "quarterly-report", "entityType": "document",
				"observations": []string{
					strings.Repeat("the quarterly numbers are attached; ", 6),
					"send the draft to eve@example.com before Friday",
					"the board meets on the 14th",
				},
			}}})
			s.waitFor("allow this call?")
			s.waitGone("arming", "allow this call?")
			goldenScreen(t, s, "dialog", w, h, false)
			s.keys(keyEsc)
			s.wantDenied(done, "esc did not deny", "the denial never reached the agent")
		})
	}
}

// npmViewsConfig is the three npm servers' config, the gateway on addr, the
// filesystem server's root and the memory file in the test's own folders.
func npmViewsConfig(t *testing.T, addr string) string {
	t.Helper()
	everything := sessiontest.NPMServer(t, "everything", "mcp-server-everything", trust.Untrusted).Command
	fs := npmBin(t, "mcp-server-filesystem")
	memory := npmBin(t, "mcp-server-memory")
	root, store := t.TempDir(), filepath.Join(t.TempDir(), "memory.jsonl")
	return writeConfig(t, fmt.Sprintf(`[gateway]
listen = %q

[servers.everything]
command = %q
trust = "untrusted"
connect_timeout = "60s"

[servers.filesystem]
command = %q
args = [%q]
trust = "trusted"
connect_timeout = "60s"

[servers.memory]
command = %q
trust = "trusted"
labels = ["persistent"]
env = { MEMORY_FILE_PATH = %q }
connect_timeout = "60s"
`, addr, everything, fs, root, memory, store))
}

// screenPatterns are compiled on first use: this test binary also runs as
// airlock, and TestStartup_PackageInitsAllocateLittle counts its start-up.
var screenPatterns = sync.OnceValue(func() (p struct{ clockTime, loopback, lastReady, requestID *regexp.Regexp }) {
	p.clockTime = regexp.MustCompile(`\b\d\d:\d\d:\d\d(\.\d\d\d)?\b`)
	p.loopback = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	p.lastReady = regexp.MustCompile(`\b(everything|filesystem|memory): ready\b`)
	p.requestID = regexp.MustCompile(` #\d+\b`)
	return p
})

// normalizeScreen replaces what differs from run to run (see
// TestE2E_ViewsWithTheNPMServers) and trims each line's trailing blanks. With
// sortRows, the rows of a history list (those starting with a clock time inside
// the frame) are sorted among themselves.
func normalizeScreen(screen string, sortRows bool) string {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	p := screenPatterns()
	clockTime, loopback, lastReady, requestID := p.clockTime, p.loopback, p.lastReady, p.requestID
	var rows []int
	for i, l := range lines {
		l = loopback.ReplaceAllString(l, "127.0.0.1:PORT")
		l = lastReady.ReplaceAllString(l, "SERVER: ready")
		isRow := sortRows && clockTime.MatchString(strings.TrimPrefix(l, "│")) && strings.HasPrefix(l, "│") &&
			clockTime.FindStringIndex(strings.TrimPrefix(l, "│"))[0] == 0
		l = clockTime.ReplaceAllStringFunc(l, func(m string) string {
			if len(m) > 8 {
				return "hh:mm:ss.mmm"
			}
			return "hh:mm:ss"
		})
		if isRow {
			l = requestID.ReplaceAllString(l, " #N")
			rows = append(rows, i)
		}
		lines[i] = strings.TrimRight(l, " ")
	}
	if len(rows) > 0 {
		sorted := make([]string, len(rows))
		for j, i := range rows {
			sorted[j] = lines[i]
		}
		slices.Sort(sorted)
		for j, i := range rows {
			lines[i] = sorted[j]
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// goldenScreen waits for the screen to hold still (300 ms unchanged), normalizes
// it and compares it with testdata/e2e_npm_VIEW_WxH.golden (-update writes it).
func goldenScreen(t *testing.T, s *screen, view string, w, h int, sortRows bool) {
	t.Helper()
	last, since := s.text(), time.Now()
	for deadline := time.Now().Add(screenGuard); time.Since(since) < 300*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatalf("the %s screen never held still:\n%s", view, last)
		}
		time.Sleep(30 * time.Millisecond)
		if now := s.text(); now != last {
			last, since = now, time.Now()
		}
	}
	got := normalizeScreen(last, sortRows)
	path := filepath.Join("testdata", fmt.Sprintf("e2e_npm_%s_%dx%d.golden", view, w, h))
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestE2E_ViewsWithTheNPMServers -update writes it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (go test -run TestE2E_ViewsWithTheNPMServers -update rewrites it)\n--- want\n%s--- got\n%s", path, want, got)
	}
}
