//go:build unix

package statefile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/statefile"
)

func problem(t *testing.T, err error) statefile.Problem {
	t.Helper()
	var e *statefile.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want a *statefile.Error", err)
	}
	return e.Problem
}

func TestReadFile_Refusals(t *testing.T) {
	dir := t.TempDir()
	private := filepath.Join(dir, "private")
	os.WriteFile(private, []byte("ok"), 0o600)
	if b, err := statefile.ReadFile(private); err != nil || string(b) != "ok" {
		t.Fatalf("private file: %q %v", b, err)
	}
	if _, err := statefile.ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) || statefile.Refused(err) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}

	link := filepath.Join(dir, "link")
	os.Symlink(private, link)
	if _, err := statefile.ReadFile(link); problem(t, err) != statefile.Symlink {
		t.Errorf("link: %v", err)
	}
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "nowhere"), dangling)
	if _, err := statefile.ReadFile(dangling); problem(t, err) != statefile.Symlink {
		t.Errorf("dangling link: %v", err)
	}

	for _, mode := range []os.FileMode{0o640, 0o604, 0o620, 0o602, 0o700 | 0o010} {
		p := filepath.Join(dir, "loose"+mode.String())
		os.WriteFile(p, []byte("x"), 0o600)
		os.Chmod(p, mode)
		_, err := statefile.ReadFile(p)
		if problem(t, err) != statefile.Shared || !strings.Contains(err.Error(), "chmod 600 "+p) {
			t.Errorf("mode %v: %v", mode, err)
		}
	}
	// Only owner bits: allowed, whatever they are.
	p := filepath.Join(dir, "ro")
	os.WriteFile(p, []byte("x"), 0o400)
	if _, err := statefile.ReadFile(p); err != nil {
		t.Errorf("0400: %v", err)
	}

	// A FIFO cannot hang the open, and is refused.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err == nil {
		done := make(chan error, 1)
		go func() { _, err := statefile.ReadFile(fifo); done <- err }()
		select {
		case err := <-done:
			if problem(t, err) != statefile.NotRegular {
				t.Errorf("fifo: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("opening a FIFO hung")
		}
	}
	if _, err := statefile.ReadFile(dir); problem(t, err) != statefile.NotRegular {
		t.Errorf("directory: %v", err)
	}
}

// WriteFile replaces a link at path with a private file and never writes through it.
func TestWriteFile_ReplacesLinkPrivately(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "target")
	os.WriteFile(target, []byte("theirs"), 0o644)
	path := filepath.Join(dir, "sub", "file")
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.Symlink(target, path)
	if err := statefile.WriteFile(path, []byte("mine")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "theirs" {
		t.Errorf("target written: %q", b)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("after: %v %v", fi.Mode(), err)
	}
	if b, err := statefile.ReadFile(path); err != nil || string(b) != "mine" {
		t.Errorf("read back %q %v", b, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	// A new folder is created 0700.
	deep := filepath.Join(dir, "new", "f")
	if err := statefile.WriteFileNoSync(deep, nil); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Dir(deep)); fi.Mode().Perm() != 0o700 {
		t.Errorf("new folder mode %v", fi.Mode())
	}
}

func TestOpenWrite_CreatesPrivateAndRefusesLinks(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "log")
	f, err := statefile.OpenWrite(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("a\n")
	f.Close()
	f, err = statefile.OpenWrite(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("b\n"), 2); err != nil {
		t.Fatalf("writing at an offset: %v", err)
	}
	f.Close()
	if b, _ := os.ReadFile(path); string(b) != "a\nb\n" {
		t.Errorf("content %q", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	link := filepath.Join(dir, "link")
	os.Symlink(path, link)
	_, err = statefile.OpenWrite(link)
	err = statefile.Advise(err, "or set [audit] path")
	if problem(t, err) != statefile.Symlink || !strings.HasSuffix(err.Error(), "refuses to follow it: move it aside or set [audit] path") {
		t.Errorf("link: %v", err)
	}
}
