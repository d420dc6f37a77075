package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/ui/safetext"
)

// runDir is the folder of the state dir where every airlock that uses it (the TUI
// and its gateway, `airlock call`) keeps a marker while it runs: PID.json, removed
// on a clean exit. Several processes may share a state dir, so each has its own
// marker, and one whose process is gone is an airlock that did not shut down
// cleanly (killed, crashed, the machine lost power).
const runDir = "run"

// runMarker is what a marker holds.
type runMarker struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Started time.Time `json:"started"`
}

// maxUncleanShown bounds the unclean shutdowns named one by one; the rest are counted.
const maxUncleanShown = 3

// startRun notes this process in stateDir's run folder and returns what it found
// of the processes before it: a sentence for each that did not shut down cleanly
// (its marker is then removed, so it is said once, with the gateway.addr it left
// behind). done removes this process's marker; a marker that cannot be written is
// itself said, and changes nothing else. With no state dir it does nothing.
//
// onlyOwn is for a one-shot command (`airlock call`, often run by a script whose
// output nobody reads): it says and removes only the markers of its own command,
// and leaves the TUI's for the TUI, which shows them to the person.
func startRun(stateDir, command string, onlyOwn bool) (notices []string, done func()) {
	done = func() {}
	if stateDir == "" {
		return nil, done
	}
	dir := filepath.Join(stateDir, runDir)
	self := os.Getpid()
	entries, _ := os.ReadDir(dir)
	var unclean []string
	for _, e := range entries {
		name := e.Name()
		pid, err := strconv.Atoi(strings.TrimSuffix(name, ".json"))
		if !strings.HasSuffix(name, ".json") || err != nil || pid <= 0 {
			continue // not a marker (a temporary file of a write in progress)
		}
		if pid != self && processAlive(pid) {
			continue // it runs (a marker with this process's pid is an old one's)
		}
		path := filepath.Join(dir, name)
		var mk runMarker
		b, err := statefile.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(b, &mk)
		}
		if onlyOwn && (err != nil || mk.Command != command) {
			continue
		}
		what := fmt.Sprintf("an airlock (pid %d) that used this state dir did not shut down cleanly", pid)
		if err == nil && mk.PID == pid {
			what = fmt.Sprintf("%s (pid %d, started %s) did not shut down cleanly", safetext.Inline(mk.Command), pid, mk.Started.Local().Format(time.DateTime))
		}
		unclean = append(unclean, what)
		_ = os.Remove(path)
		forgetDeadGatewayAddr(stateDir, pid)
	}
	if n := len(unclean); n > 0 {
		shown := unclean[:min(n, maxUncleanShown)]
		s := strings.Join(shown, "; ")
		if n > len(shown) {
			s += fmt.Sprintf("; and %d more", n-len(shown))
		}
		notices = append(notices, s+": calls it was serving may have a decision and no outcome in the audit log (`airlock audit verify` checks the log)")
	}
	mk, _ := json.Marshal(runMarker{PID: self, Command: command, Started: time.Now().UTC().Truncate(time.Second)})
	path := filepath.Join(dir, strconv.Itoa(self)+".json")
	if err := statefile.WriteFileNoSync(path, append(mk, '\n')); err != nil {
		notices = append(notices, "could not note this run in "+dir+" (an unclean shutdown of it will not be noticed): "+err.Error())
		return notices, done
	}
	return notices, func() { _ = os.Remove(path) }
}
