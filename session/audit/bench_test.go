package audit_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/audit"
)

// benchRecord is a record of the size a gateway under load writes (a decision
// with its arguments, about 450 bytes as a line).
func benchRecord(i int) audit.Record {
	return audit.Record{TS: time.Now().UTC(), Kind: "decision", CallID: fmt.Sprintf("c%08d", i), Context: "agent-1", Client: "bench-agent/1.0",
		Server: "notes", Tool: "create_note", Tier: "write", Decision: "allow", DecidedBy: "policy", Reason: "a write tool of a trusted server",
		ArgsSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Args: json.RawMessage(`{"body":"a note of ordinary length, written by an agent under load","title":"note ` + strconv.Itoa(i) + `"}`)}
}

// BenchmarkVerifyLog verifies a log of AIRLOCK_BENCH_AUDIT_MB megabytes (default
// 32; 270 is what six minutes of load wrote), in segments of the default size.
// Building it also measures appending with rotation (records/s).
func BenchmarkVerifyLog(b *testing.B) {
	mb := 32
	if s := os.Getenv("AIRLOCK_BENCH_AUDIT_MB"); s != "" {
		mb, _ = strconv.Atoi(s)
	}
	a, path := openTemp(b)
	start := time.Now()
	n := 0
	for size := int64(0); size < int64(mb)<<20; n++ {
		if err := a.AppendUnsynced(benchRecord(n)); err != nil {
			b.Fatal(err)
		}
		if n%4096 == 0 {
			size = logBytes(path)
		}
	}
	a.Close()
	built := time.Since(start)
	total := logBytes(path)
	b.Logf("built %d records, %.1f MB in %v: %.0f records/s appended (with rotation)", n, float64(total)/1e6, built.Round(time.Millisecond), float64(n)/built.Seconds())
	b.SetBytes(total)
	b.ResetTimer()
	for b.Loop() {
		sum, err := audit.VerifyLog(path)
		if err != nil || sum.Records < n {
			b.Fatalf("verify: %+v %v", sum, err)
		}
	}
}

// logBytes is the size of the log at path with all its segments.
func logBytes(path string) int64 {
	var total int64
	files, _ := filepath.Glob(path + "*")
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && filepath.Ext(f) != ".head" && filepath.Ext(f) != ".lock" {
			total += st.Size()
		}
	}
	return total
}

// BenchmarkAppendRotating appends records one at a time (written, not synced, as
// an outcome is) to a log that rotates every MiB: the cost of a commit, with the
// rotations it brings.
func BenchmarkAppendRotating(b *testing.B) {
	a, _ := openTemp(b)
	a.SetSegmentBytes(1 << 20)
	i := 0
	for b.Loop() {
		if err := a.AppendUnsynced(benchRecord(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkAppendDecisionSynced appends a call's decision record, synced before it
// returns as it is before the call is forwarded, one at a time (no group commit to
// share the sync), to a log that has its fill: the cost every call pays. Its floor is
// BenchmarkFloorFdatasyncFilled (a record's bytes written inside the file's size);
// BenchmarkFloorFdatasyncAppend is an append that grows the size, and
// BenchmarkFloorFsyncGrowingAppend one to a growing file with nothing allocated.
func BenchmarkAppendDecisionSynced(b *testing.B) {
	a := openFilled(b)
	i := 1
	for b.Loop() {
		if err := a.AppendDecision(benchRecord(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// openFilled is a log in the steady state of one airlock has open: its fill written
// by the delayed sync after the first record (BenchmarkOpenDecideClose is a log's
// first moments, as a one-shot command has them).
func openFilled(b *testing.B) *audit.Log {
	a, path := openTemp(b)
	if err := a.Append(benchRecord(0)); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if st, err := os.Stat(path); err == nil && st.Size() >= 512<<10 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("no fill after 5 s")
		}
	}
	return a
}

// BenchmarkAppendCallRecords is a call's two records as the gateway writes them, one
// call at a time: the decision synced before the call is forwarded, the outcome
// written after it and left to the next sync (the next decision's, or the delayed
// sync's). Against BenchmarkAppendDecisionSynced, the difference is what the outcome
// and the delayed syncs it arms cost a call.
func BenchmarkAppendCallRecords(b *testing.B) {
	a := openFilled(b)
	i := 1
	for b.Loop() {
		if err := a.AppendDecision(benchRecord(i)); err != nil {
			b.Fatal(err)
		}
		out := benchRecord(i + 1)
		out.Kind, out.Outcome, out.DurationMS = "outcome", "ok", 1
		if err := a.AppendUnsynced(out); err != nil {
			b.Fatal(err)
		}
		i += 2
	}
}

// BenchmarkFloorFsyncGrowingAppend appends a line of a decision record's size to a
// growing file and fsyncs it, back to back: every sync also commits the file's new
// blocks and size to the file system's journal.
func BenchmarkFloorFsyncGrowingAppend(b *testing.B) {
	benchFloor(b, func(f *os.File, _ int64) error { return f.Sync() })
}

// benchFloor appends a line of a decision record's size to a new file in the
// benchmark's folder, calling sync after each write with the file's size before it.
func benchFloor(b *testing.B, sync func(f *os.File, off int64) error) {
	line := benchLine(b)
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "floor"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var off int64
	for b.Loop() {
		if _, err := f.Write(line); err != nil {
			b.Fatal(err)
		}
		if err := sync(f, off); err != nil {
			b.Fatal(err)
		}
		off += int64(len(line))
	}
}

// benchLine is the line a log writes for benchRecord(0).
func benchLine(b *testing.B) []byte {
	a, path := openTemp(b)
	if err := a.Append(benchRecord(0)); err != nil {
		b.Fatal(err)
	}
	a.Close()
	line, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return line
}

// BenchmarkOpenDecideClose is a one-shot command's use of the log (airlock call):
// open it, sync one decision, close it, on a log that already holds records.
func BenchmarkOpenDecideClose(b *testing.B) {
	a, path := openTemp(b)
	for i := range 100 {
		if err := a.AppendUnsynced(benchRecord(i)); err != nil {
			b.Fatal(err)
		}
	}
	a.Close()
	i := 100
	for b.Loop() {
		a, err := audit.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.AppendDecision(benchRecord(i)); err != nil {
			b.Fatal(err)
		}
		if err := a.Close(); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkAppendUnsynced is a call's outcome record on its own, written and not
// synced, one at a time: what a commit costs besides the sync (the lock, the look at
// the log's end, sealing and the write). The delayed sync the records arm, every
// 50 ms, runs meanwhile, as it does behind a gateway's calls.
func BenchmarkAppendUnsynced(b *testing.B) {
	a := openFilled(b)
	i := 1
	for b.Loop() {
		out := benchRecord(i)
		out.Kind, out.Outcome, out.DurationMS = "outcome", "ok", 1
		if err := a.AppendUnsynced(out); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
