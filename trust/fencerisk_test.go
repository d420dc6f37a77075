package trust

import (
	"slices"
	"strings"
	"testing"
)

// noNet is a fence the launcher applied with network = "none".
var noNet = Fence{Requested: true, Applied: true, Network: "none", Read: []string{"~/project"}, Write: []string{"~/project/out"}, Detail: "Landlock ABI 7, network namespace"}

// notApplied is the same fence asked for with required = false, not applied.
var notApplied = Fence{Requested: true, Network: "none", Read: []string{"~/project"}, Detail: "Landlock is not available on this kernel"}

func TestClassify_Fence(t *testing.T) {
	closedWriter := declared(`{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":true}`)
	tests := []struct {
		name      string
		tool      Tool
		legs      []Leg
		reason    string // must be among the reasons ("" none)
		notReason string // must not be a prefix of any reason
	}{
		{name: "untrusted, no fence: both network legs",
			tool: Tool{Server: "fs", Name: "write"}, legs: []Leg{LegUntrustedContent, LegExfiltration}, notReason: "fenced"},
		{name: "untrusted, fenced with no network: no exfiltration, still untrusted content",
			tool: Tool{Server: "fs", Name: "write", Fence: noNet}, legs: []Leg{LegUntrustedContent},
			reason: "fenced with no network: it cannot send data out or fetch from the web; what an untrusted server returns, files it reads included, is still untrusted content"},
		{name: "untrusted, fence asked for and not applied: nothing removed",
			tool: Tool{Server: "fs", Name: "write", Fence: notApplied}, legs: []Leg{LegUntrustedContent, LegExfiltration},
			reason: "unfenced: a sandbox was asked for but not applied (Landlock is not available on this kernel); its legs count as without one"},
		{name: "untrusted, fence applied with network all: nothing removed",
			tool: Tool{Server: "fs", Name: "write", Fence: Fence{Requested: true, Applied: true, Network: "all"}}, legs: []Leg{LegUntrustedContent, LegExfiltration}, notReason: "fenced with no network"},
		{name: "trusted open-world writer, fenced: no network legs at all",
			tool: Tool{Server: "web", Name: "post", ServerTrust: Trusted, Declared: closedWriter, Fence: noNet}, legs: nil,
			reason: "fenced with no network: it cannot send data out or fetch from the web; files it reads may still be untrusted content (label the server untrusted-content if they can be)"},
		{name: "trusted open-world writer, not fenced",
			tool: Tool{Server: "web", Name: "post", ServerTrust: Trusted, Declared: closedWriter}, legs: []Leg{LegUntrustedContent, LegExfiltration}},
		{name: "labels stay under a fence",
			tool: Tool{Server: "mail", Name: "send", ServerLabels: []Leg{LegExfiltration, LegPrivateData}, Fence: noNet}, legs: []Leg{LegUntrustedContent, LegPrivateData, LegExfiltration}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Classify(tc.tool, DefaultPolicy())
			if !slices.Equal(c.Legs, tc.legs) {
				t.Errorf("legs %v, want %v (reasons %q)", c.Legs, tc.legs, c.Reasons)
			}
			if tc.reason != "" && !slices.Contains(c.Reasons, tc.reason) {
				t.Errorf("reasons %q lack %q", c.Reasons, tc.reason)
			}
			for _, r := range c.Reasons {
				if tc.notReason != "" && strings.HasPrefix(r, tc.notReason) {
					t.Errorf("reason %q should not be there", r)
				}
			}
			// ExplainLeg agrees with Classify on every leg.
			for _, l := range Legs {
				_, ok := ExplainLeg(tc.tool, l)
				if ok != c.Has(l) {
					t.Errorf("ExplainLeg(%s) = %v, Classify has it: %v", l, ok, c.Has(l))
				}
			}
			// An untrusted server's results still taint, fenced or not.
			if tc.tool.ServerTrust != Trusted && !Taints(c) {
				t.Error("a fenced untrusted server's result no longer taints")
			}
		})
	}
}

// fencedTrifecta is a trifecta whose only exfiltration leg is an untrusted
// filesystem server's network: web reads the web (read-only), notes holds private
// data, fs is untrusted (so assumed open world and able to send).
func fencedTrifecta(fs Fence) []Tool {
	return []Tool{
		{Server: "fs", Name: "write_file", Fence: fs},
		{Server: "notes", Name: "list_notes", ServerTrust: Trusted, ServerLabels: []Leg{LegPrivateData}, Declared: declared(`{"readOnlyHint":true,"openWorldHint":false}`)},
		{Server: "web", Name: "fetch_url", ServerTrust: Trusted, Declared: declared(`{"readOnlyHint":true,"openWorldHint":true}`)},
	}
}

func kinds(hs []Hazard) []HazardKind {
	var out []HazardKind
	for _, h := range hs {
		out = append(out, h.Kind)
	}
	return out
}

func TestHazards_NoNetworkFenceBreaksTrifecta(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fence Fence
		want  []HazardKind
	}{
		{"no fence", Fence{}, []HazardKind{HazardLethalTrifecta, HazardOpenWorldExfiltration, HazardUntrustedDestructive}},
		{"fence not applied", notApplied, []HazardKind{HazardLethalTrifecta, HazardOpenWorldExfiltration, HazardUntrustedDestructive}},
		// fs still reads untrusted content (files written by others) and can
		// delete inside its write folder: untrusted-destructive stays.
		{"fence applied, no network", noNet, []HazardKind{HazardUntrustedDestructive}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := kinds(evaluate(fencedTrifecta(tc.fence), nil, DefaultPolicy()))
			if !slices.Equal(got, tc.want) {
				t.Errorf("hazards %v, want %v", got, tc.want)
			}
		})
	}
}

func TestClassifyChannel_Fence(t *testing.T) {
	in := ChannelInput{Server: "fs", Kind: KindResources, Fence: noNet}
	c := ClassifyChannel(in, DefaultPolicy())
	if !slices.Equal(c.Legs, []Leg{LegUntrustedContent}) {
		t.Errorf("fenced untrusted resources: legs %v, want untrusted-content only", c.Legs)
	}
	if !slices.Contains(c.Reasons, "server fs is not trusted: what its resources hold is untrusted content; it is fenced with no network, so the URI you read goes no further") {
		t.Errorf("reasons %q", c.Reasons)
	}
	in.Fence = notApplied
	if c := ClassifyChannel(in, DefaultPolicy()); !slices.Equal(c.Legs, []Leg{LegUntrustedContent, LegExfiltration}) {
		t.Errorf("fence not applied: legs %v, want both", c.Legs)
	}
}

func TestFixes_ProposeANoNetworkFence(t *testing.T) {
	fenceable := func(tools []Tool) []Subject {
		subs := subjects(tools)
		subs[0].Fenceable = true // fs is a stdio server
		return subs
	}
	tools := fencedTrifecta(Fence{})
	h := hazardOf(t, tools, HazardLethalTrifecta)
	got := fixStrings(Fixes(fenceable(tools), DefaultPolicy(), h))
	if !slices.Contains(got, "breaks: fence-server fs") {
		t.Errorf("fixes %q lack the fence of fs", got)
	}
	for _, f := range Fixes(fenceable(tools), DefaultPolicy(), h) {
		if f.Changes[0].Kind == ChangeFenceServer && f.Changes[0].Server != "fs" {
			t.Errorf("fence proposed for %s, which is no stdio server", f.Changes[0].Server)
		}
	}
	// Not for a server that cannot be fenced (no stdio, or Windows).
	if got := fixStrings(Fixes(subjects(tools), DefaultPolicy(), h)); slices.Contains(got, "breaks: fence-server fs") {
		t.Errorf("fence proposed for a server that cannot be fenced: %q", got)
	}
	// Not where the fence was asked for and could not be applied: asking again
	// changes nothing on this machine.
	tools = fencedTrifecta(notApplied)
	h = hazardOf(t, tools, HazardLethalTrifecta)
	if got := fixStrings(Fixes(fenceable(tools), DefaultPolicy(), h)); slices.Contains(got, "breaks: fence-server fs") {
		t.Errorf("fence proposed where it was not applied: %q", got)
	}
	// A fence with network = "all" can be tightened.
	tools = fencedTrifecta(Fence{Requested: true, Applied: true, Network: "all"})
	h = hazardOf(t, tools, HazardLethalTrifecta)
	if got := fixStrings(Fixes(fenceable(tools), DefaultPolicy(), h)); !slices.Contains(got, "breaks: fence-server fs") {
		t.Errorf("fixes %q lack tightening fs's fence", got)
	}
}
