//lint:file-ignore SA1019 roots are deprecated by the 2026-07-28 spec (SEP-2577); airlock supports them so today's servers can be explored

package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// AddRoot makes a relative path absolute from the working directory and cleans
// it, keeps a symbolic link as typed, refuses a root twice and a missing folder;
// RemoveRoot removes a root whose folder is gone since, and removing the last one
// leaves an empty list, the capability still declared. The server sees each list.
func TestRoots_AddAndRemoveForThisSession(t *testing.T) {
	a, dir := t.TempDir(), t.TempDir()
	b := filepath.Join(dir, "b")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(b, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a, link); err != nil {
		t.Skip(err)
	}
	m := sessiontest.Start(t, sessiontest.NewConfig(config.Server{Name: "rooted", Trust: trust.Trusted, Roots: []string{a}}),
		session.Options{InProcess: map[string]*mcp.Server{"rooted": rootsServer(make(chan struct{}, 16))}})
	listed := func() string {
		t.Helper()
		out, err := m.Call(context.Background(), model.CallRequest{Server: "rooted", Tool: "roots"})
		if err != nil {
			t.Fatal(err)
		}
		return sessiontest.TextOf(out.Result)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, b)
	if err != nil {
		t.Fatal(err)
	}
	p, uri, err := m.AddRoot("rooted", "  "+rel+"/../b/. ")
	if err != nil || p != b || uri != fileURI(b) {
		t.Fatalf("AddRoot(relative) = %q %q %v, want %s", p, uri, err, b)
	}
	if p, _, err := m.AddRoot("rooted", link); err != nil || p != link {
		t.Fatalf("AddRoot(link) = %q %v, want the link kept as typed", p, err)
	}
	sessiontest.WaitFor(t, "the server lists all three", 10*time.Second, func() bool {
		return strings.Count(listed(), "file://") == 3 && strings.Contains(listed(), fileURI(link))
	})
	if _, _, err := m.AddRoot("rooted", b); err == nil || !strings.Contains(err.Error(), "a root already") {
		t.Errorf("a root twice: %v", err)
	}
	if _, _, err := m.AddRoot("rooted", filepath.Join(a, "missing")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a missing folder: %v", err)
	}

	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{fileURI(link), fileURI(b), fileURI(a)} {
		if err := m.RemoveRoot("rooted", u); err != nil {
			t.Fatalf("RemoveRoot(%s): %v", u, err)
		}
	}
	if err := m.RemoveRoot("rooted", fileURI(a)); err == nil {
		t.Error("removing a root that is not one did not fail")
	}
	sessiontest.WaitFor(t, "the server lists none", 10*time.Second, func() bool { return listed() == "" })
	if sv, _ := m.Snapshot().Server("rooted"); sv.Roots == nil || len(sv.Roots) != 0 {
		t.Errorf("roots after removing every one: %#v, want an empty list, still declared", sv.Roots)
	}
}
