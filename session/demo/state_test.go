package demo_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-mcp/airlock/session/demo"
)

// Every demo starts from an empty demo folder, and a link in it is
// removed without touching what it points to. A second demo while the first runs
// clears nothing (it would pull the first one's token and audit log from under it).
func TestClaimState_ClearsAtStartKeepsARunningDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	outside := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"audit.jsonl", "gateway.token", "changes.toml", "sub/x"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}

	release, cleared, err := demo.ClaimState(dir)
	if err != nil || !cleared {
		t.Fatalf("first claim: cleared %v, %v", cleared, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != ".running" {
			t.Errorf("left from the earlier demo: %s", e.Name())
		}
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "keep" {
		t.Errorf("the link's target was touched: %q %v", b, err)
	}

	// The running demo writes its token; a second demo must not remove it.
	token := filepath.Join(dir, "gateway.token")
	if err := os.WriteFile(token, []byte("running"), 0o600); err != nil {
		t.Fatal(err)
	}
	release2, cleared2, err := demo.ClaimState(dir)
	if err != nil || cleared2 {
		t.Fatalf("second claim while the first runs: cleared %v, %v", cleared2, err)
	}
	release2()
	if b, _ := os.ReadFile(token); string(b) != "running" {
		t.Errorf("the second demo cleared the running demo's token: %q", b)
	}

	release()
	_, cleared3, err := demo.ClaimState(dir)
	if err != nil || !cleared3 {
		t.Fatalf("claim after the first ended: cleared %v, %v", cleared3, err)
	}
	if _, err := os.Stat(token); !os.IsNotExist(err) {
		t.Errorf("the next demo kept the old token: %v", err)
	}
}

// A lock file is a private file too: a link in its place is refused, never created
// or locked through (the demo's, and the same helper serves pins, taint and rules).
func TestClaimState_LinkedLockRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, filepath.Join(dir, ".running")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := demo.ClaimState(dir); err == nil {
		t.Fatal("a linked lock file was used")
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("the lock was created through the link: %v", err)
	}
}
