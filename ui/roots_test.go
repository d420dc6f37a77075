//lint:file-ignore SA1019 roots are deprecated by the 2026-07-28 spec (SEP-2577); airlock supports them so today's servers can be explored

package ui

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/internal/keytest"
)

// rootedServer is a server that, told its roots changed
// (notifications/roots/list_changed), asks for them (roots/list) and sends what
// it was answered on listed.
func rootedServer(listed chan<- []string) *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: "rooted", Version: "1"}, &mcp.ServerOptions{
		RootsListChangedHandler: func(ctx context.Context, req *mcp.RootsListChangedRequest) {
			res, err := req.Session.ListRoots(ctx, nil)
			uris := []string{}
			if err == nil {
				for _, r := range res.Roots {
					uris = append(uris, r.URI)
				}
			}
			listed <- uris
		},
	})
}

func fileURIOf(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

// waitListed waits until the server, told of a change, listed exactly want (sorted).
func waitListed(t *testing.T, h *harness, listed <-chan []string, want ...string) {
	t.Helper()
	slices.Sort(want)
	deadline := time.After(20 * time.Second)
	var last []string
	for {
		select {
		case got := <-listed:
			slices.Sort(got)
			if slices.Equal(got, want) {
				return
			}
			last = got
		case msg := <-h.msgs:
			h.send(msg)
		case <-deadline:
			t.Fatalf("the server never listed %q after list_changed (last %q); screen:\n%s", want, last, h.plain())
		}
	}
}

// TestServerInfo_EditRoots: in a server's info, f opens its roots; n and a path
// typed relative to the working directory (not clean) adds it, absolute and
// cleaned; d removes the selected root. Each change reaches the running server as
// notifications/roots/list_changed, and its roots/list answers the new list. The
// view says the change lasts for this session and what a symbolic link does.
func TestServerInfo_EditRoots(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	listed := make(chan []string, 16)
	cfg := &config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute, Servers: []config.Server{
		{Name: "rooted", Trust: trust.Trusted, ConnectTimeout: 10 * time.Second, CallTimeout: time.Minute, Roots: []string{a}},
	}}
	sess := startManager(t, cfg, map[string]*mcp.Server{"rooted": rootedServer(listed)})
	h := newHarnessFor(t, sess, 80, 24, true, Options{})
	h.keys("tab", "j", "i")
	if h.m.screen != screenInfo || h.m.info.Server.Name != "rooted" {
		t.Fatalf("i did not open the server info:\n%s", h.plain())
	}
	screenHas(t, h.plain(), "f roots")
	h.keys("f")
	if !strings.Contains(h.plain(), "Roots · rooted") {
		t.Fatalf("f did not open the roots:\n%s", h.plain())
	}
	screenHas(t, h.plain(), "Roots · rooted", a, "your config is not changed", "symbolic link")

	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, b)
	if err != nil {
		t.Fatal(err)
	}
	h.keys("n")
	if !h.m.typing() {
		t.Error("typing a root does not hold questions back")
	}
	if f := ansi.Strip(h.m.footerLine()); !strings.Contains(f, "enter add it") || strings.Contains(f, "q quit") {
		t.Errorf("the footer while a path is typed: %q", f)
	}
	for _, k := range keytest.Type(rel + "/./") {
		h.send(k)
	}
	h.keys("enter")
	waitListed(t, h, listed, fileURIOf(a), fileURIOf(b))
	h.waitFor("the new root said and selected", func(m Model) bool {
		return strings.Contains(h.plain(), "added "+b) && strings.Contains(h.plain(), "▸ "+b)
	})
	if sv, _ := sess.Snapshot().Server("rooted"); !slices.Contains(sv.Roots, fileURIOf(b)) {
		t.Errorf("the session's roots %q lack %s", sv.Roots, b)
	}

	// The new root is selected; d removes it.
	h.keys("d")
	waitListed(t, h, listed, fileURIOf(a))
	h.waitFor("the root's removal said, the root gone from the list", func(m Model) bool {
		return strings.Contains(h.plain(), "removed "+b) && !strings.Contains(h.plain(), "  "+b+" ")
	})

	// A path that does not exist is refused, said in the view; nothing changes.
	h.keys("n")
	h.send(tea.PasteMsg{Content: filepath.Join(a, "missing")}) // a pasted path, as typed
	h.keys("enter")
	// The refusal quotes the path, whose length varies with the temp folder's
	// name: it may wrap anywhere, within the path too, so it is looked for with
	// the spaces taken out.
	unbroken := func(s string) string { return strings.ReplaceAll(keytest.Flat(s), " ", "") }
	refused := unbroken(strconv.Quote(filepath.Join(a, "missing")) + " does not exist")
	h.waitFor("the refusal", func(m Model) bool { return strings.Contains(unbroken(m.render()), refused) })
	keytest.Fits(t, h.m.render(), 80, 24, "roots")
	h.send(tea.WindowSizeMsg{Width: 60, Height: 20})
	keytest.Fits(t, h.m.render(), 60, 20, "roots")
	screenHas(t, unbroken(h.m.render()), refused, "Roots·rooted")
	h.keys("esc")
	if h.m.screen != screenInfo {
		t.Fatalf("esc did not return to the info view:\n%s", h.plain())
	}
	h.keys("?")
	screenHas(t, ansi.Strip(h.m.overlay.VP.GetContent()), "its roots")
}

// Roots too long for their row are cut in the middle, and two folders of one
// parent still read apart: a cut at the end would show both as the same row.
func TestServerInfo_RootsCutApart(t *testing.T) {
	base := filepath.Join(t.TempDir(), strings.Repeat("a-long-parent-folder", 4))
	a, b := filepath.Join(base, "alpha"), filepath.Join(base, "beta")
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &config.Config{Policy: trust.DefaultPolicy(), ApprovalTimeout: time.Minute, Servers: []config.Server{
		{Name: "rooted", Trust: trust.Trusted, ConnectTimeout: 10 * time.Second, CallTimeout: time.Minute, Roots: []string{a, b}},
	}}
	sess := startManager(t, cfg, map[string]*mcp.Server{"rooted": rootedServer(make(chan []string, 16))})
	h := newHarnessFor(t, sess, 60, 20, true, Options{})
	h.keys("tab", "j", "i", "f")
	if !strings.Contains(h.plain(), "Roots · rooted") {
		t.Fatalf("f did not open the roots:\n%s", h.plain())
	}
	keytest.Fits(t, h.m.render(), 60, 20, "roots")
	var rows []string
	for _, l := range strings.Split(h.plain(), "\n") {
		if l = strings.Trim(l, "│ ▸"); strings.Contains(l, "…") && strings.HasPrefix(l, "/") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 2 || rows[0] == rows[1] || !strings.HasSuffix(rows[0], "/alpha") || !strings.HasSuffix(rows[1], "/beta") {
		t.Errorf("the two roots' rows %q do not read apart, each with its end:\n%s", rows, h.plain())
	}
}
