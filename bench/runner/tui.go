package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
)

// tuiPeak runs the real airlock TUI on config in a pseudo-terminal of 120x40 behind a
// virtual terminal (which answers the TUI's queries, as a real one would), waits until
// the header shows want (e.g. "10000 tools"; the screen is looked at after every
// read from the terminal), moves through the tool list, and returns the peak resident
// set size of the airlock process (VmHWM, kB) and how long the screen took to show
// want. Its servers are children, not counted.
func tuiPeak(airlock, config, want string, env []string) (peakKB int, ready time.Duration, err error) {
	const cols, rows = 120, 40
	cmd := exec.Command(airlock, "--config", config)
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "TERM=xterm-256color")
	start := time.Now()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: rows, Cols: cols})
	if err != nil {
		return 0, 0, err
	}
	emu := vt.NewEmulator(cols, rows)
	var mu sync.Mutex
	shown := make(chan time.Duration, 1) // when the screen first showed want
	go func() {
		buf := make([]byte, 64<<10)
		seen := false
		for {
			n, err := f.Read(buf)
			if n > 0 {
				mu.Lock()
				_, _ = emu.Write(buf[:n])
				// The screen is looked at after every read is drawn.
				if !seen && strings.Contains(emu.String(), want) {
					seen = true
					shown <- time.Since(start)
				}
				mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { _, _ = io.Copy(f, emu) }() // the terminal's answers
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		f.Close()
	}()
	screen := func() string {
		mu.Lock()
		defer mu.Unlock()
		return emu.String()
	}
	select {
	case ready = <-shown:
	case err := <-done:
		return 0, 0, fmt.Errorf("airlock exited before showing %q (%v); the screen:\n%s", want, err, screen())
	case <-time.After(2 * time.Minute):
		return 0, 0, fmt.Errorf("the screen never showed %q; it shows:\n%s", want, screen())
	}
	// A person's first seconds: the tools pane, a page of moves down, the detail of
	// one tool, back.
	for _, k := range []string{"\t", strings.Repeat("\x1b[B", 40), "\x1b[6~", "\r", "\x1b"} {
		if _, err := f.Write([]byte(k)); err != nil {
			return 0, 0, err
		}
		time.Sleep(300 * time.Millisecond)
	}
	time.Sleep(time.Second)
	peakKB, err = procStatusKB(cmd.Process.Pid, "VmHWM")
	if err != nil {
		return 0, 0, err
	}
	_, _ = f.Write([]byte("q"))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	return peakKB, ready, nil
}

// procStatusKB reads one "NAME: N kB" field of /proc/PID/status.
func procStatusKB(pid int, field string) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
