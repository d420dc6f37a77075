package session_test

import (
	"bytes"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/record"
	"github.com/airlock-mcp/airlock/trust"
)

var (
	noNetFence = trust.Fence{Requested: true, Applied: true, Network: "none", Read: []string{"~/project"}, Write: []string{"~/project/out"}, Detail: "Landlock ABI 7, network namespace"}
	notApplied = trust.Fence{Requested: true, Network: "none", Read: []string{"~/project"}, Detail: "Landlock is not available on this kernel"}
)

func hasHazard(s *model.Snapshot, k trust.HazardKind) (trust.Hazard, bool) {
	for _, h := range s.Hazards {
		if h.Kind == k {
			return h, true
		}
	}
	return trust.Hazard{}, false
}

// An untrusted mail server labelled private-data is a trifecta on its own: it is
// assumed to read untrusted content and to send data out. Fenced with no network it
// is not; the same fence not applied changes nothing.
func TestFence_SnapshotCountsOnlyAnAppliedFence(t *testing.T) {
	sv := sessiontest.TestServer(t, "mail", "demo-mail", trust.Untrusted)
	sv.Labels = []trust.Leg{trust.LegPrivateData}
	cfg := sessiontest.NewConfig(sv)
	m := sessiontest.Start(t, cfg, session.Options{})
	snap := m.Snapshot()
	h, ok := hasHazard(snap, trust.HazardLethalTrifecta)
	if !ok {
		t.Fatalf("no trifecta without a fence: %v", snap.Hazards)
	}
	fenceFix := func(s *model.Snapshot, h trust.Hazard) bool {
		for _, f := range s.Fixes(cfg.Policy, h) {
			if len(f.Changes) == 1 && f.Changes[0].Kind == trust.ChangeFenceServer && f.Changes[0].Server == "mail" && f.Effect == trust.FixBreaks {
				return true
			}
		}
		return false
	}
	if got := fenceFix(snap, h); got != (runtime.GOOS != "windows") {
		t.Errorf("fence-server mail offered: %v, want it on a system that fences", got)
	}

	session.SetFence(m, "mail", noNetFence)
	snap = m.Snapshot()
	sv2, _ := snap.Server("mail")
	if !sv2.Fence.NoNetwork() || !slices.Equal(sv2.Fence.Read, noNetFence.Read) {
		t.Errorf("ServerInfo.Fence = %+v", sv2.Fence)
	}
	if _, ok := hasHazard(snap, trust.HazardLethalTrifecta); ok {
		t.Errorf("trifecta still there with a no-network fence: %v", snap.Hazards)
	}
	if _, ok := hasHazard(snap, trust.HazardOpenWorldExfiltration); ok {
		t.Errorf("open-world-exfiltration still there with a no-network fence")
	}
	for _, tl := range snap.Tools {
		if tl.Class.Has(trust.LegExfiltration) || !tl.Class.Has(trust.LegUntrustedContent) {
			t.Errorf("%s legs %v: want untrusted content, no exfiltration", tl.Ref.Qualified(), tl.Class.Legs)
		}
		if !tl.Input().Fence.NoNetwork() {
			t.Errorf("%s: Input lacks the fence, so fix hints and explanations would not see it", tl.Ref.Qualified())
		}
		if !trust.Taints(tl.Class) {
			t.Errorf("%s: a fenced untrusted server's results no longer taint", tl.Ref.Qualified())
		}
	}

	session.SetFence(m, "mail", notApplied)
	snap = m.Snapshot()
	if _, ok := hasHazard(snap, trust.HazardLethalTrifecta); !ok {
		t.Errorf("a fence that was not applied broke the trifecta: %v", snap.Hazards)
	}
	tl := snap.Tools[0]
	if !slices.ContainsFunc(tl.Class.Reasons, func(r string) bool { return strings.HasPrefix(r, "unfenced: ") }) {
		t.Errorf("reasons %q do not say unfenced", tl.Class.Reasons)
	}
	if h, _ := hasHazard(snap, trust.HazardLethalTrifecta); fenceFix(snap, h) {
		t.Error("a fence that could not be applied is proposed again")
	}
}

func sandboxServer(sb *model.RecordedSandbox) *model.Recording {
	return &model.Recording{SchemaVersion: model.RecordingSchemaVersion, Servers: []model.RecordedServer{{Name: "fs", Status: "ready", Tools: []model.RecordedTool{}, Sandbox: sb}}}
}

func TestFence_RecordedAndLooseningIsDrift(t *testing.T) {
	sv := sessiontest.TestServer(t, "fs", "demo-notes", trust.Untrusted)
	m := sessiontest.Start(t, sessiontest.NewConfig(sv), session.Options{})
	if rec := m.Record(); rec.Servers[0].Sandbox != nil {
		t.Errorf("no sandbox asked for, recorded %+v", rec.Servers[0].Sandbox)
	}
	session.SetFence(m, "fs", noNetFence)
	rec := m.Record()
	want := &model.RecordedSandbox{Requested: true, Applied: true, Network: "none", Read: []string{"~/project"}, Write: []string{"~/project/out"}}
	if d := cmp.Diff(want, rec.Servers[0].Sandbox); d != "" {
		t.Errorf("recorded sandbox (-want +got):\n%s", d)
	}
	var b bytes.Buffer
	if err := rec.Write(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Landlock") {
		t.Error("the snapshot holds the launcher's detail, which depends on the machine")
	}
	back, err := record.Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, back.Servers[0].Sandbox); d != "" {
		t.Errorf("read back (-want +got):\n%s", d)
	}

	fenced := func(f func(*model.RecordedSandbox)) *model.RecordedSandbox {
		s := *want
		s.Read, s.Write = slices.Clone(s.Read), slices.Clone(s.Write)
		f(&s)
		return &s
	}
	for _, tc := range []struct {
		name     string
		old, cur *model.RecordedSandbox
		want     string // "" no finding
	}{
		{"same", want, want, ""},
		{"network opened", want, fenced(func(s *model.RecordedSandbox) { s.Network = "all" }), "network none in the snapshot, all now"},
		{"a folder more to read and to write", want, fenced(func(s *model.RecordedSandbox) {
			s.Read = append(s.Read, "~/.ssh")
			s.Write = append(s.Write, "~")
		}), "reads ~/.ssh too; writes ~ too"},
		{"not applied now", want, fenced(func(s *model.RecordedSandbox) { s.Applied = false }), "applied in the snapshot, not applied now"},
		{"no longer asked for", want, nil, "the sandbox is no longer asked for"},
		{"tightened: network closed", fenced(func(s *model.RecordedSandbox) { s.Network = "all" }), want, ""},
		{"tightened: a folder fewer", fenced(func(s *model.RecordedSandbox) { s.Read = append(s.Read, "~/docs") }), want, ""},
		{"tightened: fenced now", nil, want, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range record.Drift(sandboxServer(tc.old), sandboxServer(tc.cur)) {
				got = append(got, string(f.Kind)+": "+f.Detail)
			}
			var w []string
			if tc.want != "" {
				w = []string{string(model.DriftSandboxLoosened) + ": " + tc.want}
			}
			if d := cmp.Diff(w, got); d != "" {
				t.Errorf("drift (-want +got):\n%s", d)
			}
		})
	}
}

// check --snapshot counts a recorded fence only while the config asks for exactly
// that sandbox: a pull request that drops or changes it is judged unfenced.
func TestFence_OfflineCountsTheRecordedFenceOnlyWhileTheConfigAsksForIt(t *testing.T) {
	sv := sessiontest.TestServer(t, "mail", "demo-mail", trust.Untrusted)
	sv.Labels = []trust.Leg{trust.LegPrivateData}
	cfg := sessiontest.NewConfig(sv)
	live := sessiontest.Start(t, cfg, session.Options{})
	session.SetFence(live, "mail", noNetFence)
	rec := live.Record()
	asked := trust.Fence{Requested: true, Network: "none", Read: []string{"~/project"}, Write: []string{"~/project/out"}}
	for _, tc := range []struct {
		name      string
		config    trust.Fence
		applied   bool
		requested bool
		trifecta  bool
	}{
		{"config asks for the recorded sandbox", asked, true, true, false},
		{"config no longer asks for one", trust.Fence{}, false, false, true},
		{"config opens the network", trust.Fence{Requested: true, Network: "all", Read: asked.Read, Write: asked.Write}, false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			session.SetConfigFence(t, func(config.Server) trust.Fence { return tc.config })
			m, _ := session.NewOffline(cfg, rec, session.Options{})
			defer m.Close()
			snap := m.Snapshot()
			got, _ := snap.Server("mail")
			if got.Fence.Applied != tc.applied || got.Fence.Requested != tc.requested {
				t.Errorf("offline fence %+v, want applied %v requested %v", got.Fence, tc.applied, tc.requested)
			}
			if _, ok := hasHazard(snap, trust.HazardLethalTrifecta); ok != tc.trifecta {
				t.Errorf("trifecta %v, want %v", ok, tc.trifecta)
			}
		})
	}
}
