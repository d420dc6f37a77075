//go:build linux

package audit_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/airlock-mcp/airlock/session/audit"
)

// smallTmpfs mounts a tmpfs of 256 KiB on a new folder, unmounted at the end, or
// skips the test saying why.
func smallTmpfs(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs to fill needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fillUp writes a file in dir until the filesystem is full, to the last byte.
func fillUp(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, n := range []int{4096, 1} {
		chunk := bytes.Repeat([]byte("x"), n)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	return p
}

// A seal that fails on a full disk must not leave a state that airlock takes for
// a new, empty log: that log would verify "chain intact" from record 1 and never
// name the log it replaced. It fails with nothing moved; once there is space, it
// seals.
func TestSeal_FullDiskLeavesTheDamagedLogInPlace(t *testing.T) {
	dir := smallTmpfs(t)
	path := filepath.Join(dir, "audit.jsonl")
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := a.Append(rec(i)); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	b, _ := os.ReadFile(path)
	write(t, path, b[:len(b)-10]) // cut: damaged
	filler := fillUp(t, dir)
	if _, err := audit.Seal(path); err == nil {
		t.Fatal("seal on a full disk succeeded")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("after a failed seal the log is gone from its place: %v", err)
	}
	// Room for a record, as when a few bytes come free.
	os.Truncate(filler, 0)
	a, err = audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append(rec(9)); err == nil || !a.Damaged() {
		t.Errorf("after a failed seal: append %v; want the log still refused as damaged", err)
	}
	a.Close()
	s, err := audit.Seal(path)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := audit.VerifyLog(path)
	if err != nil || sum.Sealed == nil || sum.Sealed.File != filepath.Base(s.MovedTo) {
		t.Errorf("the sealed log: %+v %v", sum, err)
	}
}

// A full disk when a segment is full: the records are refused, nothing cut is
// left, and once there is space the next append closes the segment and goes on;
// the log verifies as one chain.
func TestRotation_FullDiskThenRecovers(t *testing.T) {
	dir := smallTmpfs(t)
	path := filepath.Join(dir, "audit.jsonl")
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.SetSegmentBytes(2048)
	n := 0
	for ; n < 8; n++ {
		if err := a.Append(rec(n)); err != nil {
			t.Fatal(err)
		}
	}
	filler := fillUp(t, dir)
	var failed error
	for range 200 {
		if failed = a.Append(rec(n)); failed != nil {
			break
		}
		n++
	}
	if !errors.Is(failed, audit.ErrBroken) || !strings.Contains(failed.Error(), "no space left") {
		t.Fatalf("appending on a full disk: %v", failed)
	}
	if a.Damaged() {
		t.Fatalf("a full disk damaged the log: %v", a.Problem())
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if err := a.Append(rec(n)); err != nil {
			t.Fatalf("after space came back: %v", err)
		}
		n++
	}
	a.Close()
	sum, err := audit.VerifyLog(path)
	if err != nil || sum.Files < 2 {
		t.Errorf("after a full disk across a rotation: %+v %v", sum, err)
	}
}
