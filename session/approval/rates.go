package approval

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

// RatesFile is the name of the rate limits' counts in the state dir.
const RatesFile = "rates.json"

// The scopes of a rate limit: one tool's calls, one server's (all its tools
// together), or every call of a context (limits.calls_per_minute).
const (
	rateTool    = "tool"
	rateServer  = "server"
	rateContext = "context"
)

// rateLimit is one limit a call is held to.
type rateLimit struct {
	scope string
	name  string // the tool's qualified name, the server's name, "" for a context
	rate  config.Rate
	// source is "policy: FILE:LINE" when the managed policy set the limit (its
	// number, or its deny), "" when the person's config did.
	source string
}

// sourcedRate is a rate with where it came from, "" for the person's config.
type sourcedRate struct {
	rate   config.Rate
	source string
}

// sentence says that a call is the nth of the limit's window: "the 4th call of
// web__fetch_url this minute; limit 3/min".
func (l rateLimit) sentence(nth int) string {
	what := "the " + ordinal(nth) + " call of this context"
	switch l.scope {
	case rateTool:
		what = "the " + ordinal(nth) + " call of " + l.name
	case rateServer:
		what = "the " + ordinal(nth) + " call to server " + l.name
	}
	s := what + " this " + l.rate.Window() + "; limit " + l.rate.String()
	if l.source != "" {
		s += " (" + l.source + ")"
	}
	return s
}

// ordinal is n as "1st", "2nd", "3rd", "4th", "11th", "21st".
func ordinal(n int) string {
	s := strconv.Itoa(n)
	if n%100 >= 11 && n%100 <= 13 {
		return s + "th"
	}
	switch n % 10 {
	case 1:
		return s + "st"
	case 2:
		return s + "nd"
	case 3:
		return s + "rd"
	}
	return s + "th"
}

// rateKey is one window of counted calls: a context's calls under one limit.
type rateKey struct {
	Context, Scope, Name string
	Per                  time.Duration
}

// rateWindows are the counted calls of every window, each as Unix milliseconds,
// oldest first.
type rateWindows map[rateKey][]int64

// maxOverKept is how many calls beyond its limit a window keeps (calls a person
// allowed there), so that its size stays bounded whatever approves them.
const maxOverKept = 1000

// maxRatesFileBytes bounds the rates.json airlock reads; a larger one cannot be
// read, so every call under a limit asks.
const maxRatesFileBytes = 16 << 20

// rateBook holds calls to the configured rate limits. Each call is counted once,
// when it is decided, under the book's lock and (with a state dir) the rates
// file's lock, so two calls never both take a window's last slot, in one process
// or in several. Without a state dir the counts are kept in memory.
type rateBook struct {
	servers map[string][]sourcedRate
	tools   map[trust.Ref][]sourcedRate
	context *sourcedRate
	path    string // "" keeps the counts in memory

	// age is how long ago at was, at now: now.Sub(at), which for two readings of
	// time.Now is the monotonic clock's, untouched by a step of the system clock.
	// Tests set it to step the wall clock; nil is now.Sub(at).
	age func(now, at time.Time) time.Duration

	mu  sync.Mutex
	mem rateWindows // the counts when path is ""
	// mine are the calls this process counted, by window and Unix millisecond,
	// with the time they were counted at (its monotonic reading in it): such a
	// call ends its window by the process's own clock, so a system clock
	// stepped forward does not empty a window early. Calls other processes
	// counted have only their Unix milliseconds in the shared file, and are
	// aged by the system clock.
	mine map[rateKey]map[int64]time.Time
	// problem is why the rates file could not be read or written at the last
	// update (nil: it could); looked is whether one was made or the file read.
	problem error
	looked  bool
}

// newRateBook is the book of the rate limits servers and limits set, its counts in
// stateDir ("": in memory); nil when none is set, so a call costs nothing more.
func newRateBook(servers []config.Server, limits config.Limits, sources map[string]config.Source, stateDir string) *rateBook {
	b := &rateBook{servers: map[string][]sourcedRate{}, tools: map[trust.Ref][]sourcedRate{}}
	for _, s := range servers {
		if rs := bothRates(s.Rate, s.PolicyRates); len(rs) > 0 {
			b.servers[s.Name] = rs
		}
		for name, t := range s.Tools {
			if rs := bothRates(t.Rate, t.PolicyRates); len(rs) > 0 {
				b.tools[trust.Ref{Server: s.Name, Tool: name}] = rs
			}
		}
	}
	if limits.CallsPerMinute > 0 {
		src := sources["calls_per_minute"]
		if !src.IsPolicy() {
			src = sources["rate_action"]
		}
		b.context = &sourcedRate{config.Rate{N: limits.CallsPerMinute, Per: time.Minute, Action: limits.RateAction}, src.String()}
	}
	if len(b.servers) == 0 && len(b.tools) == 0 && b.context == nil {
		return nil
	}
	if stateDir != "" {
		b.path = filepath.Join(stateDir, RatesFile)
	} else {
		b.mem = rateWindows{}
	}
	return b
}

// bothRates are the person's rate and the managed policy's, each kept as a limit:
// a call must be under every one. Two over the same window are one window's
// count, so they become one limit: the smaller number, deny over ask.
// The policy's source stays with the limit when the policy's number is the one
// held to, or its deny is.
func bothRates(own *config.Rate, policy []config.SourcedRate) []sourcedRate {
	var out []sourcedRate
	add := func(r config.Rate, src string) {
		if r.N <= 0 {
			return
		}
		for i := range out {
			o := &out[i]
			if o.rate.Per == r.Per {
				if r.N < o.rate.N || r.N == o.rate.N && src != "" || r.Action == trust.Deny && o.rate.Action != trust.Deny {
					o.source = src
				}
				o.rate.N = min(o.rate.N, r.N)
				if r.Action == trust.Deny {
					o.rate.Action = trust.Deny
				}
				return
			}
		}
		out = append(out, sourcedRate{r, src})
	}
	if own != nil {
		add(*own, "")
	}
	for _, p := range policy {
		add(p.Rate, p.Source.String())
	}
	return out
}

// limitsFor are the limits a call of ref is held to: the tool's, the server's, the
// context's, in that order; none for a resource read or a prompt get, which are
// not tool calls.
func (b *rateBook) limitsFor(ref trust.Ref) []rateLimit {
	if _, channel := trust.ChannelOf(ref.Tool); channel {
		return nil
	}
	var out []rateLimit
	for _, r := range b.tools[ref] {
		out = append(out, rateLimit{rateTool, ref.Qualified(), r.rate, r.source})
	}
	for _, r := range b.servers[ref.Server] {
		out = append(out, rateLimit{rateServer, ref.Server, r.rate, r.source})
	}
	if b.context != nil {
		out = append(out, rateLimit{rateContext, "", b.context.rate, b.context.source})
	}
	return out
}

// rateOver is the first limit a call is beyond, and which call of its window the
// call would be.
type rateOver struct {
	limit rateLimit
	nth   int
}

// take counts a call of context k at now under every limit of limits, unless it
// is beyond one of them that excused (nil: none) does not let it pass: then nothing
// is counted and that limit is returned. peek only looks.
func (b *rateBook) take(k string, limits []rateLimit, now time.Time, excused func(rateLimit) bool, peek bool) (*rateOver, error) {
	var over *rateOver
	err := b.update(func(w rateWindows) bool {
		changed := b.prune(w, now)
		keys := make([]rateKey, len(limits))
		for i, l := range limits {
			keys[i] = rateKey{Context: k, Scope: l.scope, Name: l.name, Per: l.rate.Per}
			if n := len(w[keys[i]]); over == nil && n >= l.rate.N && (excused == nil || !excused(l)) {
				over = &rateOver{l, n + 1}
			}
		}
		if peek || over != nil {
			return changed
		}
		for i, key := range keys {
			// In order: a call decided a moment earlier may be counted later.
			calls := w[key]
			at, _ := slices.BinarySearch(calls, now.UnixMilli()+1)
			calls = slices.Insert(calls, at, now.UnixMilli())
			if keep := limits[i].rate.N + maxOverKept; len(calls) > keep {
				for _, ms := range calls[:len(calls)-keep] {
					delete(b.mine[key], ms)
				}
				calls = slices.Delete(calls, 0, len(calls)-keep)
			}
			w[key] = calls
			b.counted(key, now)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return over, nil
}

// prune drops every call past its window's end at now, and the windows left empty;
// it reports whether w changed. A call this process counted (b.mine) is past the
// end when it was counted a window's length ago by the process's own clock,
// whatever the system clock says now (stepped forward or back); any other call by
// the system clock (its Unix milliseconds).
func (b *rateBook) prune(w rateWindows, now time.Time) bool {
	aged := map[rateKey]map[int64]bool{} // this process's calls past their window
	for key, mine := range b.mine {
		for ms, at := range mine {
			if b.since(now, at) >= key.Per {
				if aged[key] == nil {
					aged[key] = map[int64]bool{}
				}
				aged[key][ms] = true
				delete(mine, ms)
			}
		}
		if len(mine) == 0 {
			delete(b.mine, key)
		}
	}
	changed := false
	for key, calls := range w {
		start := now.Add(-key.Per).UnixMilli()
		mine, old := b.mine[key], aged[key]
		kept := slices.DeleteFunc(calls, func(ms int64) bool {
			if _, ok := mine[ms]; ok {
				return false
			}
			return old[ms] || ms <= start
		})
		switch {
		case len(kept) == 0:
			delete(w, key)
		case len(kept) < len(calls):
			w[key] = kept
		default:
			continue
		}
		changed = true
	}
	return changed
}

// since is how long before now at was (book.age).
func (b *rateBook) since(now, at time.Time) time.Duration {
	if b.age != nil {
		return b.age(now, at)
	}
	return now.Sub(at)
}

// counted remembers a call this process counted in window key at now (b.mu held).
func (b *rateBook) counted(key rateKey, now time.Time) {
	if b.mine == nil {
		b.mine = map[rateKey]map[int64]time.Time{}
	}
	m := b.mine[key]
	if m == nil {
		m = map[int64]time.Time{}
		b.mine[key] = m
	}
	m[now.UnixMilli()] = now
}

// update applies change to the counts: in memory, or read from the rates file and
// written back (when change reports it changed) under the file's lock
// (rates.json.lock, session/statefile/lock_*.go), so that airlock processes that
// share a state dir never count past each other.
func (b *rateBook) update(change func(rateWindows) bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.path == "" {
		change(b.mem)
		return nil
	}
	err := b.updateFile(change)
	b.problem, b.looked = err, true
	return err
}

// updateFile is update with a state dir; b.mu is held.
func (b *rateBook) updateFile(change func(rateWindows) bool) error {
	if err := os.MkdirAll(filepath.Dir(b.path), 0o700); err != nil {
		return &rateFileError{"written", err}
	}
	lf, err := statefile.OpenLock(b.path + ".lock")
	if err != nil {
		return &rateFileError{"written", err}
	}
	defer lf.Close()
	if err := statefile.Lock(lf); err != nil {
		return &rateFileError{"written", err}
	}
	defer statefile.Unlock(lf)
	w, err := b.load()
	if err != nil {
		return &rateFileError{"read", err}
	}
	if !change(w) {
		return nil
	}
	if err := b.save(w); err != nil {
		return &rateFileError{"written", err}
	}
	return nil
}

// rateDoc is the rates file: every open window and its counted calls.
type rateDoc struct {
	Version int          `json:"version"`
	Windows []rateWindow `json:"windows"`
}

type rateWindow struct {
	Context string `json:"context"`
	Scope   string `json:"scope"`
	Name    string `json:"name,omitempty"`
	Per     string `json:"per"`
	// Calls are the calls counted, as Unix milliseconds, oldest first.
	Calls []int64 `json:"calls"`
}

// load reads the rates file (none: no calls counted). A file airlock did not
// write (another version, no windows, a window it cannot read) is an error, never
// "no calls counted".
func (b *rateBook) load() (rateWindows, error) {
	st, err := os.Stat(b.path)
	if errors.Is(err, fs.ErrNotExist) {
		return rateWindows{}, nil
	}
	if err != nil {
		return nil, err
	}
	if st.Size() > maxRatesFileBytes {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d airlock reads", b.path, st.Size(), maxRatesFileBytes)
	}
	raw, err := statefile.ReadFile(b.path) // a link, a FIFO or a file others may write is refused, never read
	if err != nil {
		return nil, err
	}
	var doc rateDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("reading %s: %w", b.path, err)
	}
	if doc.Version != 1 || doc.Windows == nil {
		return nil, fmt.Errorf("reading %s: not a version 1 file of windows", b.path)
	}
	w := make(rateWindows, len(doc.Windows))
	for _, win := range doc.Windows {
		per, err := time.ParseDuration(win.Per)
		if err != nil || per <= 0 || !slices.IsSorted(win.Calls) {
			return nil, fmt.Errorf("reading %s: a window of %q that is not one airlock writes", b.path, win.Context)
		}
		key := rateKey{Context: win.Context, Scope: win.Scope, Name: win.Name, Per: per}
		w[key] = append(w[key], win.Calls...)
	}
	return w, nil
}

// save writes w to the rates file, owner-only and atomically. It is rewritten at
// every call counted, so it is not synced: a power loss may forget the last calls.
func (b *rateBook) save(w rateWindows) error {
	doc := rateDoc{Version: 1, Windows: make([]rateWindow, 0, len(w))}
	for key, calls := range w {
		doc.Windows = append(doc.Windows, rateWindow{Context: key.Context, Scope: key.Scope, Name: key.Name, Per: key.Per.String(), Calls: calls})
	}
	slices.SortFunc(doc.Windows, func(a, b rateWindow) int {
		return cmp.Or(cmp.Compare(a.Context, b.Context), cmp.Compare(a.Scope, b.Scope), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Per, b.Per))
	})
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return statefile.WriteFileNoSync(b.path, append(out, '\n'))
}

// rateFileError is a rates file that cannot be read or written.
type rateFileError struct {
	verb string // "read" or "written"
	err  error
}

func (e *rateFileError) Error() string { return e.err.Error() }
func (e *rateFileError) Unwrap() error { return e.err }

// rateFileVerb is what could not be done with the rates file: "read" or "written".
func rateFileVerb(err error) string {
	var fe *rateFileError
	if errors.As(err, &fe) {
		return fe.verb
	}
	return "read"
}

// rateHold is what a call under rate limits owes them once a person allows it:
// its count in every window (a call the person allowed counts, beyond a limit
// too), and the sentence that made a call the verdict allowed ask.
type rateHold struct {
	limits []rateLimit
	why    string
	// named is whether the question said a rate limit's sentence: only then may
	// the person's yes pass a limit whose action asks.
	named bool
}

// holdToRates applies the rate limits of tool's calls in context k to v, the
// verdict without them. A denial stays a denial. A call the verdict allows takes
// its slot now, when it is decided; beyond a limit it asks instead (rate_action
// "ask") or is denied (rate_action "deny"), the limit's sentence first. A call the
// verdict asks about is only looked at (denied beyond a limit whose action is
// deny) and takes its slot when the person allows it (the hold returned). A call
// that takes its slot and is then not forwarded (a recheck or the audit log
// refuses it, its caller leaves) keeps it: counts fail closed. While the rates
// file cannot be read or written, every call under a limit asks, saying so.
func (e *Engine) holdToRates(k string, tool model.ToolInfo, v trust.Verdict) (trust.Verdict, *rateHold) {
	if e.rates == nil || v.Action == trust.Deny {
		return v, nil
	}
	limits := e.rates.limitsFor(tool.Ref)
	if len(limits) == 0 {
		return v, nil
	}
	allowed := v.Action == trust.Allow
	over, err := e.rates.take(k, limits, e.now(), nil, !allowed)
	hold := &rateHold{limits: limits}
	var why string
	switch {
	case err != nil:
		why = RatesFile + " cannot be " + rateFileVerb(err) + " (" + unreadableReason(err) + "), and a rate limit applies to this call, so it asks"
	case over == nil && allowed:
		return v, nil // its slot is taken
	case over == nil:
		return v, hold
	case over.limit.rate.Denies():
		return trust.Verdict{Action: trust.Deny, By: trust.DecidedByPolicy, Reasons: slices.Insert(slices.Clone(v.Reasons), 0, over.limit.sentence(over.nth))}, nil
	default:
		why = over.limit.sentence(over.nth)
	}
	if !allowed {
		// It asks anyway: what made it ask stays first (a taint's sentence is
		// what its question shows first).
		v.Reasons = append(slices.Clone(v.Reasons), why)
		hold.named = over != nil
		return v, hold
	}
	v.Action, v.By = trust.Ask, trust.DecidedByPolicy
	v.Reasons = slices.Insert(slices.Clone(v.Reasons), 0, why)
	hold.why, hold.named = why, over != nil
	return v, hold
}

// countAllowed counts a call the person allowed in the windows of hold (nil: it
// is held to none). The windows are looked at again: a limit whose action denies,
// or one the question did not name, that the call is beyond now (calls counted
// while the person decided) makes it a denial, returned with the limit's
// sentence; nil when it is counted. A file that cannot be written forgets it; the
// next call under the limit asks anyway.
func (e *Engine) countAllowed(k string, hold *rateHold) *trust.Verdict {
	if hold == nil {
		return nil
	}
	excused := func(l rateLimit) bool { return hold.named && !l.rate.Denies() }
	over, err := e.rates.take(k, hold.limits, e.now(), excused, false)
	if err != nil || over == nil {
		return nil
	}
	return &trust.Verdict{Action: trust.Deny, By: trust.DecidedByPolicy, Reasons: []string{over.limit.sentence(over.nth) + ", reached while the person decided, so the call is not forwarded; call again"}}
}
