package approval

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

func TestRateSentences(t *testing.T) {
	minute := func(n int) config.Rate { return config.Rate{N: n, Per: time.Minute} }
	for _, c := range []struct {
		l    rateLimit
		nth  int
		want string
	}{
		{rateLimit{rateTool, "web__fetch_url", minute(3), ""}, 4, "the 4th call of web__fetch_url this minute; limit 3/min"},
		{rateLimit{rateServer, "web", minute(3), ""}, 4, "the 4th call to server web this minute; limit 3/min"},
		{rateLimit{rateContext, "", minute(60), ""}, 61, "the 61st call of this context this minute; limit 60/min"},
		{rateLimit{rateTool, "mail__send", config.Rate{N: 1, Per: time.Second}, ""}, 2, "the 2nd call of mail__send this second; limit 1/s"},
		{rateLimit{rateServer, "mail", config.Rate{N: 2, Per: time.Hour}, ""}, 3, "the 3rd call to server mail this hour; limit 2/h"},
	} {
		if got := c.l.sentence(c.nth); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 101: "101st", 111: "111th", 113: "113th", 10001: "10001st"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}

// rateServers is a server web whose fetch_url has the rate r.
func rateServers(r config.Rate) []config.Server {
	return []config.Server{{Name: "web", Tools: map[string]config.Tool{"fetch_url": {Rate: &r}}}}
}

// allowedFetch is web's fetch_url as a listing would make it, its policy allowing it.
var allowedFetch = model.ToolInfo{Ref: trust.Ref{Server: "web", Tool: "fetch_url"}, Class: trust.Classification{Tier: trust.TierRead, Action: trust.Allow}}

// askedFirst is an approver that denies every call and keeps the first reason of
// each question.
type askedFirst struct {
	mu  sync.Mutex
	why []string
}

func (a *askedFirst) Approve(_ context.Context, p *model.Pending) (model.Response, error) {
	a.mu.Lock()
	a.why = append(a.why, p.Verdict.Reasons[0])
	a.mu.Unlock()
	return model.Response{Answer: model.Deny}, nil
}

// authorizeFetch decides one call of fetch_url in context token:ci and says how:
// "allow", or "asked: " and the question's first reason.
func authorizeFetch(e *Engine, a *askedFirst) string {
	d, err := e.Authorize(context.Background(), e.NewCallID(), model.CallRequest{Context: "token:ci", Server: "web", Tool: "fetch_url", Args: []byte(`{}`)}, allowedFetch, true)
	switch {
	case err != nil:
		return err.Error()
	case d.Verdict.Action == trust.Allow:
		return "allow"
	case d.Asked:
		a.mu.Lock()
		defer a.mu.Unlock()
		return "asked: " + a.why[len(a.why)-1]
	}
	return "denied: " + d.Verdict.Reasons[0]
}

// envRatesProcess names the state dir of the second airlock process
// TestRates_SharedWithAnotherProcess starts (this test binary, see TestMain).
const envRatesProcess = "AIRLOCK_TEST_RATES_PROCESS"

// ratesProcess is that second process: two calls of fetch_url (rate 3/min) on the
// state dir dir, each printed as authorizeFetch says it.
func ratesProcess(dir string) int {
	a := &askedFirst{}
	e := New(Options{Approver: a, StateDir: dir, Now: time.Now, Servers: rateServers(config.Rate{N: 3, Per: time.Minute, Action: trust.Ask})})
	for range 2 {
		fmt.Println(authorizeFetch(e, a))
	}
	return 0
}

// Two airlock processes on one state dir share the counts: two calls here, two in
// a real second process, and the second process's 2nd is the 4th: it asks. The
// last check before forwarding (DecideCall again) takes no slot.
func TestRates_SharedWithAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	a := &askedFirst{}
	e := New(Options{Approver: a, StateDir: dir, Now: time.Now, Servers: rateServers(config.Rate{N: 3, Per: time.Minute, Action: trust.Ask})})
	for range 2 {
		if got := authorizeFetch(e, a); got != "allow" {
			t.Fatalf("a call under the limit: %s", got)
		}
		if v, _ := e.DecideCall("token:ci", allowedFetch, []byte(`{}`), true); v.Action != trust.Allow {
			t.Fatalf("the check before forwarding: %s", v.Action)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), envRatesProcess+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the second process: %v\n%s", err, out)
	}
	if want := "allow\nasked: the 4th call of web__fetch_url this minute; limit 3/min\n"; string(out) != want {
		t.Errorf("the second process says\n%s\nwant\n%s", out, want)
	}
	if got := authorizeFetch(e, a); got != "asked: the 4th call of web__fetch_url this minute; limit 3/min" {
		t.Errorf("this process after the other's calls: %s", got)
	}
}

// A window keeps at most its limit and maxOverKept calls beyond it (calls a person
// allowed), and calls past its end are pruned: the file's size is bounded.
func TestRates_WindowsAreBounded(t *testing.T) {
	now := time.Unix(1e9, 0)
	b := newRateBook(rateServers(config.Rate{N: 3, Per: time.Minute}), config.Limits{}, nil, t.TempDir())
	limits := b.limitsFor(allowedFetch.Ref)
	for range maxOverKept + 10 {
		now = now.Add(time.Millisecond)
		if _, err := b.take("you", limits, now, func(rateLimit) bool { return true }, false); err != nil {
			t.Fatal(err)
		}
	}
	w, err := b.load()
	if err != nil {
		t.Fatal(err)
	}
	key := rateKey{Context: "you", Scope: rateTool, Name: "web__fetch_url", Per: time.Minute}
	if n := len(w[key]); n != 3+maxOverKept {
		t.Errorf("the window keeps %d calls, want %d", n, 3+maxOverKept)
	}
	if _, err := b.take("other", limits, now.Add(time.Minute), nil, false); err != nil {
		t.Fatal(err)
	}
	if w, _ := b.load(); len(w) != 1 || len(w[key]) != 0 {
		t.Errorf("after the window ended the file holds %v", w)
	}
	if newRateBook([]config.Server{{Name: "web"}}, config.Limits{}, nil, t.TempDir()) != nil {
		t.Error("a book with no limit set")
	}
	if _, err := os.Stat(filepath.Join(t.TempDir(), RatesFile)); err == nil {
		t.Error("a rates file where no limit is set")
	}
}

// BenchmarkAuthorize is one call the policy allows, decided: with no limit
// configured (no file is touched), with a limit on another tool only (neither),
// with a limit counted in memory, and with one in the state dir's rates.json. The
// clock moves a second a call, so 100/min is never reached and a window holds 60
// calls.
func BenchmarkAuthorize(b *testing.B) {
	limit := rateServers(config.Rate{N: 100, Per: time.Minute, Action: trust.Ask})
	other := []config.Server{{Name: "web", Tools: map[string]config.Tool{"lookup": {Rate: &config.Rate{N: 1, Per: time.Hour}}}}}
	for _, c := range []struct {
		name    string
		servers []config.Server
		dir     bool
	}{{"no limit", nil, false}, {"no limit, a state dir", nil, true}, {"another tool's limit, a state dir", other, true},
		{"limit in memory", limit, false}, {"limit in rates.json", limit, true}} {
		b.Run(c.name, func(b *testing.B) {
			dir := ""
			if c.dir {
				dir = b.TempDir()
			}
			now := time.Unix(1e9, 0)
			e := New(Options{Approver: &askedFirst{}, StateDir: dir, Servers: c.servers, Now: func() time.Time { now = now.Add(time.Second); return now }})
			req := model.CallRequest{Context: "token:ci", Server: "web", Tool: "fetch_url", Args: []byte(`{}`)}
			b.ReportAllocs()
			for b.Loop() {
				if d, _ := e.Authorize(context.Background(), "c1", req, allowedFetch, true); d.Verdict.Action != trust.Allow {
					b.Fatal(d.Verdict)
				}
			}
		})
	}
}

// allowAfter is an approver that holds every question until n wait, then allows
// each once.
type allowAfter struct {
	n    int
	mu   sync.Mutex
	seen int
	all  chan struct{}
}

func (a *allowAfter) Approve(ctx context.Context, _ *model.Pending) (model.Response, error) {
	a.mu.Lock()
	if a.seen++; a.seen == a.n {
		close(a.all)
	}
	a.mu.Unlock()
	select {
	case <-a.all:
	case <-ctx.Done():
		return model.Response{}, ctx.Err()
	}
	return model.Response{Answer: model.AllowOnce}, nil
}

// Calls the policy asks about are only looked at when asked; the person's yes to a
// question that did not name a limit, or to one whose action denies, never runs
// a call beyond it: two calls asked together under 1/min, both allowed, one runs.
func TestRates_AllowedQuestionsStayUnderTheLimit(t *testing.T) {
	for _, act := range []trust.Action{trust.Deny, trust.Ask} {
		a := &allowAfter{n: 2, all: make(chan struct{})}
		e := New(Options{Approver: a, StateDir: t.TempDir(), Now: time.Now, Servers: rateServers(config.Rate{N: 1, Per: time.Minute, Action: act})})
		asked := allowedFetch
		asked.Class.Action = trust.Ask
		var wg sync.WaitGroup
		var mu sync.Mutex
		ran := 0
		for range 2 {
			wg.Go(func() {
				d, err := e.Authorize(context.Background(), e.NewCallID(), model.CallRequest{Context: "token:ci", Server: "web", Tool: "fetch_url", Args: []byte(`{}`)}, asked, true)
				if err == nil && d.Verdict.Action == trust.Allow {
					mu.Lock()
					ran++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if ran != 1 {
			t.Errorf("rate_action %s: %d calls ran under 1/min", act, ran)
		}
	}
}

// The system clock stepped forward (by a person, by NTP) must not end a window
// early: the calls this process counted are aged by the process's monotonic clock,
// which a step does not move, so the 4th call after the step still asks. Aged
// past the window on that clock, they are dropped as before. book.age is the seam
// a test steps the wall clock through (time.Now's monotonic reading cannot be
// stepped from a test).
func TestRates_ClockSteppedForwardKeepsTheWindow(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} {
		start := time.Unix(1e9, 0)
		stepAt := start.Add(10 * time.Second)
		const step = time.Hour
		b := newRateBook(rateServers(config.Rate{N: 3, Per: time.Minute}), config.Limits{}, nil, dir)
		b.age = func(now, at time.Time) time.Duration {
			d := now.Sub(at)
			if now.After(stepAt) && !at.After(stepAt) {
				d -= step // the monotonic clock did not see the step
			}
			return d
		}
		limits := b.limitsFor(allowedFetch.Ref)
		now := start
		for i := range 3 {
			now = now.Add(time.Second)
			if over, err := b.take("you", limits, now, nil, false); err != nil || over != nil {
				t.Fatalf("call %d: over %+v, err %v", i+1, over, err)
			}
		}
		now = now.Add(step + 20*time.Second) // 20 s later on the monotonic clock
		over, err := b.take("you", limits, now, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if over == nil || over.nth != 4 {
			t.Fatalf("in memory %v: after the clock stepped forward an hour the 4th call is not over the limit: %+v", dir == "", over)
		}
		now = now.Add(time.Minute) // now past the window on the monotonic clock too
		if over, err := b.take("you", limits, now, nil, false); err != nil || over != nil {
			t.Fatalf("in memory %v: a minute later still over: %+v, err %v", dir == "", over, err)
		}
	}
}

// A clock stepped back keeps no window full past its end either: this process's
// calls leave it a window's length after they were counted, by its own clock.
func TestRates_ClockSteppedBackEndsTheWindowOnTime(t *testing.T) {
	start := time.Unix(1e9, 0)
	stepAt := start.Add(10 * time.Second)
	const step = time.Hour
	b := newRateBook(rateServers(config.Rate{N: 1, Per: time.Minute}), config.Limits{}, nil, t.TempDir())
	b.age = func(now, at time.Time) time.Duration {
		d := now.Sub(at)
		if now.After(stepAt.Add(-step)) && now.Before(stepAt) && !at.After(stepAt) && at.After(start) {
			d += step // after the step back, the monotonic clock is an hour ahead of the wall
		}
		return d
	}
	limits := b.limitsFor(allowedFetch.Ref)
	if over, err := b.take("you", limits, start.Add(time.Second), nil, false); err != nil || over != nil {
		t.Fatalf("first call: %+v, %v", over, err)
	}
	back := start.Add(time.Second - step + 30*time.Second) // 30 s on: still in the window
	if over, _ := b.take("you", limits, back, nil, false); over == nil {
		t.Fatal("30 s after the first call, after a step back, the second call is not over the limit")
	}
	if over, err := b.take("you", limits, back.Add(31*time.Second), nil, false); err != nil || over != nil {
		t.Fatalf("61 s after the first call, after a step back, still over: %+v, %v", over, err)
	}
}
