package session_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// npmServer returns a stdio config for one of the pinned npm reference servers that
// .ci/run installs under testdata/npm. Without them the test is skipped on a
// developer's machine and fails in CI, where they must be present.
func npmServer(t *testing.T, name, bin string, tr trust.ServerTrust, args ...string) config.Server {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "testdata", "npm", "node_modules", ".bin", bin))
	if err != nil {
		t.Fatal(err)
	}
	_, statErr := os.Stat(path)
	_, nodeErr := exec.LookPath("node")
	if statErr != nil || nodeErr != nil {
		msg := "npm reference servers are not installed: run (cd testdata/npm && npm ci)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return config.Server{
		Name:           name,
		Transport:      config.TransportStdio,
		Command:        path,
		Args:           args,
		ConnectTimeout: 60 * time.Second,
		CallTimeout:    60 * time.Second,
		Trust:          tr,
	}
}

func TestNPMReferenceServers(t *testing.T) {
	dir := t.TempDir()
	mem := npmServer(t, "memory", "mcp-server-memory", trust.Trusted)
	mem.Env = map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}
	cfg := newConfig(
		npmServer(t, "fs", "mcp-server-filesystem", trust.Trusted, dir),
		npmServer(t, "fsu", "mcp-server-filesystem", trust.Untrusted, dir),
		mem,
		npmServer(t, "everything", "mcp-server-everything", trust.Trusted),
	)
	m := start(t, cfg, session.Options{})
	for _, n := range []string{"fs", "fsu", "memory", "everything"} {
		sv := mustServer(t, m, n, session.StatusReady)
		t.Logf("%s: protocol %s, %d tools", n, sv.Protocol, sv.Tiers[0]+sv.Tiers[1]+sv.Tiers[2]+sv.Tiers[3])
	}
	wantTier(t, m, "fs", "read_text_file", trust.TierRead)
	wantTier(t, m, "fs", "write_file", trust.TierDestructive)
	wantTier(t, m, "memory", "create_entities", trust.TierWrite)
	for _, ti := range m.Snapshot().Tools {
		if ti.Ref.Server == "fsu" && ti.Class.Tier != trust.TierDestructive {
			t.Errorf("untrusted %s tier = %v, want destructive", ti.Ref.Qualified(), ti.Class.Tier)
		}
	}
	// everything declares at least one open-world tool; it must fill the
	// untrusted-content leg.
	openWorld := 0
	for _, ti := range m.Snapshot().Tools {
		if ti.Ref.Server != "everything" || ti.Declared.Hints.OpenWorld == nil || !*ti.Declared.Hints.OpenWorld {
			continue
		}
		openWorld++
		if !ti.Class.Has(trust.LegUntrustedContent) {
			t.Errorf("%s declares openWorldHint=true but is not in the untrusted-content leg", ti.Ref.Qualified())
		}
	}
	if openWorld == 0 {
		t.Error("server-everything declared no open-world tool; the test asserts nothing")
	}
}
