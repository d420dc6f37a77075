package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/airlock-mcp/airlock/session/statefile"
)

// gatewayAddrFile is where a running gateway records the address it listens on, in
// its state dir, so that `airlock gateway snippet` and `airlock bridge` find it
// where it runs (a --gateway flag on them still overrides).
const gatewayAddrFile = "gateway.addr"

// recordGatewayAddr writes the address of the gateway that serves url into
// stateDir and returns a function that removes it again (only while it still
// holds this address: a second airlock may have replaced it).
func recordGatewayAddr(stateDir, url string) (func(), error) {
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return func() {}, err
	}
	path := filepath.Join(stateDir, gatewayAddrFile)
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return func() {}, err
	}
	if err := statefile.WriteFile(path, []byte(addr+"\n")); err != nil {
		return func() {}, err
	}
	return func() {
		if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == addr {
			_ = os.Remove(path)
		}
	}, nil
}

// recordedGatewayAddr returns the address a running gateway recorded in stateDir.
func recordedGatewayAddr(stateDir string) (string, bool) {
	b, err := statefile.ReadFile(filepath.Join(stateDir, gatewayAddrFile))
	if err != nil {
		return "", false
	}
	addr := strings.TrimSpace(string(b))
	if len(addr) > 300 {
		return "", false
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", false
	}
	return addr, true
}
