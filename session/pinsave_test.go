package session_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/pins"
	"github.com/airlock-mcp/airlock/trust"
)

// TestPins_ListingShownBeforeItsPinsAreWritten: a first start with
// 10,000 tools wrote megabytes of pins.json before the first snapshot. The listing is
// now ready while the write is under way, and a call is still forwarded only after
// the write: what runs has its pin on disk.
func TestPins_ListingShownBeforeItsPinsAreWritten(t *testing.T) {
	writing, release := make(chan struct{}, 10), make(chan struct{})
	session.SetPinsSaveHook(t, func() error {
		writing <- struct{}{}
		<-release
		return nil
	})
	path := filepath.Join(t.TempDir(), "pins.json")
	store, err := pins.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	u := sessiontest.NewUpstream("docs")
	u.Add("read_doc", "Read a document.", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: sessiontest.Hint(false)})
	cfg := sessiontest.NewConfig(sessiontest.Inproc("docs", trust.Trusted))
	m := session.New(cfg, session.Options{Pins: store, InProcess: map[string]*mcp.Server{"docs": u.Srv}})
	defer m.Close()
	released := false
	defer func() { // before Close
		if !released {
			close(release)
		}
	}()
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatalf("the listing waited for its pins to be written: %v", err)
	}
	<-writing
	if ti, ok := m.Snapshot().Tool("docs", "read_doc"); !ok || ti.Pin != trust.PinNew {
		t.Fatalf("tool while its pin is written: %+v %v", ti, ok)
	}

	called := make(chan error, 1)
	go func() {
		_, err := m.Call(context.Background(), model.CallRequest{Server: "docs", Tool: "read_doc"})
		called <- err
	}()
	select {
	case err := <-called:
		t.Fatalf("a call ended (%v) before the pins were written", err)
	case <-time.After(300 * time.Millisecond):
	}
	if got := u.Calls("read_doc"); len(got) != 0 {
		t.Fatalf("the call was forwarded before its pin was on disk")
	}
	close(release)
	released = true
	if err := <-called; err != nil {
		t.Fatal(err)
	}
	if len(u.Calls("read_doc")) != 1 {
		t.Fatal("the call was not forwarded after the write")
	}
	again, err := pins.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if l := again.List(); len(l) != 1 || l[0].Server != "docs" || l[0].Tool != "read_doc" {
		t.Fatalf("the file holds %d pins, want read_doc's", len(l))
	}
}

// TestPins_BackgroundWriteFailureIsReported: a pins write that fails after the
// listing was shown still says so in the server's notices, as a synchronous one did.
func TestPins_BackgroundWriteFailureIsReported(t *testing.T) {
	session.SetPinsSaveHook(t, func() error { return errors.New("disk full") })
	store, err := pins.Open(filepath.Join(t.TempDir(), "pins.json"))
	if err != nil {
		t.Fatal(err)
	}
	u := sessiontest.NewUpstream("docs")
	u.Add("read_doc", "Read a document.", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: sessiontest.Hint(false)})
	cfg := sessiontest.NewConfig(sessiontest.Inproc("docs", trust.Trusted))
	m := sessiontest.Start(t, cfg, session.Options{Pins: store, InProcess: map[string]*mcp.Server{"docs": u.Srv}})
	deadline := time.Now().Add(5 * time.Second)
	for {
		sv, _ := m.Snapshot().Server("docs")
		if slices.ContainsFunc(sv.Notices, func(n string) bool { return strings.Contains(n, "pins could not be saved: disk full") }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no notice of the failed write; notices: %q", sv.Notices)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPins_ListingBuildsASnapshotEarlyOnlyBeforeAPinsWrite: every
// listing built a snapshot at once, so that the first screen would not be built while
// the listing's pins were written; `airlock check` on 20 servers whose pins had not
// changed built 20 snapshots it never read (a profile of the fan-out: 21 builds a run).
// A listing with pins to write still builds one first; a listing with nothing to
// write leaves the build to whoever asks.
func TestPins_ListingBuildsASnapshotEarlyOnlyBeforeAPinsWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	names := []string{"a", "b", "c"}
	run := func(what string, check func(builds int64, m *session.Manager)) {
		t.Helper()
		store, err := pins.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var servers []config.Server
		inProcess := map[string]*mcp.Server{}
		for _, n := range names {
			u := sessiontest.NewUpstream(n)
			u.Add("read_"+n, "Read a document.", &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: sessiontest.Hint(false)})
			servers = append(servers, sessiontest.Inproc(n, trust.Trusted))
			inProcess[n] = u.Srv
		}
		m := session.New(sessiontest.NewConfig(servers...), session.Options{Pins: store, InProcess: inProcess})
		defer m.Close()
		m.Start()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// Wait returns once every server's first attempt, its listing included, is done.
		if err := m.Wait(ctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		check(session.SnapshotBuilds(m), m)
	}
	run("first sight", func(builds int64, _ *session.Manager) {
		if builds == 0 {
			t.Error("first sight: no snapshot was built before the listings' pins were written")
		}
	})
	run("pins unchanged", func(builds int64, m *session.Manager) {
		if builds != 0 {
			t.Errorf("pins unchanged: %d snapshots built before anyone asked for one, want none", builds)
		}
		snap := m.Snapshot()
		if got := session.SnapshotBuilds(m); got != 1 {
			t.Errorf("asked once: %d builds, want 1", got)
		}
		for _, n := range names {
			if sv, ok := snap.Server(n); !ok || sv.Status != model.StatusReady {
				t.Errorf("the snapshot built on demand shows %s as %+v (%v), want ready", n, sv.Status, ok)
			}
		}
		if len(snap.Tools) != len(names) {
			t.Errorf("the snapshot built on demand holds %d tools, want %d", len(snap.Tools), len(names))
		}
	})
}
