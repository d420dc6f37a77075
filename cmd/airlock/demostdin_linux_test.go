package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDemoServer_NoThreadWaitsInRead: a demo server idle between messages has no OS
// thread blocked in read(2) on its stdin pipe. A go1.26.8 demo server that read stdin
// blocking hung through the gateway 5 times in about 3.2 million calls: a collection's
// stop-the-world, begun while a request was decoded, waited for the thread in read(2)
// until the client's next message (the cancellation, at the call timeout).
func TestDemoServer_NoThreadWaitsInRead(t *testing.T) {
	cmd := asAirlock(t, nil, nil, "demo-server", "docs")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	out := bufio.NewReader(outPipe)
	if _, err := in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("initialize answered %q, %v", line, err)
	}
	waiting, flags := threadsInPipeRead(t, cmd.Process.Pid)
	if len(waiting) > 0 {
		t.Errorf("an idle demo server has a thread blocked reading its stdin (%v; stdin flags %s): read it through the poller", waiting, flags)
	}
}

// TestBridge_NoThreadWaitsInRead: the same for `airlock bridge`, whose stdin is the
// agent's pipe.
func TestBridge_NoThreadWaitsInRead(t *testing.T) {
	r := startBridgeRig(t, t.TempDir(), false)
	bridge, stdin, stdout := r.bridge(t, nil)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("the agent did not connect through the bridge: %v", err)
	}
	defer cs.Close()
	waiting, flags := threadsInPipeRead(t, bridge.Process.Pid)
	if len(waiting) > 0 {
		t.Errorf("an idle bridge has a thread blocked reading its stdin (%v; stdin flags %s): read it through the poller", waiting, flags)
	}
}

// threadsInPipeRead waits until the process pid has settled and returns the
// threads it has blocked in a pipe's read(2), and its stdin's flags.
func threadsInPipeRead(t *testing.T, pid int) (waiting []string, flags string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "fdinfo", "0")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "flags:"); ok {
				flags = strings.TrimSpace(v)
			}
		}
	}
	// The process now waits for its next message. Look a few times: a thread may be
	// on its way into a wait.
	for range 20 {
		time.Sleep(10 * time.Millisecond)
		waiting = waiting[:0]
		tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			w, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", task.Name(), "wchan"))
			if strings.Contains(string(w), "pipe_read") {
				waiting = append(waiting, task.Name()+" "+string(w))
			}
		}
		if len(waiting) > 0 {
			break
		}
	}
	return waiting, flags
}
