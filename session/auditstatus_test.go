package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
)

// A record changed far from the log's end is beyond what opening the log reads;
// the whole-log check the TUI starts finds it, and the Manager says so with an
// AuditChanged event and AuditProblem, so the status line can show it.
func TestAuditProblem_WholeLogCheckReportsAnOldDamagedRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		if err := a.AppendUnsynced(audit.Record{Kind: "decision", CallID: fmt.Sprintf("c%04d", i), Args: json.RawMessage(`{"pad":"` + strings.Repeat("p", 100) + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.Replace(b, []byte(`"c0009"`), []byte(`"c9999"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err = audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if p := a.Problem(); p != nil {
		t.Fatalf("opening saw what only the whole check can: %v", p)
	}
	m := sessiontest.Start(t, &config.Config{}, session.Options{Audit: a, MemoryTaint: true})
	if err := a.CheckAll(); err == nil {
		t.Fatal("the whole-log check found nothing")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		e, ok := m.Next(ctx)
		if !ok {
			t.Fatal("no AuditChanged event")
		}
		if _, ok := e.(model.AuditChanged); ok {
			break
		}
	}
	if p := m.AuditProblem(); p == nil || !strings.Contains(p.Error(), "line 10: hash mismatch") {
		t.Errorf("AuditProblem: %v", p)
	}
	if err := a.Append(audit.Record{Kind: "decision"}); err != nil {
		t.Errorf("a damaged old record refused the next one: %v", err)
	}
}
