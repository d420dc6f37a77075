package trust

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHazardsReusing_MatchesFullRecompute plays random what-if sequences over a
// toolset of several servers: each step changes Actions, legs or tiers (what a trust
// or policy change does), or a description, fingerprint or listing (what a server
// does), and HazardsReusing with the previous step's Shadowing must return exactly
// Hazards computed from nothing. Steps that change only Actions and legs must reuse
// the Shadowing, so the comparison covers the incremental path.
func TestHazardsReusing_MatchesFullRecompute(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 3))
	servers := []string{"a", "b", "c", "web", "S1", "s1"}
	names := []string{"send_email", "get2", "fetch-url", "sendEmail", "read.", "search", "tool_001", "tool_002"}
	words := []string{"see", "also", "call", "then", "a__send_email", "web__get2", "s1__tool_001", "TOOL_002", "."}
	tiers := []Tier{TierRead, TierWrite, TierDestructive, TierBlocked}
	actions := []Action{Allow, Ask, Deny}
	legs := []Leg{LegUntrustedContent, LegPrivateData, LegExfiltration}
	desc := func() string {
		var d []byte
		for range rng.IntN(6) {
			if rng.IntN(2) == 0 {
				d = append(d, names[rng.IntN(len(names))]...)
			} else {
				d = append(d, words[rng.IntN(len(words))]...)
			}
			d = append(d, ' ')
		}
		return string(d)
	}
	reused := 0
	for round := range 60 {
		var tools []Assessed
		for range 5 + rng.IntN(30) {
			tl := tool(servers[rng.IntN(len(servers))], names[rng.IntN(len(names))], tiers[rng.IntN(3)], actions[rng.IntN(3)], desc())
			tl.Fingerprint = fmt.Sprint(rng.IntN(2))
			tools = append(tools, tl)
		}
		_, sh := HazardsReusing(tools, nil)
		var kept []keptResult
		for step := range 40 {
			onlyActions := true
			for range 1 + rng.IntN(3) {
				if len(tools) == 0 {
					tools = append(tools, tool("a", "send_email", TierRead, Allow, desc()))
					onlyActions = false
				}
				i := rng.IntN(len(tools))
				c := &tools[i].Class
				switch rng.IntN(11) {
				case 0, 1, 2:
					c.Action = actions[rng.IntN(3)]
				case 3:
					c.Legs = nil
					for _, l := range legs {
						if rng.IntN(3) == 0 {
							c.Legs = append(c.Legs, l)
						}
					}
				case 4:
					was := c.Tier
					c.Tier = tiers[rng.IntN(len(tiers))]
					onlyActions = onlyActions && (was == TierBlocked) == (c.Tier == TierBlocked)
				case 5:
					tools[i].Description = desc()
					onlyActions = false
				case 6:
					tools[i].Fingerprint = fmt.Sprint(rng.IntN(2))
					onlyActions = false // may or may not differ
				case 7:
					if rng.IntN(2) == 0 {
						tools = slices.Delete(tools, i, i+1)
					} else {
						tools = slices.Insert(tools, i, tool(servers[rng.IntN(len(servers))], names[rng.IntN(len(names))], TierRead, Allow, desc()))
					}
					onlyActions = false
				case 8:
					// A server's trust toggled: every tool of it moves Action and
					// Untrusted at once (the what-if benchmark's change).
					server, untrusted := tools[i].Ref.Server, rng.IntN(2) == 0
					for k := range tools {
						if tools[k].Ref.Server == server {
							tools[k].Untrusted = untrusted
							tools[k].Class.Action = actions[rng.IntN(3)]
						}
					}
				case 9:
					tools[i].AllowRule = []string{"", "r1"}[rng.IntN(2)]
				case 10:
					// A server disconnects: its tools are gone.
					server := tools[i].Ref.Server
					tools = slices.DeleteFunc(tools, func(a Assessed) bool { return a.Ref.Server == server })
					onlyActions = false
				}
			}
			// Copies, so that neither call can see what the other did to its input.
			want := Hazards(slices.Clone(tools))
			got, next := HazardsReusing(tools, sh)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("round %d step %d: reusing differs from a full recompute (-want +got):\n%s", round, step, diff)
			}
			if onlyActions {
				if next.scan != sh.scan {
					t.Fatalf("round %d step %d: only Actions, legs and tiers moved, but the shadowing was worked out again", round, step)
				}
				reused++
			}
			// Results are read-only and share legs with each other (see Hazard): no
			// later call may change what an earlier one handed out.
			kept = append(kept, keptResult{got, deepCopyHazards(got)})
			for _, k := range kept {
				if diff := cmp.Diff(k.copy, k.got); diff != "" {
					t.Fatalf("round %d step %d: a later call changed an earlier result (-was +now):\n%s", round, step, diff)
				}
			}
			sh = next
		}
	}
	if reused < 500 {
		t.Errorf("only %d steps reused the shadowing; the test no longer covers the incremental path", reused)
	}
}

type keptResult struct{ got, copy []Hazard }

// deepCopyHazards copies hazards with their legs and rules, sharing no memory.
func deepCopyHazards(hs []Hazard) []Hazard {
	if hs == nil {
		return nil
	}
	out := make([]Hazard, len(hs))
	for i, h := range hs {
		h.Rules = slices.Clone(h.Rules)
		legs := make(map[string][]string, len(h.Legs))
		for k, v := range h.Legs {
			legs[k] = slices.Clone(v)
		}
		h.Legs = legs
		out[i] = h
	}
	return out
}
