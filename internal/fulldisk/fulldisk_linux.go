// Package fulldisk gives tests real file systems that misbehave: a small tmpfs that
// fills up, or an ext4 whose times are whole seconds (MountCoarse). The tmpfs is
// mounted on a new folder for one test and unmounted after it, with a file that
// takes its last byte. It is test support, Linux only, and needs root (tests skip
// with the reason otherwise); the tests of full disks in session/audit and
// cmd/airlock share it.
package fulldisk

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size (a mount option such as "256k") on a new folder,
// private to its owner, unmounted when the test ends; without root, or where the
// mount is refused, the test is skipped saying why.
func Mount(t testing.TB, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs to fill needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// Fill writes the file dir/filler until the filesystem is full to the last byte
// (pages first, then byte by byte) and returns its path; removing it gives the
// space back. A write that fails for another reason than a full disk fails the
// test.
func Fill(t testing.TB, dir string) string {
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

// MountCoarse mounts a small ext4 whose inodes are 128 bytes, so that its files'
// times are whole seconds (as on ext3, HFS+ and many NFS servers), on a new folder
// for one test, unmounted when it ends. On it two writes within a second keep
// every time, and ext4 gives a freed inode number to the next file: what a stamp
// must tell apart without the clock's help. Without root, mkfs.ext4 or a loop
// device, the test is skipped saying why.
func MountCoarse(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting an ext4 image needs root")
	}
	img := filepath.Join(t.TempDir(), "coarse.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 8<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-I", "128", img).CombinedOutput(); err != nil {
		t.Skipf("cannot make an ext4 image: %v %s", err, out)
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount an ext4 image: %v %s", err, out)
	}
	t.Cleanup(func() {
		// Lazily: a store under test may still hold one of its files open.
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}
