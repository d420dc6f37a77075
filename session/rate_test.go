package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// rateWeb is a trusted server web with two read-only tools the policy allows,
// fetch_url and lookup, and a config holding it whose rate limits f sets, its
// state in dir ("": the counts are kept in memory).
func rateWeb(dir string, f func(c *config.Config)) (*sessiontest.Upstream, *config.Config) {
	web := sessiontest.NewUpstream("web")
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: sessiontest.Hint(false)}
	web.Add("fetch_url", "Fetch a page.", ro)
	web.Add("lookup", "Look a word up.", ro)
	cfg := sessiontest.NewConfig(sessiontest.Inproc("web", trust.Trusted))
	cfg.StateDir = dir
	cfg.ApprovalTimeout = 300 * time.Millisecond
	f(cfg)
	return web, cfg
}

// toolRate sets rate on web's fetch_url.
func toolRate(r config.Rate) func(c *config.Config) {
	return func(c *config.Config) { c.Servers[0].Tools = map[string]config.Tool{"fetch_url": {Rate: &r}} }
}

// rateCall calls web's tool in context ctxName.
func rateCall(m *session.Manager, ctxName, tool string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := m.Call(ctx, model.CallRequest{Context: ctxName, Server: "web", Tool: tool, Args: json.RawMessage(`{}`)})
	return err
}

// mustRun calls web's tool in context ctxName n times, each of which must run.
func mustRun(t *testing.T, m *session.Manager, ctxName, tool string, n int) {
	t.Helper()
	for i := range n {
		if err := rateCall(m, ctxName, tool); err != nil {
			t.Fatalf("call %d of %s in context %q: %v", i+1, tool, ctxName, err)
		}
	}
}

// decisions are the audit log's decision records of tool, in order.
func decisions(t *testing.T, path, tool string) []audit.Record {
	t.Helper()
	var out []audit.Record
	for _, r := range sessiontest.AuditRecords(t, path) {
		if r.Kind == "decision" && r.Tool == tool {
			out = append(out, r)
		}
	}
	return out
}

// The 4th of four quick calls to a tool whose policy allows it, with rate = "3/min",
// is not run unasked: it asks, and the question, the audit record, the caller and
// the Activity say why ("the 4th call of web__fetch_url this minute; limit 3/min").
// A call the person allows counts; one nobody allowed does not; another context
// has a count of its own.
func TestRate_FourthCallAsksNamingTheLimit(t *testing.T) {
	web, cfg := rateWeb("", toolRate(config.Rate{N: 3, Per: time.Minute, Action: trust.Ask}))
	log, path := sessiontest.OpenAuditLog(t)
	m := sessiontest.StartUpstreams(t, cfg, session.Options{Audit: log}, map[string]*sessiontest.Upstream{"web": web})
	evs := sessiontest.CollectEvents(t, m)
	mustRun(t, m, "", "fetch_url", 3)
	if n := evs.Count(sessiontest.IsApproval); n != 0 {
		t.Fatalf("%d questions for calls under the limit", n)
	}
	const fourth = "the 4th call of web__fetch_url this minute; limit 3/min"
	err := rateCall(m, "", "fetch_url")
	if d := sessiontest.Denied(t, err); d.Verdict.By != trust.DecidedByTimeout {
		t.Fatalf("the 4th call ended %v, want asked and timed out", err)
	}
	if p := evs.Pending(t, 1); len(p.Verdict.Reasons) == 0 || p.Verdict.Reasons[0] != fourth {
		t.Errorf("the question says %q, want first %q", p.Verdict.Reasons, fourth)
	}
	asked := "asked because " + fourth + "; nobody answered within 300ms"
	if !strings.Contains(err.Error(), asked) {
		t.Errorf("the caller is told %q, want %q", err, asked)
	}
	if recs := decisions(t, path, "fetch_url"); len(recs) != 4 || !strings.Contains(recs[3].Reason, asked) {
		t.Errorf("the 4th decision record: %+v, want its reason %q", recs, asked)
	}
	ev := evs.Wait(t, "the 4th call's CallFinished", 10*time.Second, func(ev model.Event) bool {
		f, ok := ev.(model.CallFinished)
		return ok && f.Tool == "fetch_url" && f.Decision == "deny"
	})
	if why := strings.Join(ev.(model.CallFinished).Reasons, "; "); !strings.Contains(why, asked) {
		t.Errorf("the Activity says %q, want %q", why, asked)
	}
	// Nobody allowed it, so it did not count: the next is the 4th again. The person
	// allows that one, and it counts: the one after is the 5th.
	go func() { _ = m.Engine().Answer(evs.Pending(t, 2).ID, model.Response{Answer: model.AllowOnce}) }()
	if err := rateCall(m, "", "fetch_url"); err != nil {
		t.Fatalf("the call the person allowed: %v", err)
	}
	if p := evs.Pending(t, 2); p.Verdict.Reasons[0] != fourth {
		t.Errorf("the question after a timeout says %q, want %q", p.Verdict.Reasons[0], fourth)
	}
	go func() { _ = m.Engine().Answer(evs.Pending(t, 3).ID, model.Response{Answer: model.Deny}) }()
	if err := rateCall(m, "", "fetch_url"); err == nil {
		t.Fatal("the person denied the call, and it ran")
	}
	if p, want := evs.Pending(t, 3), "the 5th call of web__fetch_url this minute; limit 3/min"; p.Verdict.Reasons[0] != want {
		t.Errorf("the question after an allowed one says %q, want %q", p.Verdict.Reasons[0], want)
	}
	if n := len(web.Calls("fetch_url")); n != 4 {
		t.Errorf("fetch_url ran %d times, want 4", n)
	}
	// An agent's context and a tool without a limit are counted apart.
	mustRun(t, m, "token:ci", "fetch_url", 3)
	mustRun(t, m, "", "lookup", 5)
	if n := evs.Count(sessiontest.IsApproval); n != 3 {
		t.Errorf("%d questions, want 3", n)
	}
}

// With rate_action = "deny" the call beyond a limit is denied with the limit's
// sentence, nothing asked: a tool's rate, a server's (all its tools together) and
// limits.calls_per_minute (every call of one context).
func TestRate_DenyBeyondTheLimit(t *testing.T) {
	deny := config.Rate{N: 3, Per: time.Minute, Action: trust.Deny}
	for _, c := range []struct {
		name  string
		set   func(c *config.Config)
		tools []string // the four calls, in order
		want  string
	}{
		{"tool", toolRate(deny), []string{"fetch_url", "lookup", "fetch_url", "fetch_url", "fetch_url"}, "the 4th call of web__fetch_url this minute; limit 3/min"},
		{"server", func(c *config.Config) { c.Servers[0].Rate = &deny }, []string{"fetch_url", "lookup", "fetch_url", "lookup"}, "the 4th call to server web this minute; limit 3/min"},
		{"context", func(c *config.Config) { c.Limits.CallsPerMinute, c.Limits.RateAction = 3, trust.Deny }, []string{"lookup", "fetch_url", "lookup", "fetch_url"}, "the 4th call of this context this minute; limit 3/min"},
	} {
		t.Run(c.name, func(t *testing.T) {
			web, cfg := rateWeb(t.TempDir(), c.set)
			m := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"web": web})
			evs := sessiontest.CollectEvents(t, m)
			last := len(c.tools) - 1
			for _, tool := range c.tools[:last] {
				mustRun(t, m, "token:ci", tool, 1)
			}
			d := sessiontest.Denied(t, rateCall(m, "token:ci", c.tools[last]))
			if d.Verdict.By != trust.DecidedByPolicy || len(d.Verdict.Reasons) == 0 || d.Verdict.Reasons[0] != c.want {
				t.Errorf("denied by %s: %q, want first %q", d.Verdict.By, d.Verdict.Reasons, c.want)
			}
			if n := evs.Count(sessiontest.IsApproval); n != 0 {
				t.Errorf("%d questions, want none", n)
			}
			if n := len(web.Calls("fetch_url")) + len(web.Calls("lookup")); n != last {
				t.Errorf("%d calls ran, want %d", n, last)
			}
		})
	}
}

// Two Managers on one state dir (two airlock processes' worth) share the counts:
// two calls in each, and the 4th asks.
func TestRate_SharedByTwoManagersOnOneStateDir(t *testing.T) {
	dir := t.TempDir()
	limit := toolRate(config.Rate{N: 3, Per: time.Minute, Action: trust.Ask})
	web1, cfg1 := rateWeb(dir, limit)
	web2, cfg2 := rateWeb(dir, limit)
	m1 := sessiontest.StartUpstreams(t, cfg1, session.Options{}, map[string]*sessiontest.Upstream{"web": web1})
	m2 := sessiontest.StartUpstreams(t, cfg2, session.Options{}, map[string]*sessiontest.Upstream{"web": web2})
	mustRun(t, m1, "token:ci", "fetch_url", 2)
	mustRun(t, m2, "token:ci", "fetch_url", 1)
	err := rateCall(m2, "token:ci", "fetch_url")
	if d := sessiontest.Denied(t, err); d.Verdict.By != trust.DecidedByTimeout || !strings.Contains(err.Error(), "the 4th call of web__fetch_url this minute; limit 3/min") {
		t.Errorf("the 4th call: %v, want asked naming the limit", err)
	}
	if n := len(web1.Calls("fetch_url")) + len(web2.Calls("fetch_url")); n != 3 {
		t.Errorf("%d calls ran, want 3", n)
	}
}

// Eight calls at once with rate = "3/min": exactly three run unasked, and each of
// the other five asks as the 4th, whether the counts are in memory or in the state
// dir's file.
func TestRate_ConcurrentCallsTakeEachSlotOnce(t *testing.T) {
	for _, where := range []string{"memory", "state dir"} {
		t.Run(where, func(t *testing.T) {
			dir := ""
			if where == "state dir" {
				dir = t.TempDir()
			}
			web, cfg := rateWeb(dir, toolRate(config.Rate{N: 3, Per: time.Minute, Action: trust.Ask}))
			cfg.ApprovalTimeout = 10 * time.Second
			m := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"web": web})
			a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.Deny}, model.Response{Answer: model.Deny},
				model.Response{Answer: model.Deny}, model.Response{Answer: model.Deny}, model.Response{Answer: model.Deny})
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Go(func() { errs[i] = rateCall(m, "token:ci", "fetch_url") })
			}
			wg.Wait()
			ran := 0
			for _, err := range errs {
				if err == nil {
					ran++
				}
			}
			if n := len(web.Calls("fetch_url")); ran != 3 || n != 3 {
				t.Errorf("%d calls allowed and %d ran, want 3 (errors %v)", ran, n, errs)
			}
			for range 5 {
				select {
				case p := <-a.Seen:
					if p.Verdict.Reasons[0] != "the 4th call of web__fetch_url this minute; limit 3/min" {
						t.Errorf("a question says %q", p.Verdict.Reasons[0])
					}
				default:
					t.Fatal("fewer than five calls asked")
				}
			}
		})
	}
}

// While rates.json cannot be read, whatever is wrong with it, every call under a
// limit asks, saying so; a call under no limit runs unasked.
func TestRate_UnreadableFileAsks(t *testing.T) {
	good := []byte(`{"version":1,"windows":[{"context":"token:ci","scope":"tool","name":"web__fetch_url","per":"1m0s","calls":[1]}]}` + "\n")
	forged := []byte(`{"version":1,"windows":[]}` + "\n")
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			d.apply(t, filepath.Join(dir, approval.RatesFile), good, forged)
			web, cfg := rateWeb(dir, toolRate(config.Rate{N: 3, Per: time.Minute, Action: trust.Deny}))
			m := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"web": web})
			a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.Deny})
			mustRun(t, m, "token:ci", "lookup", 1)
			sessiontest.NoAsk(t, a)
			sessiontest.Denied(t, rateCall(m, "token:ci", "fetch_url"))
			select {
			case p := <-a.Seen:
				if why := p.Verdict.Reasons[0]; !strings.Contains(why, "rates.json cannot be read") || !strings.Contains(why, "so it asks") {
					t.Errorf("the question says %q", why)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the call under a limit was not asked")
			}
			if n := len(web.Calls("fetch_url")); n != 0 {
				t.Errorf("fetch_url ran %d times", n)
			}
			if probs := m.StateFileProblems(); len(probs) != 1 || !strings.Contains(probs[0], approval.RatesFile+" cannot be read, so every call under a rate limit asks") {
				t.Errorf("StateFileProblems = %q", probs)
			}
		})
	}
}

// The rates file is the user's own, private, and holds only windows still open.
func TestRate_FileIsPrivateAndPruned(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	web, cfg := rateWeb(dir, toolRate(config.Rate{N: 3, Per: time.Second, Action: trust.Deny}))
	m := sessiontest.StartUpstreams(t, cfg, session.Options{Now: clock}, map[string]*sessiontest.Upstream{"web": web})
	mustRun(t, m, "token:a", "fetch_url", 3)
	sessiontest.Denied(t, rateCall(m, "token:a", "fetch_url"))
	mu.Lock()
	now = now.Add(1500 * time.Millisecond)
	mu.Unlock()
	mustRun(t, m, "token:b", "fetch_url", 1)
	path := filepath.Join(dir, approval.RatesFile)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s is %v, want 0600", path, st.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "token:a") || !strings.Contains(string(b), "token:b") {
		t.Errorf("%s holds %s, want only token:b's window", path, b)
	}
	mustRun(t, m, "token:a", "fetch_url", 3) // a's window closed
	if err := rateCall(m, "token:a", "fetch_url"); !errors.As(err, new(*model.DeniedError)) {
		t.Errorf("the 4th call in a's new window: %v", err)
	}
}

// A limit only tightens: a tool the policy denies stays denied by the policy (and
// counts nothing); a tool the policy asks about asks under the limit, the person's
// yes counting, and beyond a limit whose action is deny it is denied unasked.
func TestRate_OnlyTightens(t *testing.T) {
	deny := config.Rate{N: 1, Per: time.Minute, Action: trust.Deny}
	web, cfg := rateWeb(t.TempDir(), func(c *config.Config) {
		c.Servers[0].Tools = map[string]config.Tool{"fetch_url": {Policy: trust.Deny, Rate: &deny}, "lookup": {Policy: trust.Ask, Rate: &deny}}
	})
	m := sessiontest.StartUpstreams(t, cfg, session.Options{}, map[string]*sessiontest.Upstream{"web": web})
	a := sessiontest.AnswerWith(t, m, model.Response{Answer: model.AllowOnce})
	for range 2 {
		if d := sessiontest.Denied(t, rateCall(m, "", "fetch_url")); strings.Contains(strings.Join(d.Verdict.Reasons, "; "), "limit") {
			t.Errorf("the policy's denial names a limit: %q", d.Verdict.Reasons)
		}
	}
	if err := rateCall(m, "", "lookup"); err != nil {
		t.Fatalf("the call the person allowed: %v", err)
	}
	select {
	case p := <-a.Seen:
		if why := strings.Join(p.Verdict.Reasons, "; "); strings.Contains(why, "limit") {
			t.Errorf("the question under the limit names it: %q", why)
		}
	default:
		t.Fatal("the tool the policy asks about ran unasked")
	}
	d := sessiontest.Denied(t, rateCall(m, "", "lookup"))
	if d.Verdict.By != trust.DecidedByPolicy || d.Verdict.Reasons[0] != "the 2nd call of web__lookup this minute; limit 1/min" {
		t.Errorf("beyond the limit: denied by %s: %q", d.Verdict.By, d.Verdict.Reasons)
	}
	sessiontest.NoAsk(t, a)
	if n := len(web.Calls("fetch_url")) + len(web.Calls("lookup")); n != 1 {
		t.Errorf("%d calls ran, want 1", n)
	}
}
