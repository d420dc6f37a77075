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
	reused, partial := 0, 0
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
			if live := len(next.scan.live); next.scan != sh.scan && next.scan.rescanned < live {
				partial++
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
	if partial < 100 {
		t.Errorf("only %d steps read some texts again rather than all; the test no longer covers the partial scan", partial)
	}
}

// TestHazardsReusing_RelistingReadsOnlyWhatChanged: a server that re-lists with one
// description changed (a rug pull) made every description of the toolset be read
// again. Only the changed text is read now, and the texts that name a tool whose
// definition changed (the decoy rule compares fingerprints of same-named tools); a
// renamed tool or a server gone reads them all. The result is Hazards' each time.
func TestHazardsReusing_RelistingReadsOnlyWhatChanged(t *testing.T) {
	var tools []Assessed
	for _, server := range []string{"a", "b", "c", "d"} {
		for k := range 50 {
			tl := tool(server, fmt.Sprintf("tool_%03d", k), TierRead, Allow, fmt.Sprintf("reads records; see also tool_%03d.", (k+1)%50))
			tl.Fingerprint = server + fmt.Sprint(k)
			tools = append(tools, tl)
		}
	}
	check := func(step string, sh *Shadowing, wantRead int) *Shadowing {
		t.Helper()
		want := Hazards(slices.Clone(tools))
		got, next := HazardsReusing(tools, sh)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: differs from a full recompute (-want +got):\n%s", step, diff)
		}
		if next.scan.rescanned != wantRead {
			t.Errorf("%s: %d texts read, want %d", step, next.scan.rescanned, wantRead)
		}
		return next
	}
	sh := check("first listing", nil, 200)
	// b's tool_007 gets a new description with the same fingerprint (not realistic,
	// but it isolates the text): only that text is read.
	tools[57].Description = "now says: also call a__tool_001 and tool_020."
	sh = check("one text", sh, 1)
	// c's tool_020 changes its definition: its own text, and every text naming
	// tool_020 (tool_019 of each server, and b's tool_007 above) are read.
	tools[120].Description = "a new definition"
	tools[120].Fingerprint = "changed"
	sh = check("one definition", sh, 1+4+1)
	// Nothing changed: the same scan.
	if _, next := HazardsReusing(tools, sh); next.scan != sh.scan {
		t.Error("an unchanged toolset was scanned again")
	}
	// A tool renamed: the name index changes, every text is read.
	tools[10].Ref.Tool = "renamed_tool"
	sh = check("a rename", sh, 200)
	// A tool blocked: likewise.
	tools[11].Class.Tier = TierBlocked
	check("a tool blocked", sh, 199)
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
