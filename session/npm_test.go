package session_test

import (
	"context"
	"encoding/json"
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

func TestNPMReferenceServers(t *testing.T) {
	dir := t.TempDir()
	mem := sessiontest.NPMServer(t, "memory", "mcp-server-memory", trust.Trusted)
	mem.Env = map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}
	cfg := sessiontest.NewConfig(
		sessiontest.NPMServer(t, "fs", "mcp-server-filesystem", trust.Trusted, dir),
		sessiontest.NPMServer(t, "fsu", "mcp-server-filesystem", trust.Untrusted, dir),
		mem,
		sessiontest.NPMServer(t, "everything", "mcp-server-everything", trust.Trusted),
	)
	m := sessiontest.Start(t, cfg, session.Options{})
	for _, n := range []string{"fs", "fsu", "memory", "everything"} {
		sv := sessiontest.MustServer(t, m, n, model.StatusReady)
		t.Logf("%s: protocol %s, %d tools", n, sv.Protocol, sv.Tiers[0]+sv.Tiers[1]+sv.Tiers[2]+sv.Tiers[3])
	}
	sessiontest.WantTier(t, m, "fs", "read_text_file", trust.TierRead)
	sessiontest.WantTier(t, m, "fs", "write_file", trust.TierDestructive)
	sessiontest.WantTier(t, m, "memory", "create_entities", trust.TierWrite)
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

// server-everything's resources, templates, prompts with completion, and
// Subscribe/updated, through the engine. The server is labelled
// untrusted-content, so what its resources and prompts return taints the context.
func TestNPMEverything_ResourcesPromptsCompletionsSubscribe(t *testing.T) {
	ev := sessiontest.NPMServer(t, "everything", "mcp-server-everything", trust.Trusted)
	ev.Labels = []trust.Leg{trust.LegUntrustedContent}
	ev.Tools = map[string]config.Tool{"toggle-subscriber-updates": {Policy: trust.Allow}}
	m := sessiontest.Start(t, sessiontest.NewConfig(ev), session.Options{MemoryTaint: true})
	sv := sessiontest.MustServer(t, m, "everything", model.StatusReady)
	t.Logf("%d resources, %d templates, %d prompts; notices %q", len(sv.Resources), len(sv.ResourceTemplates), len(sv.Prompts), sv.Notices)
	if len(sv.Resources) == 0 || len(sv.ResourceTemplates) == 0 || len(sv.Prompts) == 0 || !sv.Subscribe || !sv.Completions {
		t.Fatalf("everything lists %d resources, %d templates, %d prompts, subscribe %v, completions %v", len(sv.Resources), len(sv.ResourceTemplates), len(sv.Prompts), sv.Subscribe, sv.Completions)
	}
	var prompt *model.PromptInfo
	for i, p := range sv.Prompts {
		if p.Name == "completable-prompt" {
			prompt = &sv.Prompts[i]
		}
	}
	if prompt == nil || len(prompt.Arguments) != 2 {
		t.Fatalf("completable-prompt = %+v", prompt)
	}
	ctx := context.Background()
	c, err := m.Complete(ctx, model.CompleteRequest{Context: "agent", Server: "everything", Prompt: "completable-prompt", Argument: "department", Value: "E"})
	if err != nil || len(c.Values) != 1 || c.Values[0] != "Engineering" || !c.Tainted {
		t.Fatalf("completion of department E: %+v, %v", c, err)
	}
	c, err = m.Complete(ctx, model.CompleteRequest{Server: "everything", Prompt: "completable-prompt", Argument: "name", Value: "", Resolved: map[string]string{"department": "Sales"}})
	if err != nil || strings.Join(c.Values, ",") != "David,Eve,Frank" {
		t.Fatalf("completion of name in Sales: %+v, %v", c, err)
	}
	pr, err := m.GetPrompt(ctx, model.PromptRequest{Context: "p", Server: "everything", Name: "completable-prompt", Args: json.RawMessage(`{"department":"Sales","name":"Eve"}`)})
	if err != nil || len(pr.Result.Messages) == 0 || !pr.Tainted {
		t.Fatalf("get completable-prompt: %+v, %v", pr, err)
	}
	if txt, _ := pr.Result.Messages[0].Content.(*mcp.TextContent); txt == nil || !strings.Contains(txt.Text, "Eve") {
		t.Errorf("prompt message = %+v", pr.Result.Messages[0].Content)
	}
	if !strings.Contains(m.Engine().Taint("p").Reason(), `prompt "completable-prompt" of server everything`) {
		t.Errorf("taint after the prompt: %s", m.Engine().Taint("p").Reason())
	}
	uri := "demo://resource/dynamic/text/1"
	out, err := m.ReadResource(ctx, model.ReadRequest{Context: "r", Server: "everything", URI: uri})
	if err != nil || len(out.Result.Contents) == 0 || out.Result.Contents[0].Text == "" || !out.Tainted {
		t.Fatalf("read %s: %+v, %v", uri, out, err)
	}
	if err := m.Subscribe(ctx, "everything", uri); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Call(ctx, model.CallRequest{Server: "everything", Tool: "toggle-subscriber-updates"}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		ev, ok := m.Next(wctx)
		if !ok {
			t.Fatal("no resources/updated for the subscribed URI within 20s")
		}
		if u, ok := ev.(model.ResourceUpdated); ok {
			if u.URI != uri || u.Server != "everything" {
				t.Fatalf("updated %+v", u)
			}
			break
		}
	}
	if err := m.Unsubscribe(ctx, "everything", uri); err != nil {
		t.Fatal(err)
	}
}
