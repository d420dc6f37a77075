package approval

import (
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// A rate limit the managed policy set is named as the policy's in the question's
// sentence (tool, server and context limits); the person's own limit is not.
func TestRates_PolicyLimitNamesThePolicy(t *testing.T) {
	pol := func(line int) config.Source { return config.Source{File: "/etc/airlock/policy.toml", Line: line} }
	ask := config.Rate{N: 3, Per: time.Minute, Action: trust.Ask}
	loose := config.Rate{N: 10, Per: time.Minute, Action: trust.Ask}
	for _, tt := range []struct {
		name string
		opts Options
		want string
	}{
		{"the person's own", Options{Servers: rateServers(ask)},
			"asked: the 4th call of web__fetch_url this minute; limit 3/min"},
		{"the policy's tool limit", Options{Servers: []config.Server{{Name: "web", Tools: map[string]config.Tool{"fetch_url": {Rate: &loose, PolicyRates: []config.SourcedRate{{Rate: ask, Source: pol(7)}}}}}}},
			"asked: the 4th call of web__fetch_url this minute; limit 3/min (policy: /etc/airlock/policy.toml:7)"},
		{"the person's tighter tool limit", Options{Servers: []config.Server{{Name: "web", Tools: map[string]config.Tool{"fetch_url": {Rate: &ask, PolicyRates: []config.SourcedRate{{Rate: loose, Source: pol(7)}}}}}}},
			"asked: the 4th call of web__fetch_url this minute; limit 3/min"},
		{"the policy's server limit", Options{Servers: []config.Server{{Name: "web", PolicyRates: []config.SourcedRate{{Rate: ask, Source: pol(4)}}}}},
			"asked: the 4th call to server web this minute; limit 3/min (policy: /etc/airlock/policy.toml:4)"},
		{"the policy's context limit", Options{Limits: perMinute(3), LimitSources: map[string]config.Source{"calls_per_minute": pol(2)}, Servers: []config.Server{{Name: "web"}}},
			"asked: the 4th call of this context this minute; limit 3/min (policy: /etc/airlock/policy.toml:2)"},
	} {
		a := &askedFirst{}
		tt.opts.Approver, tt.opts.Now = a, time.Now
		e := New(tt.opts)
		var got string
		for range 4 {
			got = authorizeFetch(e, a)
		}
		if got != tt.want {
			t.Errorf("%s: the 4th call: %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// perMinute is the default limits with limits.calls_per_minute at n, asking.
func perMinute(n int) config.Limits {
	l := config.DefaultLimits()
	l.CallsPerMinute, l.RateAction = n, trust.Ask
	return l
}
