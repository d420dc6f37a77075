//go:build unix

package gateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/gateway"
	"github.com/airlock-mcp/airlock/session/pins"
)

// The files airlock trusts are opened without following links,
// must be the user's own and private; otherwise airlock refuses with a sentence
// saying what to do, or (the gateway token) replaces the file and says so.

// A gateway token that is a link to another file (one an attacker can read) is
// replaced by a new private token; the link's target is neither read as the token
// nor written.
func TestStateFiles_SymlinkedTokenReplaced(t *testing.T) {
	dir := t.TempDir()
	known := strings.Repeat("a", 64)
	target := filepath.Join(t.TempDir(), "attacker-knows-this")
	if err := os.WriteFile(target, []byte(known+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "gateway.token")); err != nil {
		t.Fatal(err)
	}
	var notes []string
	tok, err := gateway.OpenToken(dir, func(s string) { notes = append(notes, s) })
	if err != nil {
		t.Fatal(err)
	}
	if tok == known {
		t.Fatal("the token was read through the symbolic link")
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "symbolic link") || !strings.Contains(notes[0], "new token") {
		t.Errorf("notes %q: want one saying the link was replaced by a new token", notes)
	}
	fi, err := os.Lstat(filepath.Join(dir, "gateway.token"))
	if err != nil || fi.Mode()&os.ModeSymlink != 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("gateway.token after: %v %v, want a 0600 regular file", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != known+"\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	again, err := gateway.OpenToken(dir, func(s string) { t.Errorf("second open noted %q", s) })
	if err != nil || again != tok {
		t.Errorf("second open: %q %v, want the new token kept", again, err)
	}
}

// A token others can read is replaced too, and the note says why.
func TestStateFiles_LooseTokenReplaced(t *testing.T) {
	dir := t.TempDir()
	old := strings.Repeat("b", 64)
	path := filepath.Join(dir, "gateway.token")
	if err := os.WriteFile(path, []byte(old+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	var notes []string
	tok, err := gateway.OpenToken(dir, func(s string) { notes = append(notes, s) })
	if err != nil || tok == old {
		t.Fatalf("token %q, %v: want a new one", tok, err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "0644") || !strings.Contains(notes[0], "new token") {
		t.Errorf("notes %q", notes)
	}
}

// Pins others may read or write are refused with a sentence saying what to do;
// nothing is loaded from them and nothing is written over them.
func TestStateFiles_GroupReadablePinsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	if err := os.WriteFile(path, []byte(`{"version":1,"servers":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	_, err := pins.Open(path)
	if err == nil {
		t.Fatal("group-readable pins were opened")
	}
	for _, want := range []string{path, "mode 0640", "chmod 600 " + path} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// A pins file that is a symbolic link is refused, not followed.
func TestStateFiles_SymlinkedPinsRefused(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	os.WriteFile(target, []byte(`{"version":1,"servers":{}}`), 0o600)
	path := filepath.Join(dir, "pins.json")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	_, err := pins.Open(path)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), "move it aside") {
		t.Fatalf("err = %v, want a refusal naming the link", err)
	}
}

// The audit log is never appended through a link: the sentence names the way out.
func TestStateFiles_SymlinkedAuditRefused(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "somewhere.jsonl")
	os.WriteFile(target, nil, 0o600)
	path := filepath.Join(dir, "audit.jsonl")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	a, err := audit.Open(path)
	if err == nil {
		a.Close()
		t.Fatal("the audit log was opened through a link")
	}
	for _, want := range []string{"audit.jsonl is a symbolic link", "refuses to follow it", "move it aside", "[audit] path"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// A dangling link is not created through either.
	os.Remove(target)
	if a, err := audit.Open(path); err == nil {
		a.Close()
		t.Fatal("opened through a dangling link")
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the dangling link's target was created")
	}
}

// A new audit log is created private whatever the umask.
func TestStateFiles_AuditCreatedPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v %v, want 0600", fi.Mode(), err)
	}
}

// Files owned by another user are refused, even when their mode is private. Only
// root can make such a file, so this runs as root (CI) and is skipped otherwise.
func TestStateFiles_OtherOwnerRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to chown a file to another user")
	}
	const nobody = 65534
	dir := t.TempDir()
	pinsPath := filepath.Join(dir, "pins.json")
	auditPath := filepath.Join(dir, "audit.jsonl")
	for _, p := range []string{pinsPath, auditPath} {
		if err := os.WriteFile(p, []byte{}, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(pinsPath, nil, 0o600)
	if _, err := pins.Open(pinsPath); err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		t.Errorf("pins owned by nobody: %v", err)
	}
	if a, err := audit.Open(auditPath); err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		if a != nil {
			a.Close()
		}
		t.Errorf("audit log owned by nobody: %v", err)
	}
	tokDir := t.TempDir()
	tokPath := filepath.Join(tokDir, "gateway.token")
	os.WriteFile(tokPath, []byte(strings.Repeat("c", 64)), 0o600)
	os.Chown(tokPath, nobody, nobody)
	var notes []string
	if tok, err := gateway.OpenToken(tokDir, func(s string) { notes = append(notes, s) }); err != nil || tok == strings.Repeat("c", 64) || len(notes) != 1 {
		t.Errorf("token owned by nobody: %q %v %q, want replaced and noted", tok, err, notes)
	}
}
