package trust

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTaintsAndEscalatedByTaint(t *testing.T) {
	tests := []struct {
		name      string
		c         Classification
		taints    bool
		escalated bool
	}{
		{name: "closed-world reader", c: Classification{Tier: TierRead}, taints: false, escalated: false},
		{name: "open-world reader taints", c: Classification{Tier: TierRead, Legs: []Leg{LegUntrustedContent}}, taints: true, escalated: false},
		{name: "private data alone", c: Classification{Tier: TierRead, Legs: []Leg{LegPrivateData}}, taints: false, escalated: false},
		{name: "closed-world write", c: Classification{Tier: TierWrite}, taints: false, escalated: false},
		{name: "exfiltration label escalates", c: Classification{Tier: TierRead, Legs: []Leg{LegExfiltration}}, taints: false, escalated: true},
		{name: "destructive tier escalates", c: Classification{Tier: TierDestructive}, taints: false, escalated: true},
		{name: "a write to a persistent store escalates", c: Classification{Tier: TierWrite, Persistent: true}, taints: false, escalated: true},
		{name: "unknown tool of an untrusted server: both", c: Classification{Tier: TierDestructive, Legs: []Leg{LegUntrustedContent, LegExfiltration}}, taints: true, escalated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Taints(tt.c); got != tt.taints {
				t.Errorf("Taints = %v, want %v", got, tt.taints)
			}
			if got := EscalatedByTaint(tt.c); got != tt.escalated {
				t.Errorf("EscalatedByTaint = %v, want %v", got, tt.escalated)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 5, 7, 0, time.UTC)
	tainted := Taint{By: Ref{Server: "web", Tool: "fetch_url"}, CallID: "c-17", At: at}
	const taintReason = "this context is tainted: web__fetch_url returned untrusted content (call c-17) at 09:05:07; exfiltration and destructive tools, and writes to persistent stores, ask whatever policy or grants say"

	sendEmail := Classification{Tier: TierDestructive, Legs: []Leg{LegUntrustedContent, LegExfiltration}, Action: Allow, Reasons: []string{"tier destructive: policy allow"}}
	sendAsk := Classification{Tier: TierDestructive, Legs: []Leg{LegUntrustedContent, LegExfiltration}, Action: Ask, Reasons: []string{"tier destructive: policy ask"}}
	readDocs := Classification{Tier: TierRead, Action: Allow, Reasons: []string{"tier read: policy allow"}}
	createNote := Classification{Tier: TierWrite, Action: Ask, Reasons: []string{"tier write: policy ask"}}
	deleteNote := Classification{Tier: TierDestructive, Action: Allow, Reasons: []string{"tier destructive: policy allow"}}
	blocked := Classification{Tier: TierBlocked, Action: Deny, Reasons: []string{"definition changed since pinned on 2026-03-01; review it before use", "server notes is trusted: its readOnlyHint=true is believed"}}
	policyDeny := Classification{Tier: TierDestructive, Action: Deny, Reasons: []string{"tier destructive: policy deny"}}

	tests := []struct {
		name    string
		c       Classification
		granted bool
		taint   Taint
		want    Verdict
	}{
		{name: "clean, policy allow", c: readDocs, want: Verdict{Action: Allow, By: DecidedByPolicy, Reasons: []string{"tier read: policy allow"}}},
		{name: "clean, policy ask", c: createNote, want: Verdict{Action: Ask, By: DecidedByPolicy, Reasons: []string{"tier write: policy ask"}}},
		{
			name: "clean, granted",
			c:    createNote, granted: true,
			want: Verdict{Action: Allow, By: DecidedByGrant, Reasons: []string{"you allowed this tool for this context", "tier write: policy ask"}},
		},
		{
			name: "blocked: deny with the blocking reason first",
			c:    blocked,
			want: Verdict{Action: Deny, By: DecidedByPolicy, Reasons: []string{"definition changed since pinned on 2026-03-01; review it before use", "server notes is trusted: its readOnlyHint=true is believed"}},
		},
		{name: "blocked beats a grant", c: blocked, granted: true, want: Verdict{Action: Deny, By: DecidedByPolicy, Reasons: blocked.Reasons}},
		{name: "blocked beats taint", c: blocked, taint: tainted, want: Verdict{Action: Deny, By: DecidedByPolicy, Reasons: blocked.Reasons}},
		{name: "policy deny beats a grant", c: policyDeny, granted: true, want: Verdict{Action: Deny, By: DecidedByPolicy, Reasons: []string{"tier destructive: policy deny"}}},
		{
			name: "tainted: exfiltration allowed by policy now asks",
			c:    sendEmail, taint: tainted,
			want: Verdict{Action: Ask, By: DecidedByTaint, Reasons: []string{taintReason, "tier destructive: policy allow"}},
		},
		{
			name: "tainted: a grant does not bypass taint",
			c:    sendAsk, granted: true, taint: tainted,
			want: Verdict{Action: Ask, By: DecidedByTaint, Reasons: []string{taintReason, "tier destructive: policy ask"}},
		},
		{
			name: "tainted: destructive without exfiltration asks",
			c:    deleteNote, taint: tainted,
			want: Verdict{Action: Ask, By: DecidedByTaint, Reasons: []string{taintReason, "tier destructive: policy allow"}},
		},
		{name: "tainted: a closed-world reader still runs", c: readDocs, taint: tainted, want: Verdict{Action: Allow, By: DecidedByPolicy, Reasons: []string{"tier read: policy allow"}}},
		{
			name: "tainted: a grant on a write tool still counts",
			c:    createNote, granted: true, taint: tainted,
			want: Verdict{Action: Allow, By: DecidedByGrant, Reasons: []string{"you allowed this tool for this context", "tier write: policy ask"}},
		},
		{
			name: "tainted: a granted write to a persistent store asks, naming the store",
			c:    Classification{Tier: TierWrite, Action: Ask, Persistent: true, Reasons: []string{"tier write: policy ask"}}, granted: true, taint: tainted,
			want: Verdict{Action: Ask, By: DecidedByTaint, Reasons: []string{taintReason, ReasonPersistentWrite, "tier write: policy ask"}},
		},
		{
			name: "clean: a granted write to a persistent store runs",
			c:    Classification{Tier: TierWrite, Action: Ask, Persistent: true, Reasons: []string{"tier write: policy ask"}}, granted: true,
			want: Verdict{Action: Allow, By: DecidedByGrant, Reasons: []string{"you allowed this tool for this context", "tier write: policy ask"}},
		},
		{
			name: "taint without call id or time",
			c:    sendEmail, taint: Taint{By: Ref{Server: "web", Tool: "fetch_url"}},
			want: Verdict{Action: Ask, By: DecidedByTaint, Reasons: []string{
				"this context is tainted: web__fetch_url returned untrusted content; exfiltration and destructive tools, and writes to persistent stores, ask whatever policy or grants say",
				"tier destructive: policy allow",
			}},
		},
		{name: "unset action asks", c: Classification{Tier: TierWrite}, want: Verdict{Action: Ask, By: DecidedByPolicy}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Decide(tt.c, tt.granted, tt.taint)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideDoesNotAliasReasons(t *testing.T) {
	c := Classification{Tier: TierRead, Action: Allow, Reasons: []string{"tier read: policy allow"}}
	v := Decide(c, false, Taint{})
	v.Reasons[0] = "changed"
	if c.Reasons[0] != "tier read: policy allow" {
		t.Errorf("changing the verdict's reasons changed the classification's: %q", c.Reasons[0])
	}
}

func TestTaintTainted(t *testing.T) {
	if (Taint{}).Tainted() {
		t.Error("zero Taint is tainted, want clean")
	}
	if !(Taint{By: Ref{Server: "web", Tool: "fetch_url"}}).Tainted() {
		t.Error("Taint naming a tool is clean, want tainted")
	}
}

// The taint sentence names the channel and the server.
func TestTaintReasonNamesChannel(t *testing.T) {
	by := Ref{Server: "web", Tool: "fetch_url"}
	for _, tt := range []struct {
		channel, want string
	}{
		{"", "this context is tainted: web__fetch_url returned untrusted content (call c-1)"},
		{ChannelResult, "this context is tainted: web__fetch_url returned untrusted content (call c-1)"},
		{ChannelError, "this context is tainted: server web sent untrusted text by its error message (web__fetch_url) (call c-1)"},
		{ChannelProgress, "this context is tainted: server web sent untrusted text by its progress message (web__fetch_url) (call c-1)"},
		{ChannelListing, "this context is tainted: server web sent untrusted text by its tool listing (web__fetch_url) (call c-1)"},
	} {
		got := Taint{By: by, CallID: "c-1", Channel: tt.channel}.Reason()
		if want := tt.want + "; exfiltration and destructive tools, and writes to persistent stores, ask whatever policy or grants say"; got != want {
			t.Errorf("channel %q: %q, want %q", tt.channel, got, want)
		}
	}
}

// The taint of an unreadable taint store names the file and why, not a server.
func TestTaintReasonUnreadableStore(t *testing.T) {
	got := Taint{By: Ref{Server: "airlock", Tool: "taint.json"}, Channel: ChannelUnreadable, Subject: "unexpected end of JSON input"}.Reason()
	want := "this context is treated as tainted: taint.json cannot be read (unexpected end of JSON input), so airlock cannot tell which contexts are tainted; exfiltration and destructive tools, and writes to persistent stores, ask whatever policy or grants say"
	if got != want {
		t.Errorf("Reason()\n got %s\nwant %s", got, want)
	}
}
