package audit_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/audit"
)

// fileSize is the size of the file at path.
func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// recordsEnd is where the records of the file at path end: its size less the run
// of newlines after the last record's own.
func recordsEnd(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rest := bytes.TrimRight(b, "\n")
	if len(rest) == 0 {
		return 0
	}
	return int64(len(rest) + 1)
}

// waitFilled waits (up to 5 s) for the delayed sync to fill the file at path:
// at least half the fill past its records.
func waitFilled(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for fileSize(t, path)-recordsEnd(t, path) < 512<<10 {
		if time.Now().After(deadline) {
			t.Fatalf("no fill past the records of %s after 5 s (%d bytes, records %d)", path, fileSize(t, path), recordsEnd(t, path))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A synced append writes inside the size the file already has, so its sync
// commits the record's bytes and nothing of the file's own (no new size, no new
// blocks): the sync at the floor of the disk.
func TestLog_SyncedAppendKeepsTheFileSize(t *testing.T) {
	a, path := openTemp(t)
	if err := a.Append(benchRecord(0)); err != nil {
		t.Fatal(err)
	}
	waitFilled(t, path)
	before, syncs := fileSize(t, path), a.Syncs()
	for i := 1; i <= 100; i++ {
		if err := a.AppendDecision(benchRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	if a.Syncs() < syncs+100 {
		t.Fatalf("100 synced decisions made %d syncs", a.Syncs()-syncs)
	}
	if after := fileSize(t, path); after != before {
		t.Errorf("100 synced decisions changed the file's size from %d to %d bytes; want each written inside the size it had", before, after)
	}
	if end := recordsEnd(t, path); end >= before {
		t.Errorf("the records end at byte %d of %d: no fill past them", end, before)
	}
}

// While a log is open its file holds fill (newlines) past its records; every
// reader stops at the last record: verify and Walk count exactly the records,
// and a JSON-lines reader that skips blank lines reads them all.
func TestLog_ReadersStopAtTheLastRecord(t *testing.T) {
	a, path := openTemp(t)
	for i := range 20 {
		if err := a.Append(benchRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	waitFilled(t, path)
	sum, err := audit.VerifyLog(path)
	if err != nil || sum.Records != 20 {
		t.Errorf("verify of the open log: %+v %v; want 20 records", sum, err)
	}
	walked := 0
	if _, err := audit.Walk(path, func(string, []byte) error { walked++; return nil }); err != nil || walked != 20 {
		t.Errorf("walk of the open log: %d records, %v; want 20", walked, err)
	}
	b, _ := os.ReadFile(path)
	parsed := 0
	for line := range bytes.Lines(b) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		parsed++
	}
	if parsed != 20 {
		t.Errorf("a JSON-lines reader found %d records; want 20", parsed)
	}
}

// Close gives the fill back: a log no airlock has open is its records and
// nothing else, each line a record and the file ending in the last one's newline.
func TestLog_CloseLeavesOnlyTheRecords(t *testing.T) {
	a, path := openTemp(t)
	for i := range 5 {
		if err := a.AppendUnsynced(benchRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	b := closedBytes(t, a, path)
	if !bytes.HasSuffix(b, []byte("}\n")) || bytes.Contains(b, []byte("\n\n")) {
		t.Errorf("the closed log ends %q; want its last record and one newline", b[max(len(b)-20, 0):])
	}
	if n, err := audit.Verify(bytes.NewReader(b)); err != nil || n != 5 {
		t.Errorf("the closed log: %d records, %v", n, err)
	}
}

// A record cut short before the fill (a crash of the system that wrote half of
// an unsynced record) is the end of the log damaged, as a cut record at the end of
// a file always was: the log is not appended to.
func TestLog_CutRecordBeforeTheFillIsDamage(t *testing.T) {
	path, whole := writeLog(t, 3)
	lines := bytes.SplitAfter(whole, []byte("\n"))
	last := lines[len(lines)-2]
	cut := append(bytes.Clone(whole[:len(whole)-len(last)]), last[:len(last)/2]...)
	cut = append(cut, bytes.Repeat([]byte("\n"), 5000)...)
	write(t, path, cut)
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if !a.Damaged() || !strings.Contains(a.Problem().Error(), "last record is damaged") {
		t.Errorf("a log whose last record is cut before its fill: %v; want it damaged", a.Problem())
	}
	if err := a.Append(rec(9)); !errors.Is(err, audit.ErrBroken) {
		t.Errorf("append to it: %v; want a refusal", err)
	}
}

// Past its last record the log writes only over its own fill: bytes there that are
// not newlines (something other than airlock wrote them) make the log damaged, and
// they are left as they were, never written over.
func TestLog_NeverWritesOverBytesPastItsRecords(t *testing.T) {
	a, path := openTemp(t)
	if err := a.Append(benchRecord(0)); err != nil {
		t.Fatal(err)
	}
	end := recordsEnd(t, path)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("not fill"), end+40); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := a.Append(benchRecord(1)); !errors.Is(err, audit.ErrBroken) {
		t.Fatalf("append over bytes that are not fill: %v; want a refusal", err)
	}
	if !a.Damaged() {
		t.Errorf("the log after bytes not its fill: %v; want it damaged", a.Problem())
	}
	b, _ := os.ReadFile(path)
	if !bytes.Equal(b[end+40:end+48], []byte("not fill")) {
		t.Errorf("the bytes past the records were written over: %q", b[end:end+60])
	}
	if n, err := audit.Verify(bytes.NewReader(b[:end])); err != nil || n != 1 {
		t.Errorf("the records before them: %d, %v", n, err)
	}
}

// A writer killed (SIGKILL) while its log is open leaves the fill in the file; the
// next airlock finds the last record under it, continues the chain, and on Close
// leaves only the records.
func TestLog_KilledWriterLeavesFillTheNextContinues(t *testing.T) {
	path := t.TempDir() + "/audit.jsonl"
	child := appender(t, path, 50, false)
	child.wait(t) // it has appended its records and sleeps
	child.kill()
	if fileSize(t, path) <= recordsEnd(t, path) {
		t.Fatal("the killed writer left no fill")
	}
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if p := a.Problem(); p != nil {
		t.Fatalf("the log a killed writer left: %v", p)
	}
	if err := a.Append(benchRecord(50)); err != nil {
		t.Fatal(err)
	}
	b := closedBytes(t, a, path)
	if bytes.Contains(b, []byte("\n\n")) {
		t.Error("the closed log holds blank lines")
	}
	if sum, err := audit.VerifyLog(path); err != nil || sum.Records != 51 {
		t.Errorf("after the killed writer: %+v %v; want 51 records", sum, err)
	}
}

// Two airlock processes append to one log at once, each synced: the log is one
// chain holding every record of both, whichever wrote last and whatever either's
// fill, and a process that closes while the other goes on takes nothing from it.
func TestLog_TwoProcessesOneChain(t *testing.T) {
	path := t.TempDir() + "/audit.jsonl"
	const each = 300
	var kids []*child
	for range 2 {
		kids = append(kids, appender(t, path, each, true))
	}
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range each {
		if err := a.Append(benchRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range kids {
		k.wait(t)
		if err := k.cmd.Wait(); err != nil {
			t.Fatalf("an appending process: %v\n%s", err, k.stderr.String())
		}
	}
	if err := a.Append(benchRecord(each)); err != nil {
		t.Fatalf("after the others closed: %v", err)
	}
	a.Close()
	if sum, err := audit.VerifyLog(path); err != nil || sum.Records != 3*each+1 {
		t.Errorf("three processes' records: %+v %v; want %d", sum, err, 3*each+1)
	}
}

type child struct {
	cmd    *exec.Cmd
	ready  chan error
	stderr *bytes.Buffer
	once   sync.Once
}

// appender starts this test binary as a process that opens the log at path,
// appends n synced records and says so; with closeAfter it then closes the log and
// exits, otherwise it waits to be killed.
func appender(t *testing.T, path string, n int, closeAfter bool) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAppender$")
	cmd.Env = append(os.Environ(), "AIRLOCK_AUDIT_APPENDER="+path, "AIRLOCK_AUDIT_APPENDER_N="+strconv.Itoa(n), "AIRLOCK_AUDIT_APPENDER_CLOSE="+strconv.FormatBool(closeAfter))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, ready: make(chan error, 1), stderr: &bytes.Buffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.kill)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "appended" {
				c.ready <- nil
				return
			}
		}
		c.ready <- fmt.Errorf("the appending process ended without appending: %s", c.stderr.String())
	}()
	return c
}

func (c *child) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-c.ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the appending process did not finish in 60 s")
	}
}

func (c *child) kill() {
	c.once.Do(func() {
		if c.cmd.ProcessState == nil {
			c.cmd.Process.Kill()
			c.cmd.Wait()
		}
	})
}

// TestHelperAppender is the process appender starts; it does nothing in a test run.
func TestHelperAppender(t *testing.T) {
	path := os.Getenv("AIRLOCK_AUDIT_APPENDER")
	if path == "" {
		t.Skip("the appending process of TestLog_KilledWriterLeavesFillTheNextContinues and TestLog_TwoProcessesOneChain")
	}
	n, _ := strconv.Atoi(os.Getenv("AIRLOCK_AUDIT_APPENDER_N"))
	a, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := a.Append(benchRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	if os.Getenv("AIRLOCK_AUDIT_APPENDER_CLOSE") != "true" {
		waitFilled(t, path) // killed with its fill in place
	}
	if os.Getenv("AIRLOCK_AUDIT_APPENDER_CLOSE") == "true" {
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		fmt.Println("appended")
		return
	}
	fmt.Println("appended")
	time.Sleep(time.Hour)
}

// The file holds at least half its fill past its records while it is open (from
// the delayed sync after its first record); a segment is closed without it and the
// next one is filled too; Close gives the fill back. The log verifies whole.
func TestLog_FillsPastItsEndAndGivesItBack(t *testing.T) {
	a, path := openTemp(t)
	a.SetSegmentBytes(4 << 10)
	if err := a.Append(rec(0)); err != nil {
		t.Fatal(err)
	}
	waitFilled(t, path)
	n := 1
	for ; !segmentClosed(path); n++ {
		if err := a.Append(rec(n)); err != nil {
			t.Fatal(err)
		}
	}
	if got, end := fileSize(t, path+".000001"), recordsEnd(t, path+".000001"); got != end {
		t.Errorf("the closed segment is %d bytes, its records %d; want no fill", got, end)
	}
	waitFilled(t, path) // the new segment's, by the delayed sync
	a.Close()
	if got, end := fileSize(t, path), recordsEnd(t, path); got != end {
		t.Errorf("the closed log is %d bytes, its records %d; want no fill", got, end)
	}
	if sum, err := audit.VerifyLog(path); err != nil || sum.Records < n {
		t.Errorf("the log: %+v %v; want %d records", sum, err, n)
	}
}

// segmentClosed reports whether the log at path has closed its first segment.
func segmentClosed(path string) bool {
	_, err := os.Lstat(path + ".000001")
	return err == nil
}

// Bytes added past the fill while the log is open (something other than airlock
// appended to the file) are damage at the next commit, as bytes after the last
// record always were, and neither that commit nor Close cuts them.
func TestLog_BytesAddedPastTheFillAreDamageNotCut(t *testing.T) {
	a, path := openTemp(t)
	if err := a.Append(rec(0)); err != nil {
		t.Fatal(err)
	}
	waitFilled(t, path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("FOREIGN-EVIDENCE\n")
	f.Close()
	if err := a.Append(rec(1)); !errors.Is(err, audit.ErrBroken) || !a.Damaged() {
		t.Errorf("append after bytes were added past the fill: %v (problem %v); want a refusal, the log damaged", err, a.Problem())
	}
	b := closedBytes(t, a, path)
	if !bytes.Contains(b, []byte("FOREIGN-EVIDENCE")) {
		t.Error("Close cut the bytes added past the fill")
	}
	if _, err := audit.VerifyLog(path); err == nil {
		t.Error("verify passed a log with bytes added past its fill")
	}
}

// An airlock that closes while another has the log open leaves the other's fill
// in place (so the other's synced appends still keep the file's size); one that
// closes within a delayed sync of its first record (a one-shot command) writes no
// fill at all; the last to close gives the fill back.
func TestLog_CloseLeavesTheFillOfAnotherThatHasItOpen(t *testing.T) {
	long, path := openTemp(t)
	if err := long.Append(rec(0)); err != nil {
		t.Fatal(err)
	}
	waitFilled(t, path)
	size := fileSize(t, path)
	short, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := short.Append(rec(1)); err != nil {
		t.Fatal(err)
	}
	short.Close()
	if got := fileSize(t, path); got != size {
		t.Errorf("a second log's Close changed the file from %d to %d bytes; want the first's fill left", size, got)
	}
	if err := long.AppendDecision(rec(2)); err != nil {
		t.Fatal(err)
	}
	if got := fileSize(t, path); got != size {
		t.Errorf("after the other closed, a synced append changed the file from %d to %d bytes", size, got)
	}
	long.Close()
	if got, end := fileSize(t, path), recordsEnd(t, path); got != end {
		t.Errorf("after the last Close the file is %d bytes, its records %d; want no fill", got, end)
	}

	// A one-shot: open, one record, close at once.
	dir := t.TempDir() + "/audit.jsonl"
	one, err := audit.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := one.Append(rec(0)); err != nil {
		t.Fatal(err)
	}
	if got, end := fileSize(t, dir), recordsEnd(t, dir); got != end {
		t.Errorf("a log that lived one record holds %d bytes for %d of records; want no fill written", got, end)
	}
	one.Close()
}

// The check of the end at Open reads a window of the last lines; blank lines in it
// (a damaged file: fill between records) cost it next to nothing, not a record's
// worth each, and the damage is said.
func TestOpen_BlankLinesInTheTailCostLittle(t *testing.T) {
	path, whole := writeLog(t, 3)
	lines := bytes.SplitAfter(whole, []byte("\n"))
	last := lines[len(lines)-2]
	b := append(bytes.Clone(whole[:len(whole)-len(last)]), bytes.Repeat([]byte("\n"), 256<<10)...)
	write(t, path, append(b, last...))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a, err := audit.Open(path)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("opening a log with 256 KiB of blank lines before its last record allocated %d MB; want under 16", got>>20)
	}
	// Before the record the head names: damage in the log's history, said (a
	// notice), as any damaged record there is.
	if p := a.Problem(); p == nil || !strings.Contains(p.Error(), "blank line") {
		t.Errorf("a log with blank lines before its last record: %v; want the damage said", p)
	}
}

// A commit whose sync fails beside bytes no airlock wrote (in the fill, past its
// own) cannot cut the file back without cutting them: its own bytes are made fill
// again instead, so another airlock that has the log open never takes the denied
// call's record for one of the log's.
func TestLog_AFailedSyncBesideForeignBytesLeavesNoRecord(t *testing.T) {
	a, path := openTemp(t)
	if err := a.Append(rec(0)); err != nil {
		t.Fatal(err)
	}
	waitFilled(t, path)
	b, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("FOREIGN"), recordsEnd(t, path)+500_000)
	f.Close()
	audit.FailCommitSyncs(errors.New("an I/O error"))
	denied := rec(1)
	denied.CallID = "the-denied-call"
	err = a.AppendDecision(denied)
	audit.FailCommitSyncs(nil)
	if !errors.Is(err, audit.ErrBroken) {
		t.Fatalf("a decision whose sync failed: %v; want a refusal", err)
	}
	if err := b.Append(rec(2)); err != nil {
		t.Fatalf("the other log's append: %v", err)
	}
	data, _ := os.ReadFile(path)
	if bytes.Contains(data, []byte("the-denied-call")) {
		t.Error("the denied call's record is in the log")
	}
	if !bytes.Contains(data, []byte("FOREIGN")) {
		t.Error("the bytes no airlock wrote were cut")
	}
}

// A segment full beside bytes no airlock wrote is not closed: the commit is
// refused, the log damaged, nothing renamed, the bytes left where they were.
func TestLog_RotationOverForeignBytesRenamesNothing(t *testing.T) {
	a, path := openTemp(t)
	if err := a.Append(rec(0)); err != nil {
		t.Fatal(err)
	}
	waitFilled(t, path)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("FOREIGN"), recordsEnd(t, path)+500_000)
	f.Close()
	a.SetSegmentBytes(1)
	if err := a.Append(rec(1)); !errors.Is(err, audit.ErrBroken) || !a.Damaged() {
		t.Errorf("a rotation beside bytes no airlock wrote: %v (problem %v); want a refusal, the log damaged", err, a.Problem())
	}
	if segmentClosed(path) {
		t.Error("the segment was closed with the bytes in it")
	}
	if data, _ := os.ReadFile(path); !bytes.Contains(data, []byte("FOREIGN")) {
		t.Error("the bytes no airlock wrote were cut")
	}
}
