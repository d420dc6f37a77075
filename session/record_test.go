package session_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/session/record"
	"github.com/airlock-mcp/airlock/trust"
)

// classified is what a check reports of a snapshot, for comparing live and offline.
type classified struct {
	Servers []string
	Tools   []string
	Hazards []trust.Hazard
}

func classifiedOf(s *model.Snapshot) classified {
	var c classified
	for _, sv := range s.Servers {
		c.Servers = append(c.Servers, sv.Name+" "+sv.Status.String()+" "+sv.Trust.String())
	}
	for _, t := range s.Tools {
		b, _ := json.Marshal(t.Class)
		c.Tools = append(c.Tools, t.Ref.Qualified()+" "+string(b)+" pin="+t.Pin.String()+" fp="+t.Fingerprint)
	}
	c.Hazards = s.Hazards
	return c
}

// recordDemo takes a recording of the in-process demo servers.
func recordDemo(t *testing.T) *model.Recording {
	t.Helper()
	m, _ := sessiontest.DemoInProcess(t, session.Options{})
	return m.Record()
}

func TestSnapshot_RecordingIsStableAndRoundTrips(t *testing.T) {
	var a, b bytes.Buffer
	if err := recordDemo(t).Write(&a); err != nil {
		t.Fatal(err)
	}
	if err := recordDemo(t).Write(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatalf("two recordings of the same servers differ:\n%s", cmp.Diff(a.String(), b.String()))
	}
	if !strings.Contains(a.String(), "\"schema_version\": 1,\n") || !strings.Contains(a.String(), `"resources": null`) {
		t.Fatalf("recording lacks schema_version or the resources key:\n%.400s", a.String())
	}
	rec, err := record.Read(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if err := rec.Write(&c); err != nil {
		t.Fatal(err)
	}
	if c.String() != a.String() {
		t.Fatalf("read and written again differs:\n%s", cmp.Diff(a.String(), c.String()))
	}
	// Servers and tools are sorted, so a diff of two snapshots is a diff of listings.
	var names []string
	for _, s := range rec.Servers {
		names = append(names, s.Name)
		if !slices.IsSortedFunc(s.Tools, func(x, y model.RecordedTool) int { return strings.Compare(x.Name, y.Name) }) {
			t.Errorf("%s: tools not sorted", s.Name)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("servers not sorted: %v", names)
	}
}

func TestSnapshot_OfflineCheckClassifiesLikeLive(t *testing.T) {
	live, _ := sessiontest.DemoInProcess(t, session.Options{})
	var buf bytes.Buffer
	if err := live.Record().Write(&buf); err != nil {
		t.Fatal(err)
	}
	rec, err := record.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// The CI runner has none of the servers' commands: offline never starts them.
	cfg := demo.Config()
	for i := range cfg.Servers {
		cfg.Servers[i].Command = "/nonexistent/airlock-server"
	}
	off, notes := session.NewOffline(cfg, rec, session.Options{})
	defer off.Close()
	if len(notes) != 0 {
		t.Errorf("notes: %v", notes)
	}
	if d := cmp.Diff(classifiedOf(live.Snapshot()), classifiedOf(off.Snapshot())); d != "" {
		t.Fatalf("offline differs from live (-live +offline):\n%s", d)
	}
	if len(off.Snapshot().Hazards) == 0 {
		t.Fatal("the demo has hazards; offline found none")
	}
}

func TestSnapshot_OfflineConfigDecidesTrustAndMissingServersFail(t *testing.T) {
	rec := recordDemo(t)
	cfg := demo.Config()
	for i := range cfg.Servers {
		switch cfg.Servers[i].Name {
		case "mail":
			cfg.Servers[i].Trust = trust.Trusted // the config, not the recording, decides
		case "web":
			cfg.Servers[i].Trust = trust.BlockedServer
		}
	}
	cfg.Servers = append(cfg.Servers, config.Server{Name: "zz-new", Transport: config.TransportStdio, Command: "x"})
	rec.Servers = slices.DeleteFunc(rec.Servers, func(s model.RecordedServer) bool { return s.Name == "docs" })
	rec.Servers = append(rec.Servers, model.RecordedServer{Name: "gone", Status: "ready"})
	m, notes := session.NewOffline(cfg, rec, session.Options{})
	defer m.Close()
	s := m.Snapshot()
	if len(notes) != 1 || !strings.Contains(notes[0], `"gone"`) {
		t.Errorf("notes = %q", notes)
	}
	want := map[string]string{"docs": "not in the snapshot", "web": "blocked in the config", "zz-new": "not in the snapshot"}
	for name, msg := range want {
		sv, _ := s.Server(name)
		if sv.Status != model.StatusFailed || sv.Err == nil || !strings.Contains(sv.Err.Error(), msg) {
			t.Errorf("%s: %v %v, want failed %q", name, sv.Status, sv.Err, msg)
		}
	}
	send, ok := s.Tool("mail", "send_email")
	if !ok || send.Class.Tier != trust.TierRead {
		t.Errorf("trusted mail's send_email: %v (its claims are believed once the config trusts it)", send.Class.Tier)
	}
}

func TestDrift_ReportsEveryDifference(t *testing.T) {
	old := recordDemo(t)
	cur := recordDemo(t)
	if d := record.Drift(old, cur); len(d) != 0 {
		t.Fatalf("no change, drift %v", d)
	}
	find := func(r *model.Recording, name string) *model.RecordedServer {
		for i := range r.Servers {
			if r.Servers[i].Name == name {
				return &r.Servers[i]
			}
		}
		t.Fatalf("no server %s", name)
		return nil
	}
	notes := find(cur, "notes")
	notes.Tools = slices.DeleteFunc(notes.Tools, func(t model.RecordedTool) bool { return t.Name == "delete_note" })
	notes.Tools = append(notes.Tools, model.RecordedTool{Name: "wipe", SHA256: "x", Definition: json.RawMessage(`{"name":"wipe"}`)})
	mail := find(cur, "mail")
	mail.Instructions, mail.InstructionsSHA256 = "new", trust.InstructionsFingerprint("new")
	def := strings.Replace(string(mail.Tools[0].Definition), "Send an email", "Send an e-mail", 1)
	fp, _ := trust.ToolFingerprint(json.RawMessage(def))
	mail.Tools[0].Definition, mail.Tools[0].SHA256 = json.RawMessage(def), fp
	web := find(cur, "web")
	web.Status, web.Error, web.Tools = "failed", "boom", nil
	cur.Servers = slices.DeleteFunc(cur.Servers, func(s model.RecordedServer) bool { return s.Name == "docs" })
	cur.Servers = append(cur.Servers, model.RecordedServer{Name: "extra", Status: "ready"})

	var got []string
	for _, f := range record.Drift(old, cur) {
		got = append(got, string(f.Kind)+" "+f.Server+" "+f.Tool+": "+f.Detail)
	}
	want := []string{
		"server-removed docs : in the snapshot, not in the live config",
		"server-added extra : live, not in the snapshot",
		"instructions-changed mail : instructions changed (sha256 " + find(old, "mail").InstructionsSHA256[:12] + " → " + trust.InstructionsFingerprint("new")[:12] + ")",
		"tool-changed mail send_email: definition changed: description",
		"tool-removed notes delete_note: tool no longer listed",
		"tool-added notes wipe: new tool",
		"server-status web : ready in the snapshot, failed now: boom",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("drift (-want +got):\n%s", d)
	}
}

// A hostile listing (a repeated name, an entry that is not an object, a schema too
// deep to fingerprint, a name with an escape sequence) is recorded and evaluated
// offline exactly as it was live: the same tools blocked for the same reasons.
func TestSnapshot_HostileListingOfflineMatchesLive(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 300) + `1` + strings.Repeat(`}`, 300)
	tools := []string{
		`{"name":"dup","inputSchema":{"type":"object"}}`,
		`{"name":"dup","inputSchema":{"type":"object"},"description":"second"}`,
		`42`,
		`{"name":"deep","inputSchema":{"type":"object","properties":` + deep + `}}`,
		`{"name":"evil\u001b[2Jname","inputSchema":{"type":"object"}}`,
		`{"name":"send_it","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
	}
	srv := sessiontest.RawServer(t, "evil", trust.Untrusted, sessiontest.Script(sessiontest.Page(tools...), `"instructions":"hi"`))
	live := sessiontest.Start(t, sessiontest.NewConfig(srv), session.Options{})
	var buf bytes.Buffer
	if err := live.Record().Write(&buf); err != nil {
		t.Fatal(err)
	}
	rec, err := record.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	srv.Command = "/nonexistent"
	off, _ := session.NewOffline(sessiontest.NewConfig(srv), rec, session.Options{})
	defer off.Close()
	if d := cmp.Diff(classifiedOf(live.Snapshot()), classifiedOf(off.Snapshot())); d != "" {
		t.Fatalf("offline differs from live (-live +offline):\n%s", d)
	}
	lv, _ := live.Snapshot().Server("evil")
	ov, _ := off.Snapshot().Server("evil")
	if d := cmp.Diff(lv.Notices, ov.Notices); d != "" {
		t.Errorf("notices differ (-live +offline):\n%s", d)
	}
	blocked := 0
	for _, tl := range off.Snapshot().Tools {
		if tl.Class.Tier == trust.TierBlocked {
			blocked++
		}
	}
	if blocked < 4 {
		t.Errorf("%d blocked offline, want the duplicates, the deep one and the bad name", blocked)
	}
}
