package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/airlock-mcp/airlock/trust"
)

// Rate is a rate limit: at most N calls in any window of Per (a sliding window).
// A call beyond it asks (Action trust.Ask, the default) or is denied (trust.Deny),
// whatever the policy, a rule or a grant would have done; a denial stays a denial.
type Rate struct {
	N      int
	Per    time.Duration
	Action trust.Action
}

// MaxRate bounds N in a rate (and limits.calls_per_minute): the rate file keeps
// every counted call of a window, so a window holds at most this many and some.
const MaxRate = 10000

// ratePers are the windows a rate may name, by the unit written after the slash.
var ratePers = []struct {
	unit string
	per  time.Duration
	word string // "this minute"
}{{"s", time.Second, "second"}, {"min", time.Minute, "minute"}, {"h", time.Hour, "hour"}}

// String is the rate as the config writes it ("3/min"), without its action.
func (r Rate) String() string {
	for _, p := range ratePers {
		if p.per == r.Per {
			return strconv.Itoa(r.N) + "/" + p.unit
		}
	}
	return strconv.Itoa(r.N) + "/" + r.Per.String()
}

// Window names the rate's window as a sentence does: "minute" for "N/min".
func (r Rate) Window() string {
	for _, p := range ratePers {
		if p.per == r.Per {
			return p.word
		}
	}
	return r.Per.String()
}

// Denies reports whether a call beyond the rate is denied rather than asked about.
func (r Rate) Denies() bool { return r.Action == trust.Deny }

// ParseRate reads "N/s", "N/min" or "N/h" (N from 1 to MaxRate); the action is
// trust.Ask.
func ParseRate(s string) (Rate, error) {
	num, unit, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(num)
	if ok && err == nil && n >= 1 && n <= MaxRate && num == strconv.Itoa(n) {
		for _, p := range ratePers {
			if unit == p.unit {
				return Rate{N: n, Per: p.per, Action: trust.Ask}, nil
			}
		}
	}
	return Rate{}, fmt.Errorf(`want "N/s", "N/min" or "N/h" with N from 1 to %d, got %q`, MaxRate, s)
}

// rate reads a table's rate and rate_action keys (at is the table's key path); nil
// when rate is absent or invalid (reported). rate_action without rate is reported.
func (b *builder) rate(at toml.Key, rate, action value) *Rate {
	k := func(key string) toml.Key { return append(at[:len(at):len(at)], key) }
	act := b.rateAction(k("rate_action"), action)
	s, ok := b.str(k("rate"), rate)
	if !ok {
		if action.set && !rate.set {
			b.probs.add(k("rate_action"), "set without rate beside it")
		}
		return nil
	}
	r, err := ParseRate(s)
	if err != nil {
		b.probs.add(k("rate"), "%s", err.Error())
		return nil
	}
	r.Action = act
	return &r
}

// rateAction reads an ask|deny word; trust.Ask when absent or invalid (reported).
func (b *builder) rateAction(k toml.Key, v value) trust.Action {
	w, ok := b.str(k, v)
	switch {
	case !ok || w == "ask":
		return trust.Ask
	case w == "deny":
		return trust.Deny
	}
	b.probs.add(k, "want ask|deny, got %q", w)
	return trust.Ask
}

// callsPerMinute reads limits.calls_per_minute and limits.rate_action into l.
func (b *builder) callsPerMinute(r *rawLimits, l *Limits) {
	k := toml.Key{"limits", "calls_per_minute"}
	var n int64
	if r.RateAction.set && !r.CallsPerMinute.set {
		b.probs.add(toml.Key{"limits", "rate_action"}, "set without calls_per_minute beside it")
	}
	if !b.positive(k, r.CallsPerMinute, &n) {
		return
	}
	if n > MaxRate {
		b.probs.add(k, "want at most %d, got %d", MaxRate, n)
		return
	}
	l.CallsPerMinute = int(n)
	l.RateAction = b.rateAction(toml.Key{"limits", "rate_action"}, r.RateAction)
}
