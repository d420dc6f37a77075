package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/airlock-mcp/airlock/session/statefile"
)

// gatewayAddrFile is where a running gateway records the address it listens on, in
// its state dir, so that `airlock gateway snippet` and `airlock bridge` find it
// where it runs (a --gateway flag on them still overrides). It holds the address
// and, on a second line, the pid of the airlock that serves it: a file left behind
// by a process that is gone (killed) is ignored, and removed at the next start.
const gatewayAddrFile = "gateway.addr"

// recordGatewayAddr writes the address of the gateway that serves url into
// stateDir and returns a function that removes it again (only while it still
// holds this process's record: a second airlock may have replaced it).
func recordGatewayAddr(stateDir, url string) (func(), error) {
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return func() {}, err
	}
	path := filepath.Join(stateDir, gatewayAddrFile)
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return func() {}, err
	}
	rec := addr + "\n" + strconv.Itoa(os.Getpid()) + "\n"
	if err := statefile.WriteFile(path, []byte(rec)); err != nil {
		return func() {}, err
	}
	return func() {
		if b, err := os.ReadFile(path); err == nil && string(b) == rec {
			_ = os.Remove(path)
		}
	}, nil
}

// readGatewayAddr parses stateDir's gateway.addr: the address and the pid that
// serves it (0 in a file without one).
func readGatewayAddr(stateDir string) (addr string, pid int, ok bool) {
	b, err := statefile.ReadFile(filepath.Join(stateDir, gatewayAddrFile))
	if err != nil || len(b) > 400 {
		return "", 0, false
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	addr = strings.TrimSpace(lines[0])
	if _, _, err := net.SplitHostPort(addr); err != nil || len(lines) > 2 {
		return "", 0, false
	}
	if len(lines) == 2 {
		if pid, err = strconv.Atoi(strings.TrimSpace(lines[1])); err != nil || pid <= 0 {
			return "", 0, false
		}
	}
	return addr, pid, true
}

// recordedGatewayAddr returns the address a running gateway recorded in stateDir;
// one whose process is gone is no running gateway.
func recordedGatewayAddr(stateDir string) (string, bool) {
	addr, pid, ok := readGatewayAddr(stateDir)
	if !ok || pid != 0 && !processAlive(pid) {
		return "", false
	}
	return addr, true
}

// forgetDeadGatewayAddr removes stateDir's gateway.addr when process pid, which
// is gone, wrote it.
func forgetDeadGatewayAddr(stateDir string, pid int) {
	if _, p, ok := readGatewayAddr(stateDir); ok && p == pid {
		_ = os.Remove(filepath.Join(stateDir, gatewayAddrFile))
	}
}
