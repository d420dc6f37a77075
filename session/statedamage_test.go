package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/trust"
)

// damage is one way a state file can be broken on disk. forged is what a forger
// would like airlock to read (a file that says nothing is tainted, no rule): the
// link points at it and the other user's file holds it.
type damage struct {
	name  string
	apply func(t *testing.T, path string, good, forged []byte)
}

func writeRaw(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// damages are the kinds of damage every state file airlock trusts is tested with.
var damages = []damage{
	{"cut", func(t *testing.T, path string, good, _ []byte) { writeRaw(t, path, good[:len(good)*2/3]) }},
	{"garbled", func(t *testing.T, path string, good, _ []byte) {
		b := []byte(string(good))
		for i := len(b) / 3; i < len(b)/3+12 && i < len(b); i++ {
			b[i] = "\x00\xff{[=\"#"[i%7]
		}
		writeRaw(t, path, b)
	}},
	{"empty", func(t *testing.T, path string, _, _ []byte) { writeRaw(t, path, nil) }},
	{"directory", func(t *testing.T, path string, _, _ []byte) {
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
	}},
	{"fifo", func(t *testing.T, path string, _, _ []byte) {
		// Nobody ever writes to it: an open or read that blocks hangs the test.
		if err := mkfifo(path); err != nil {
			t.Fatal(err)
		}
	}},
	{"link", func(t *testing.T, path string, _, forged []byte) {
		target := filepath.Join(t.TempDir(), "forged")
		writeRaw(t, target, forged)
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}},
	{"owner", func(t *testing.T, path string, _, forged []byte) {
		if os.Getuid() != 0 {
			t.Skip("changing a file's owner needs root")
		}
		writeRaw(t, path, forged)
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}},
}

// goodTaintFile is a taint.json as airlock writes it, with the person's context
// tainted by web__fetch (written by a real engine).
func goodTaintFile(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	e := session.NewTaintEngine(dir)
	e.TaintContext(model.PersonContext, trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch"}, CallID: "c-1", At: time.Unix(1e9, 0).UTC()})
	b, err := os.ReadFile(filepath.Join(dir, approval.TaintFile))
	if err != nil || !strings.Contains(string(b), "fetch") {
		t.Fatalf("the engine wrote no taint: %v %s", err, b)
	}
	return b
}

// While taint.json cannot be read, whatever is wrong with it, every context is
// treated as tainted: the exfiltration call the config allows unasked asks instead
// (the person's context and an agent's), the question names the file, and
// nothing runs unasked. Once the file can be read again its own taints decide.
func TestTaint_UnreadableFileTaintsEveryContext(t *testing.T) {
	good := goodTaintFile(t)
	forged := []byte(`{"version":1,"contexts":{}}` + "\n")
	// Well-formed JSON that is no taint file airlock writes: read as "nothing
	// tainted" it would clear every taint.
	wellFormed := func(b string) damage {
		return damage{"json " + b, func(t *testing.T, path string, _, _ []byte) { writeRaw(t, path, []byte(b)) }}
	}
	taintDamages := append(slices.Clone(damages), wellFormed(`null`), wellFormed(`{}`), wellFormed(`{"version":1}`),
		wellFormed(`{"version":2,"by_context":{}}`), wellFormed(`{"contexts":{}}`))
	for _, d := range taintDamages {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, approval.TaintFile)
			d.apply(t, path, good, forged)
			web, post, cfg := sessiontest.TaintSetup(dir)
			m := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"web": web, "post": post})
			a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.Deny}, model.Response{Answer: model.Deny})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for _, c := range []string{"", "agent-x-1"} {
				_, err := m.Call(ctx, model.CallRequest{Context: c, Server: "post", Tool: "post_msg", Args: json.RawMessage(`{"x":"y"}`)})
				var denied *model.DeniedError
				if !errors.As(err, &denied) {
					t.Fatalf("context %q: the exfiltration call was not denied: %v", c, err)
				}
				select {
				case p := <-a.Seen:
					if p.Verdict.By != trust.DecidedByTaint || p.Taint.Channel != trust.ChannelUnreadable ||
						!strings.Contains(strings.Join(p.Verdict.Reasons, " "), "taint.json cannot be read") {
						t.Errorf("context %q: asked by %s, taint %+v, reasons %q", c, p.Verdict.By, p.Taint, p.Verdict.Reasons)
					}
				default:
					t.Fatalf("context %q: the exfiltration call was not asked (%v)", c, err)
				}
			}
			if n := len(post.Calls("post_msg")); n != 0 {
				t.Fatalf("post_msg ran %d times", n)
			}
			if err := m.Engine().TaintStoreProblem(); err == nil {
				t.Error("the engine says nothing is wrong with taint.json")
			}
			// Put a readable file that taints nothing in its place: the contexts are clean.
			if err := os.RemoveAll(path); err != nil {
				t.Fatal(err)
			}
			writeRaw(t, path, forged)
			if tt := m.Engine().Taint(""); tt.Tainted() {
				t.Errorf("a readable file that taints nothing: still tainted %+v", tt)
			}
			if err := m.Engine().TaintStoreProblem(); err != nil {
				t.Errorf("after repair: %v", err)
			}
		})
	}
}

// While taint.json cannot be read the person may clear a context's taint through
// the guarded question (ClearTaintShown): only that context is clean, only in this
// process, and the clear is audited saying so. A new problem with the file taints
// it again.
func TestTaint_UnreadableFileClearIsAuditedAndPerContext(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, approval.TaintFile)
	writeRaw(t, path, []byte(`{"version":1,"contexts":{"you":`))
	logPath := filepath.Join(dir, "audit.jsonl")
	a, err := audit.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	e := session.NewTaintEngine(dir)
	e.SetAudit(a)
	shown := e.Taint("agent-x-1")
	if shown.Channel != trust.ChannelUnreadable {
		t.Fatalf("taint with a cut taint.json = %+v", shown)
	}
	if _, err := approval.ClearTaints(dir, "", nil); err == nil {
		t.Error("airlock taint clear cleared a file it cannot read")
	}
	if err := e.ClearTaintShown("agent-x-1", trust.Taint{By: trust.Ref{Server: "x", Tool: "y"}}); !errors.Is(err, approval.ErrTaintChanged) {
		t.Fatalf("clearing a taint not shown: %v", err)
	}
	if err := e.ClearTaintShown("agent-x-1", shown); err != nil {
		t.Fatal(err)
	}
	if e.Taint("agent-x-1").Tainted() || !e.Taint("").Tainted() {
		t.Fatalf("after clearing agent-x-1: agent %+v, you %+v", e.Taint("agent-x-1"), e.Taint(""))
	}
	recs := sessiontest.AuditRecords(t, logPath)
	last := recs[len(recs)-1]
	if last.Kind != "taint-cleared" || last.Context != "agent-x-1" || last.DecidedBy != "person" ||
		!strings.Contains(last.Reason, "taint.json cannot be read") || !strings.Contains(last.Reason, "this process only") {
		t.Errorf("audit record = %+v", last)
	}
	// Another problem (a directory now): a new question, every context tainted again.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if tt := e.Taint("agent-x-1"); tt.Channel != trust.ChannelUnreadable || !strings.Contains(tt.Subject, "not a regular file") {
		t.Errorf("after a new problem: %+v", tt)
	}
}

// goodRulesFile is a rules.toml with one remembered deny rule for post__post_msg
// when x is "y".
const goodRulesFile = `# Remembered decisions, written by airlock (docs/rules.md).
version = 1
count = 1

[[rules]]
  id = "r-0000abcd"
  server = "post"
  tool = "post_msg"
  policy = "deny"
  reason = "never post y"
  from = "the dialog, call c-1 in context you"
  created = 2026-01-01T00:00:00Z
  [rules.when]
    [rules.when.x]
      equals = "y"
`

// While rules.toml cannot be read at start, whatever is wrong with it, no call runs
// on what the file might have said: every tool asks (none was read in this
// process), even one the config allows unasked.
func TestRules_UnreadableFileAtStartAsks(t *testing.T) {
	forged := []byte("version = 1\n")
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			rules := filepath.Join(t.TempDir(), approval.RulesFile)
			d.apply(t, rules, []byte(goodRulesFile), forged)
			web, post, cfg := sessiontest.TaintSetup(dir)
			m := sessiontest.StartUpstreams(t, cfg, session.Options{RulesFile: rules}, map[string]*sessiontest.Upstream{"web": web, "post": post})
			a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.Deny})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := m.Call(ctx, model.CallRequest{Server: "post", Tool: "post_msg", Args: json.RawMessage(`{"x":"y"}`)})
			var denied *model.DeniedError
			if !errors.As(err, &denied) {
				t.Fatalf("the call was not denied: %v", err)
			}
			select {
			case p := <-a.Seen:
				if why := strings.Join(p.Verdict.Reasons, " "); !strings.Contains(why, "rules.toml cannot be read") {
					t.Errorf("the question does not say why it asks: %q", why)
				}
			default:
				if !strings.Contains(denied.Error(), "never post y") {
					t.Fatalf("the call was neither asked nor denied by the rule: %v", err)
				}
			}
			if n := len(post.Calls("post_msg")); n != 0 {
				t.Fatalf("post_msg ran %d times", n)
			}
			if v := m.Engine().Decide("", sessiontest.MustTool(t, m, "post", "post_msg")); v.Action != trust.Ask {
				t.Errorf("the tool's verdict as shown: %s by %s", v.Action, v.By)
			}
			probs := m.StateFileProblems()
			if len(probs) != 1 || !strings.Contains(probs[0], rules+" cannot be read") {
				t.Errorf("StateFileProblems = %q", probs)
			}
		})
	}
}

// rules.toml read well once, then damaged: the tools its rules were for ask (a
// deny rule read before still denies), and a tool no remembered rule was for runs
// as the config says. Once the file can be read again it decides as before.
func TestRules_UnreadableAfterGoodReadAsksForItsTools(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(t.TempDir(), approval.RulesFile)
	writeRaw(t, rules, []byte(goodRulesFile))
	web, post, cfg := sessiontest.TaintSetup(dir)
	m := sessiontest.StartUpstreams(t, cfg, session.Options{RulesFile: rules}, map[string]*sessiontest.Upstream{"web": web, "post": post})
	a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.Deny}, model.Response{Answer: model.Deny})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	call := func(tool, x string) error {
		srv, c := "post", "agent-1"
		if tool == "fetch" {
			srv, c = "web", "agent-2" // a fetch taints its context
		}
		_, err := m.Call(ctx, model.CallRequest{Context: c, Server: srv, Tool: tool, Args: json.RawMessage(`{"x":"` + x + `"}`)})
		return err
	}
	if err := call("post_msg", "z"); err != nil {
		t.Fatalf("no rule matches: %v", err)
	}
	if err := call("post_msg", "y"); err == nil || !strings.Contains(err.Error(), "never post y") {
		t.Fatalf("the deny rule: %v", err)
	}
	writeRaw(t, rules, []byte(goodRulesFile[:len(goodRulesFile)-40]))
	if err := call("post_msg", "z"); err == nil {
		t.Fatal("a tool a remembered rule was for ran unasked while rules.toml cannot be read")
	}
	select {
	case p := <-a.Seen:
		if why := strings.Join(p.Verdict.Reasons, " "); !strings.Contains(why, "rules.toml cannot be read") {
			t.Errorf("the question does not say why it asks: %q", why)
		}
	default:
		t.Fatal("not asked")
	}
	if err := call("post_msg", "y"); err == nil || !strings.Contains(err.Error(), "never post y") {
		t.Fatalf("the deny rule read before: %v", err)
	}
	if err := call("fetch", "y"); err != nil {
		t.Fatalf("a tool no rule was for: %v", err)
	}
	writeRaw(t, rules, []byte(goodRulesFile))
	if err := call("post_msg", "z"); err != nil {
		t.Fatalf("after repair: %v", err)
	}
	if probs := m.StateFileProblems(); len(probs) != 0 {
		t.Errorf("after repair: %q", probs)
	}
}

// taint.json is bounded: a write prunes the contexts idle longer than the prune age
// (limits.taint_prune_after_days, 30 days by default), audited. A context whose calls
// were decided meanwhile is not idle, even when another process (another engine on
// the same state dir) makes the write; the person's own context is never pruned.
func TestTaint_IdleContextsPrunedAudited(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "audit.jsonl")
	a, err := audit.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := t0
	now := func() time.Time { return clock }
	e := session.NewTaintEngine(dir)
	e.SetClock(now)
	by := trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch"}, CallID: "c-1"}
	for _, c := range []string{"agent-old-1", "agent-active", model.PersonContext} {
		tt := by
		tt.At = clock
		e.TaintContext(c, tt)
	}
	clock = t0.Add(20 * 24 * time.Hour)
	e.DecideCall("agent-active", model.ToolInfo{Ref: trust.Ref{Server: "post", Tool: "post_msg"}}, []byte(`{}`), false)

	clock = t0.Add(31 * 24 * time.Hour)
	other := session.NewTaintEngine(dir)
	other.SetClock(now)
	other.SetAudit(a)
	tt := by
	tt.At = clock
	other.TaintContext("agent-new", tt)
	list, err := approval.ListTaints(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range list {
		got = append(got, c.Context)
	}
	if strings.Join(got, " ") != "agent-active agent-new you" {
		t.Fatalf("taint.json holds %q, want agent-active agent-new you", got)
	}
	recs := sessiontest.AuditRecords(t, logPath)
	if len(recs) != 1 || recs[0].Kind != "taint-pruned" || recs[0].Context != "agent-old-1" || recs[0].DecidedBy != "policy" ||
		!strings.Contains(recs[0].Reason, "idle since 2026-01-01T12:00:00Z, longer than limits.taint_prune_after_days (30)") {
		t.Errorf("audit records = %+v", recs)
	}
	if e.Taint("agent-old-1").Tainted() || !e.Taint("agent-active").Tainted() {
		t.Error("the first engine does not follow the pruned file")
	}
}

// A rules.toml cut just after a whole rule still parses; the count airlock writes
// says rules are missing, so it is a damaged file, never one rule fewer.
func TestRules_CutAtARuleEndIsCaught(t *testing.T) {
	second := strings.Replace(strings.SplitN(goodRulesFile, "[[rules]]", 2)[1], "r-0000abcd", "r-0000beef", 1)
	full := strings.Replace(goodRulesFile, "count = 1", "count = 2", 1) + "\n[[rules]]" + second
	path := filepath.Join(t.TempDir(), approval.RulesFile)
	writeRaw(t, path, []byte(full))
	if rs, err := approval.ListRules(path); err != nil || len(rs) != 2 {
		t.Fatalf("the whole file: %d rules, %v", len(rs), err)
	}
	writeRaw(t, path, []byte(full[:strings.LastIndex(full, "[[rules]]")]))
	if rs, err := approval.ListRules(path); err == nil || !strings.Contains(err.Error(), "says it holds 2 rules, the file has 1 (cut short?)") {
		t.Fatalf("cut after the first rule: %d rules, %v", len(rs), err)
	}
}

// A taint.json larger than airlock reads (sparse, so the test writes little) is
// unreadable like any damaged one: every context is tainted.
func TestTaint_HugeFileIsUnreadable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, approval.TaintFile)
	writeRaw(t, path, []byte(`{"version":1,"contexts":{}}`))
	if err := os.Truncate(path, 65<<20); err != nil {
		t.Fatal(err)
	}
	e := session.NewTaintEngine(dir)
	if tt := e.Taint("agent-x"); tt.Channel != trust.ChannelUnreadable || !strings.Contains(tt.Subject, "more than the 67108864 airlock reads") {
		t.Fatalf("a 65 MiB taint.json: %+v", tt)
	}
}
