//go:build windows

package statefile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/airlock-mcp/airlock/session/statefile"
)

// Built and vetted in CI (cross vet), run only on a Windows machine: the DACL meaning
// of "private" and link refusal.
func TestWindowsPrivateFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pins.json")
	if err := statefile.WriteFile(path, []byte("ok")); err != nil {
		t.Fatal(err)
	}
	if b, err := statefile.ReadFile(path); err != nil || string(b) != "ok" {
		t.Fatalf("own file: %q %v", b, err)
	}

	// A file anyone may read is refused with the icacls hint.
	shared := filepath.Join(dir, "shared.json")
	os.WriteFile(shared, []byte("x"), 0o600)
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;FA;;;OW)(A;;FR;;;WD)")
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetNamedSecurityInfo(shared, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		t.Fatal(err)
	}
	var e *statefile.Error
	if _, err := statefile.ReadFile(shared); !errors.As(err, &e) || e.Problem != statefile.Shared {
		t.Errorf("Everyone may read: %v", err)
	}

	// A symbolic link is refused (creating one may need a privilege).
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(path, link); err != nil {
		t.Skipf("cannot create a symbolic link here: %v", err)
	}
	if _, err := statefile.ReadFile(link); !errors.As(err, &e) || e.Problem != statefile.Symlink {
		t.Errorf("link: %v", err)
	}
	if err := statefile.WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "ok" {
		t.Errorf("the link's target was written: %q", b)
	}
}
