package trust

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestClassifyChannel(t *testing.T) {
	tests := []struct {
		name    string
		in      ChannelInput
		policy  Policy
		tier    Tier
		action  Action
		legs    []Leg
		reasons []string // each must appear among the reasons
	}{
		{name: "trusted resources: read tier, read policy, no legs", in: ChannelInput{Server: "docs", Kind: KindResources, ServerTrust: Trusted},
			tier: TierRead, action: Allow, reasons: []string{"reading resources is read tier: allow by the read tier's policy"}},
		{name: "untrusted resources: untrusted content and exfiltration", in: ChannelInput{Server: "web", Kind: KindResources},
			tier: TierRead, action: Allow, legs: []Leg{LegUntrustedContent, LegExfiltration},
			reasons: []string{"server web is not trusted: what its resources hold is untrusted content, and the URI you read goes to it"}},
		{name: "untrusted prompts are untrusted content", in: ChannelInput{Server: "web", Kind: KindPrompts},
			tier: TierRead, action: Allow, legs: []Leg{LegUntrustedContent, LegExfiltration},
			reasons: []string{"server web is not trusted: its prompts are untrusted content, and their arguments go to it"}},
		{name: "trusted, labelled private-data: the private-data leg", in: ChannelInput{Server: "notes", Kind: KindResources, ServerTrust: Trusted, ServerLabels: []Leg{LegPrivateData}},
			tier: TierRead, action: Allow, legs: []Leg{LegPrivateData}, reasons: []string{"server notes is labelled private-data"}},
		{name: "trusted, labelled untrusted-content: taints", in: ChannelInput{Server: "feed", Kind: KindResources, ServerTrust: Trusted, ServerLabels: []Leg{LegUntrustedContent}},
			tier: TierRead, action: Allow, legs: []Leg{LegUntrustedContent}},
		{name: "policy ask", in: ChannelInput{Server: "docs", Kind: KindResources, ServerTrust: Trusted, Policy: Ask},
			tier: TierRead, action: Ask, reasons: []string{`the config says resources = "ask" for server docs`}},
		{name: "policy allow over a read tier that asks", in: ChannelInput{Server: "docs", Kind: KindPrompts, ServerTrust: Trusted, Policy: Allow}, policy: Policy{Read: Ask},
			tier: TierRead, action: Allow},
		{name: "unset policy follows the read tier", in: ChannelInput{Server: "docs", Kind: KindPrompts, ServerTrust: Trusted}, policy: Policy{Read: Deny},
			tier: TierRead, action: Deny},
		{name: "policy deny blocks", in: ChannelInput{Server: "docs", Kind: KindPrompts, ServerTrust: Trusted, Policy: Deny},
			tier: TierBlocked, action: Deny, reasons: []string{`the config denies the prompts of server docs (prompts = "deny")`}},
		{name: "blocked server blocks", in: ChannelInput{Server: "bad", Kind: KindResources, ServerTrust: BlockedServer, Policy: Allow},
			tier: TierBlocked, action: Deny, legs: []Leg{LegUntrustedContent, LegExfiltration}, reasons: []string{"server bad is blocked in the trust list"}},
		{name: "unknown policy value is no opinion", in: ChannelInput{Server: "docs", Kind: KindResources, ServerTrust: Trusted, Policy: Action(42)},
			tier: TierRead, action: Allow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.policy
			if p == (Policy{}) {
				p = DefaultPolicy()
			}
			c := ClassifyChannel(tc.in, p)
			if c.Tier != tc.tier || c.Action != tc.action || !slices.Equal(c.Legs, tc.legs) {
				t.Errorf("got tier %v action %v legs %v, want %v %v %v (reasons %q)", c.Tier, c.Action, c.Legs, tc.tier, tc.action, tc.legs, c.Reasons)
			}
			for _, r := range tc.reasons {
				if !slices.Contains(c.Reasons, r) {
					t.Errorf("reasons %q lack %q", c.Reasons, r)
				}
			}
			if Taints(c) != c.Has(LegUntrustedContent) {
				t.Error("Taints disagrees with the untrusted-content leg")
			}
		})
	}
}

func TestChannelTaintReason(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	long := strings.Repeat("a", 300)
	tests := []struct {
		name  string
		taint Taint
		want  string
	}{
		{name: "resource", taint: Taint{By: Ref{Server: "web", Tool: ResourceReadTool}, CallID: "c1", At: at, Channel: ChannelResource, Subject: "https://x/y"},
			want: `this context is tainted: resource "https://x/y" of server web returned untrusted content (call c1) at 03:04:05; exfiltration and destructive tools, and writes to persistent stores, ask whatever policy or grants say`},
		{name: "prompt", taint: Taint{By: Ref{Server: "web", Tool: PromptGetTool}, Channel: ChannelPrompt, Subject: "greet"},
			want: `this context is tainted: prompt "greet" of server web is untrusted content; exfiltration and destructive tools, and writes to persistent stores, ask whatever policy or grants say`},
		{name: "hostile subject is quoted", taint: Taint{By: Ref{Server: "web", Tool: ResourceReadTool}, Channel: ChannelResource, Subject: "x\x1b[2J\n"},
			want: `this context is tainted: resource "x\x1b[2J\n" of server web returned untrusted content; exfiltration and destructive tools, and writes to persistent stores, ask whatever policy or grants say`},
		{name: "long subject is cut", taint: Taint{By: Ref{Server: "web", Tool: ResourceReadTool}, Channel: ChannelResource, Subject: long},
			want: `this context is tainted: resource "` + long[:200] + `"… of server web returned untrusted content; exfiltration and destructive tools, and writes to persistent stores, ask whatever policy or grants say`},
		{name: "completion", taint: Taint{By: Ref{Server: "web", Tool: PromptGetTool}, Channel: ChannelCompletion, Subject: "greet"},
			want: `this context is tainted: completion values for "greet" of server web are untrusted content; exfiltration and destructive tools, and writes to persistent stores, ask whatever policy or grants say`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.taint.Reason(); got != tc.want {
				t.Errorf("Reason()\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// Channels count in the hazards like tools: a private-data server's resources, an
// untrusted server's resources and an exfiltration tool make the trifecta.
func TestHazards_ChannelLegs(t *testing.T) {
	notes := ClassifyChannel(ChannelInput{Server: "notes", Kind: KindResources, ServerTrust: Trusted, ServerLabels: []Leg{LegPrivateData}}, DefaultPolicy())
	web := ClassifyChannel(ChannelInput{Server: "web", Kind: KindResources, ServerTrust: Trusted, ServerLabels: []Leg{LegUntrustedContent}}, DefaultPolicy())
	send := Classification{Tier: TierWrite, Legs: []Leg{LegExfiltration}, Action: Allow}
	hs := Hazards([]Assessed{
		{Ref: Ref{Server: "notes", Tool: ResourceReadTool}, Class: notes},
		{Ref: Ref{Server: "web", Tool: ResourceReadTool}, Class: web},
		{Ref: Ref{Server: "mail", Tool: "send"}, Class: send},
	})
	if len(hs) == 0 || hs[0].Kind != HazardLethalTrifecta || !hs[0].Unguarded {
		t.Fatalf("hazards = %+v, want an unguarded lethal trifecta first", hs)
	}
	if got := hs[0].Legs[string(LegPrivateData)]; !slices.Equal(got, []string{"notes__resources/read"}) {
		t.Errorf("private-data leg = %v", got)
	}
}

func TestFixes_Channels(t *testing.T) {
	notesRes := Subject{Tool: Tool{Server: "notes", Name: ResourceReadTool, ServerTrust: Trusted, ServerLabels: []Leg{LegPrivateData}}, Channel: KindResources}
	notesTool := Subject{Tool: Tool{Server: "notes", Name: "read_note", ServerTrust: Trusted, ServerLabels: []Leg{LegPrivateData},
		Declared: Declared{Hints: Hints{ReadOnly: bptr(true), OpenWorld: bptr(false)}}}}
	webRes := Subject{Tool: Tool{Server: "web", Name: ResourceReadTool}, Channel: KindResources}
	mail := Subject{Tool: Tool{Server: "mail", Name: "send", ServerTrust: Trusted, ToolLabels: []Leg{LegExfiltration},
		Declared: Declared{Hints: Hints{ReadOnly: bptr(false), Destructive: bptr(false), OpenWorld: bptr(false)}}}}
	tests := []struct {
		name     string
		subjects []Subject
		want     []string // kind:server:tool of the single-change fixes, in order
	}{
		// web's resources fill untrusted-content and exfiltration (web is not
		// trusted): denying mail's send leaves the exfiltration leg filled, and
		// denying notes' tool leaves notes' resources in the private-data leg.
		{name: "private-data only through a channel", subjects: []Subject{notesRes, webRes, mail},
			want: []string{"deny-channel:web:resources/read", "deny-channel:notes:resources/read", "drop-server-label:notes:", "block-server:notes:", "block-server:web:"}},
		{name: "a tool and a channel in one leg: denying the tool breaks nothing", subjects: []Subject{notesRes, notesTool, webRes, mail},
			want: []string{"deny-channel:web:resources/read", "drop-server-label:notes:", "block-server:notes:", "block-server:web:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tools := make([]Tool, len(tc.subjects))
			for i, s := range tc.subjects {
				tools[i] = s.Tool
			}
			var tri *Hazard
			for _, h := range evaluate(tools, tc.subjects, DefaultPolicy()) {
				if h.Kind == HazardLethalTrifecta {
					tri = &h
				}
			}
			if tri == nil {
				t.Fatal("no trifecta")
			}
			var got []string
			for _, f := range Fixes(tc.subjects, DefaultPolicy(), *tri) {
				if len(f.Changes) == 1 && f.Effect == FixBreaks {
					c := f.Changes[0]
					got = append(got, string(c.Kind)+":"+c.Server+":"+c.Tool)
				}
				for _, c := range f.Changes {
					if c.Tool == ResourceReadTool && c.Kind != ChangeDenyChannel && c.Kind != ChangeAskChannel {
						t.Errorf("a fix changes a channel as a tool: %+v", f)
					}
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("fixes\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestCountMembers(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"a__x"}, "1 tool"},
		{[]string{"a__x", "a__y"}, "2 tools"},
		{[]string{"a__" + ResourceReadTool}, "1 channel"},
		{[]string{"a__" + PromptGetTool, "a__" + ResourceReadTool, "a__x"}, "1 tool and 2 channels"},
	} {
		if got := CountMembers(c.in); got != c.want {
			t.Errorf("CountMembers(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLegName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"notes__" + ResourceReadTool, "notes resources"},
		{"notes__" + PromptGetTool, "notes prompts"},
		{"notes__read_note", "notes__read_note"},
		{"notes__resources", "notes__resources"},
		{ResourceReadTool, ResourceReadTool},
	} {
		if got := LegName(c.in); got != c.want {
			t.Errorf("LegName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// An untrusted server whose tools all ask and whose resources and prompts run by the
// read tier's allow (server-everything, untrusted): the hazard is unguarded through
// the channels, which its leg names first and its summary names; the fixes ask on
// the channels before blocking the server.
func TestHazards_UnguardedThroughChannels(t *testing.T) {
	var subjects []Subject
	for _, n := range []string{"echo", "get-env", "get-sum"} {
		subjects = append(subjects, Subject{Tool: Tool{Server: "everything", Name: n}})
	}
	subjects = append(subjects,
		Subject{Tool: Tool{Server: "everything", Name: ResourceReadTool}, Channel: KindResources},
		Subject{Tool: Tool{Server: "everything", Name: PromptGetTool}, Channel: KindPrompts})
	tools := make([]Tool, len(subjects))
	for i, s := range subjects {
		tools[i] = s.Tool
	}
	hs := evaluate(tools, subjects, DefaultPolicy())
	if len(hs) != 1 || hs[0].Kind != HazardUntrustedServer || !hs[0].Unguarded {
		t.Fatalf("hazards = %+v, want one unguarded untrusted-server", hs)
	}
	h := hs[0]
	want := []string{"everything__prompts/get", "everything__resources/read", "everything__echo", "everything__get-env", "everything__get-sum"}
	if got := h.Legs[string(LegUntrustedContent)]; !slices.Equal(got, want) {
		t.Errorf("leg\n got %q\nwant %q (what runs unasked first)", got, want)
	}
	if !strings.HasSuffix(h.Summary, "; everything prompts (+1) run without asking") {
		t.Errorf("summary %q does not name what runs unasked", h.Summary)
	}
	var got []string
	for _, f := range Fixes(subjects, DefaultPolicy(), h) {
		var cs []string
		for _, c := range f.Changes {
			cs = append(cs, string(c.Kind)+":"+c.Tool)
		}
		got = append(got, f.Effect+" "+strings.Join(cs, "+"))
	}
	wantFixes := []string{"guards ask-channel:prompts/get+ask-channel:resources/read", "breaks block-server:"}
	if !slices.Equal(got, wantFixes) {
		t.Errorf("fixes\n got %q\nwant %q", got, wantFixes)
	}
}
