package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/secrets"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// Hostile case 40: secrets are redacted; the hash of the full arguments is kept.
func TestAuditRedactsSecrets(t *testing.T) {
	args := json.RawMessage(`{"url":"https://x","api_key":"sk-123","nested":{"Authorization":"Bearer abc","list":[{"password":"p"}]},"accessToken":"t","n":1.50}`)
	got := string(secrets.Redact(args))
	for _, secret := range []string{"sk-123", "Bearer abc", `"p"`, `"t"`} {
		if strings.Contains(got, secret) {
			t.Errorf("redacted args %s still hold %s", got, secret)
		}
	}
	if !strings.Contains(got, `"url":"https://x"`) || !strings.Contains(got, `"n":1.50`) {
		t.Errorf("redaction changed other values: %s", got)
	}
	if got := string(secrets.Redact(json.RawMessage(`{"a":`))); strings.Contains(got, "{") {
		t.Errorf("unparseable args kept: %s", got)
	}
}

// Audit records every decision and outcome of calls made through the Manager, with the
// full-argument hash and redacted arguments.
func TestManagerAuditsCalls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	m, _ := sessiontest.DemoInProcess(t, session.Options{Audit: a})
	sessiontest.AnswerWith(t, m, model.Response{Answer: model.Deny, Reason: "no"})
	ctx := context.Background()
	raw := `{"url":"https://example.com/","token":"hunter2"}`
	if _, err := m.Call(ctx, model.CallRequest{Server: "web", Tool: "fetch_url", Args: sessiontest.Args(raw)}); err != nil {
		t.Fatal(err)
	}
	_, err = m.Call(ctx, model.CallRequest{Server: "notes", Tool: "delete_note", Args: sessiontest.Args(`{"id":"note-1"}`)})
	sessiontest.Denied(t, err)
	b, _ := os.ReadFile(path)
	if n, err := audit.VerifyFile(path); err != nil || n != 3 {
		t.Fatalf("verify = %d, %v\n%s", n, err, b)
	}
	var recs []audit.Record
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r audit.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if recs[0].Decision != "allow" || recs[0].DecidedBy != "policy" || recs[0].ArgsSHA256 != trust.ArgsSHA256([]byte(`{"token":"hunter2","url":"https://example.com/"}`)) || strings.Contains(string(recs[0].Args), "hunter2") {
		t.Errorf("decision record = %+v", recs[0])
	}
	// The demo's fetch_url rejects the unknown "token" argument: a tool error outcome.
	if recs[1].Kind != "outcome" || recs[1].Outcome != "tool-error" {
		t.Errorf("outcome record = %+v", recs[1])
	}
	if recs[2].Decision != "deny" || recs[2].DecidedBy != "taint-asked-then-person" || recs[2].PersonReason != "no" || !strings.HasSuffix(recs[2].Reason, "denied by the person") || recs[2].Tier != "destructive" {
		t.Errorf("denial record = %+v", recs[2])
	}
}

// Hostile case 38: when the audit log cannot be written (disk full), an allowed call is
// Denied and says why.
func TestAuditWriteFailureDeniesCall(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	f, err := os.OpenFile("/dev/full", os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		t.Skip(err)
	}
	a, err := audit.OpenFile(f, "/dev/full")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := sessiontest.DemoInProcess(t, session.Options{Audit: a})
	_, err = m.Call(context.Background(), model.CallRequest{Server: "docs", Tool: "get_doc", Args: sessiontest.Args(`{"id":"tiers"}`)})
	d := sessiontest.Denied(t, err)
	if !strings.Contains(d.Error(), "audit log cannot be written") {
		t.Errorf("denial %q does not say the audit log failed", d.Error())
	}
}

// BenchmarkAuditedApprovals measures whole approved calls: the engine asks, an
// approver answers allow-once at once, the decision is synced to the audit log, the
// call runs on the in-process notes server and its outcome is audited.
func BenchmarkAuditedApprovals(b *testing.B) {
	a, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	cfg := sessiontest.NewConfig(config.Server{Name: "notes", Trust: trust.Trusted, Labels: []trust.Leg{trust.LegPrivateData}})
	set := demoSet()
	m := session.New(cfg, session.Options{Audit: a, InProcess: set, Approver: model.ApproverFunc(func(context.Context, *model.Pending) (model.Response, error) {
		return model.Response{Answer: model.AllowOnce}, nil
	})})
	defer m.Close()
	m.Start()
	_ = m.Wait(context.Background())
	var once sync.Once
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, err := m.Call(context.Background(), model.CallRequest{Server: "notes", Tool: "create_note", Args: sessiontest.Args(`{"title":"t","body":"b"}`)})
			if err != nil {
				once.Do(func() { b.Error(err) })
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "approvals/s")
}

// auditProbe is an in-process server whose one read tool, when a call reaches it,
// records what the audit log held at that moment: the newest record in the file and
// the newest record the log knows synced.
func auditProbe(a *audit.Log, seen func(inFile, synced uint64)) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "look", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, err := os.ReadFile(a.Path())
			if err != nil {
				return nil, err
			}
			var last audit.Record
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			_ = json.Unmarshal([]byte(lines[len(lines)-1]), &last)
			seen(last.Seq, a.SyncedSeq())
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	return srv
}

// TestAuditDurability_DecisionSyncedOrWrittenBeforeForwarding: by default a call
// reaches its server only after its decision record is on disk; with [audit]
// sync_before_forward = false it reaches the server after the record is written to
// the file (an airlock crash cannot lose it) and the record is synced within
// auditSyncDelay without another call to carry it.
func TestAuditDurability_DecisionSyncedOrWrittenBeforeForwarding(t *testing.T) {
	for _, unsynced := range []bool{false, true} {
		t.Run(fmt.Sprintf("unsynced=%v", unsynced), func(t *testing.T) {
			a, err := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			a.SetDecisionsUnsynced(unsynced)
			var inFile, synced uint64
			cfg := sessiontest.NewConfig(config.Server{Name: "probe", Trust: trust.Trusted})
			m := sessiontest.Start(t, cfg, session.Options{Audit: a, InProcess: map[string]*mcp.Server{"probe": auditProbe(a, func(f, s uint64) { inFile, synced = f, s })}})
			for i := range 3 {
				if _, err := m.Call(context.Background(), model.CallRequest{Server: "probe", Tool: "look", Args: sessiontest.Args(`{}`)}); err != nil {
					t.Fatal(err)
				}
				// Each call adds a decision then an outcome: the decision of call i is
				// record 2i+1.
				decision := uint64(2*i + 1)
				if inFile != decision {
					t.Fatalf("call %d reached the server with record %d last in the file, want its decision %d", i, inFile, decision)
				}
				if !unsynced && synced < decision {
					t.Fatalf("call %d reached the server before its decision record %d was synced (synced up to %d)", i, decision, synced)
				}
				if unsynced && synced >= decision {
					t.Fatalf("call %d: decision %d was synced before forwarding (synced up to %d), want it only written", i, decision, synced)
				}
			}
			deadline := time.Now().Add(5 * time.Second)
			for a.SyncedSeq() < 6 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if got := a.SyncedSeq(); got != 6 {
				t.Fatalf("after the calls the log synced up to record %d, want 6 (the delayed sync)", got)
			}
		})
	}
}

// BenchmarkAuditAppendParallel is row 3c's reference (bench/run runs it with
// BenchmarkAuditedApprovals in one test binary): records appended alone, 32 at once.
func BenchmarkAuditAppendParallel(b *testing.B) {
	a, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	rec := audit.Record{Kind: "decision", Context: "agent-1", Server: "notes", Tool: "delete_note", Tier: "destructive",
		Decision: "allow", DecidedBy: "user", ArgsSHA256: strings.Repeat("a", 64), Args: json.RawMessage(`{"id":"note-1"}`)}
	b.SetParallelism(32) // many agents' approvals in flight share each fsync
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := a.Append(rec); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
