package trust

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// declared parses annotations the way the session hands them over.
func declared(s string) Declared { return ParseDeclared(json.RawMessage(s)) }

func TestClassify(t *testing.T) {
	pinned := time.Date(2026, 3, 14, 22, 30, 0, 0, time.UTC)
	tests := []struct {
		name   string
		tool   Tool
		policy Policy
		want   Classification
	}{
		// Untrusted servers: declarations are never believed.
		{
			name: "untrusted, no annotations: destructive, open world",
			tool: Tool{Server: "mail", Name: "send_email"},
			want: Classification{
				Tier:      TierDestructive,
				Effective: Effective{Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Ask,
				Reasons: []string{
					"server mail declared no annotations: spec defaults apply (destructive, open world)",
					"tier destructive: policy ask",
				},
			},
		},
		{
			name: "untrusted delete_repo claims read-only: stays destructive",
			tool: Tool{Server: "repo", Name: "delete_repo", Declared: declared(`{"readOnlyHint":true}`)},
			want: Classification{
				Tier:      TierDestructive,
				Effective: Effective{Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Ask,
				Reasons: []string{
					"server repo is untrusted: it claims read-only (readOnlyHint=true), which is ignored; spec defaults apply (destructive, open world)",
					"tier destructive: policy ask",
				},
			},
		},
		{
			name: "untrusted claims read-only and closed world: both ignored",
			tool: Tool{Server: "mail", Name: "send_email", Declared: declared(`{"readOnlyHint":true,"openWorldHint":false}`)},
			want: Classification{
				Tier:      TierDestructive,
				Effective: Effective{Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Ask,
				Reasons: []string{
					"server mail is untrusted: it claims read-only (readOnlyHint=true), which is ignored; its openWorldHint=false is ignored; spec defaults apply (destructive, open world)",
					"tier destructive: policy ask",
				},
			},
		},
		{
			name: "untrusted declares every hint benign: all ignored",
			tool: Tool{Server: "x", Name: "t", Declared: declared(`{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`)},
			want: Classification{
				Tier:      TierDestructive,
				Effective: Effective{Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Ask,
				Reasons: []string{
					"server x is untrusted: its readOnlyHint=false, destructiveHint=false, idempotentHint=true, openWorldHint=false are ignored; spec defaults apply (destructive, open world)",
					"tier destructive: policy ask",
				},
			},
		},
		{
			name: "untrusted with a title only: declared no hints",
			tool: Tool{Server: "mail", Name: "send_email", Declared: declared(`{"title":"Send"}`)},
			want: Classification{
				Tier:      TierDestructive,
				Effective: Effective{Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Ask,
				Reasons: []string{
					"server mail declared no hints: spec defaults apply (destructive, open world)",
					"tier destructive: policy ask",
				},
			},
		},
		// Trusted servers: declarations are believed; absent hints default.
		{
			name: "trusted read_text_file: read, closed world, allowed",
			tool: Tool{Server: "fs", Name: "read_text_file", ServerTrust: Trusted, Declared: declared(`{"readOnlyHint":true,"openWorldHint":false}`)},
			want: Classification{
				Tier:      TierRead,
				Effective: Effective{ReadOnly: true, Destructive: true},
				Action:    Allow,
				Reasons: []string{
					"server fs is trusted: its readOnlyHint=true, openWorldHint=false are believed",
					"tier read: policy allow",
				},
			},
		},
		{
			name: "trusted fetch_url: read-only, open world by default: untrusted content only",
			tool: Tool{Server: "web", Name: "fetch_url", ServerTrust: Trusted, Declared: declared(`{"readOnlyHint":true}`)},
			want: Classification{
				Tier:      TierRead,
				Effective: Effective{ReadOnly: true, Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent},
				Action:    Allow,
				Reasons: []string{
					"server web is trusted: its readOnlyHint=true is believed",
					"server web declared no openWorldHint: spec default applies (open world)",
					"tier read: policy allow",
				},
			},
		},
		{
			name: "trusted write: not destructive, closed world",
			tool: Tool{Server: "notes", Name: "create_note", ServerTrust: Trusted, Declared: declared(`{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":false}`)},
			want: Classification{
				Tier:   TierWrite,
				Action: Ask,
				Reasons: []string{
					"server notes is trusted: its readOnlyHint=false, destructiveHint=false, openWorldHint=false are believed",
					"tier write: policy ask",
				},
			},
		},
		{
			name: "trusted destructiveHint false only: write, open world",
			tool: Tool{Server: "notes", Name: "append", ServerTrust: Trusted, Declared: declared(`{"destructiveHint":false}`)},
			want: Classification{
				Tier:      TierWrite,
				Effective: Effective{OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Ask,
				Reasons: []string{
					"server notes is trusted: its destructiveHint=false is believed",
					"server notes declared no readOnlyHint, openWorldHint: spec defaults apply (not read-only, open world)",
					"tier write: policy ask",
				},
			},
		},
		{
			name: "trusted destructive closed world",
			tool: Tool{Server: "notes", Name: "delete_note", ServerTrust: Trusted, Declared: declared(`{"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}`)},
			want: Classification{
				Tier:      TierDestructive,
				Effective: Effective{Destructive: true, Idempotent: true},
				Action:    Ask,
				Reasons: []string{
					"server notes is trusted: its destructiveHint=true, idempotentHint=true, openWorldHint=false are believed",
					"server notes declared no readOnlyHint: spec default applies (not read-only)",
					"tier destructive: policy ask",
				},
			},
		},
		{
			name: "trusted, no annotations: spec defaults",
			tool: Tool{Server: "docs", Name: "x", ServerTrust: Trusted},
			want: Classification{
				Tier:      TierDestructive,
				Effective: Effective{Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Ask,
				Reasons: []string{
					"server docs declared no annotations: spec defaults apply (destructive, open world)",
					"tier destructive: policy ask",
				},
			},
		},
		{
			name: "trusted, non-boolean hint is absent",
			tool: Tool{Server: "docs", Name: "x", ServerTrust: Trusted, Declared: declared(`{"readOnlyHint":"yes"}`)},
			want: Classification{
				Tier:      TierDestructive,
				Effective: Effective{Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Ask,
				Reasons: []string{
					"server docs declared no hints: spec defaults apply (destructive, open world)",
					"tier destructive: policy ask",
				},
			},
		},
		// Assertions beat everything the server says.
		{
			name: "asserted open world beats trusted closed world",
			tool: Tool{
				Server: "docs", Name: "get_doc", ServerTrust: Trusted,
				Declared: declared(`{"readOnlyHint":true,"openWorldHint":false}`),
				Asserted: Hints{OpenWorld: new(true)},
			},
			want: Classification{
				Tier:      TierRead,
				Effective: Effective{ReadOnly: true, Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent},
				Action:    Allow,
				Reasons: []string{
					"you asserted open_world=true for this tool",
					"server docs is trusted: its readOnlyHint=true is believed",
					"tier read: policy allow",
				},
			},
		},
		{
			name: "asserted hints replace an untrusted claim",
			tool: Tool{
				Server: "mail", Name: "send_email",
				Declared: declared(`{"readOnlyHint":true}`),
				Asserted: Hints{ReadOnly: new(false), Destructive: new(false), OpenWorld: new(true)},
			},
			want: Classification{
				Tier:      TierWrite,
				Effective: Effective{OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Ask,
				Reasons: []string{
					"you asserted read_only=false, destructive=false, open_world=true for this tool",
					"tier write: policy ask",
				},
			},
		},
		{
			name: "asserted read-only on an untrusted server: read, still open world",
			tool: Tool{Server: "mail", Name: "list_inbox", Asserted: Hints{ReadOnly: new(true)}},
			want: Classification{
				Tier:      TierRead,
				Effective: Effective{ReadOnly: true, Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent},
				Action:    Allow,
				Reasons: []string{
					"you asserted read_only=true for this tool",
					"server mail declared no annotations: spec default applies (open world)",
					"tier read: policy allow",
				},
			},
		},
		{
			name: "asserted destructive beats trusted read-only",
			tool: Tool{
				Server: "docs", Name: "get_doc", ServerTrust: Trusted,
				Declared: declared(`{"readOnlyHint":true,"destructiveHint":false,"openWorldHint":false}`),
				Asserted: Hints{ReadOnly: new(false), Destructive: new(true), Idempotent: new(false)},
			},
			want: Classification{
				Tier:      TierDestructive,
				Effective: Effective{Destructive: true},
				Action:    Ask,
				Reasons: []string{
					"you asserted read_only=false, destructive=true, idempotent=false for this tool",
					"server docs is trusted: its openWorldHint=false is believed",
					"tier destructive: policy ask",
				},
			},
		},
		// Labels add legs; annotations cannot say private-data.
		{
			name: "server label private-data on a closed-world reader",
			tool: Tool{
				Server: "notes", Name: "list_notes", ServerTrust: Trusted, ServerLabels: []Leg{LegPrivateData},
				Declared: declared(`{"readOnlyHint":true,"openWorldHint":false}`),
			},
			want: Classification{
				Tier:      TierRead,
				Effective: Effective{ReadOnly: true, Destructive: true},
				Legs:      []Leg{LegPrivateData},
				Action:    Allow,
				Reasons: []string{
					"server notes is trusted: its readOnlyHint=true, openWorldHint=false are believed",
					"server notes is labelled private-data",
					"tier read: policy allow",
				},
			},
		},
		{
			name: "tool label exfiltration on a closed-world reader",
			tool: Tool{
				Server: "docs", Name: "share_doc", ServerTrust: Trusted, ToolLabels: []Leg{LegExfiltration},
				Declared: declared(`{"readOnlyHint":true,"openWorldHint":false}`),
			},
			want: Classification{
				Tier:      TierRead,
				Effective: Effective{ReadOnly: true, Destructive: true},
				Legs:      []Leg{LegExfiltration},
				Action:    Allow,
				Reasons: []string{
					"server docs is trusted: its readOnlyHint=true, openWorldHint=false are believed",
					"you labelled this tool exfiltration",
					"tier read: policy allow",
				},
			},
		},
		{
			name: "labels merge with derived legs, repeat and unknown labels ignored",
			tool: Tool{
				Server: "notes", Name: "sync", ServerTrust: Trusted,
				ServerLabels: []Leg{LegPrivateData, "bogus"},
				ToolLabels:   []Leg{LegExfiltration, LegPrivateData, LegUntrustedContent},
				Declared:     declared(`{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":true}`),
			},
			want: Classification{
				Tier:      TierWrite,
				Effective: Effective{OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegPrivateData, LegExfiltration},
				Action:    Ask,
				Reasons: []string{
					"server notes is trusted: its readOnlyHint=false, destructiveHint=false, openWorldHint=true are believed",
					"server notes is labelled private-data",
					"you labelled this tool untrusted-content, private-data, exfiltration",
					"tier write: policy ask",
				},
			},
		},
		// Blocked: every cause, still with effective hints and legs.
		{
			name: "blocked server: deny, hints still explained",
			tool: Tool{Server: "evil", Name: "grab", ServerTrust: BlockedServer, Declared: declared(`{"readOnlyHint":true}`)},
			want: Classification{
				Tier:      TierBlocked,
				Effective: Effective{Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Deny,
				Reasons: []string{
					"server evil is blocked in the trust list",
					"server evil is blocked: it claims read-only (readOnlyHint=true), which is ignored; spec defaults apply (destructive, open world)",
				},
			},
		},
		{
			name: "tool policy deny blocks",
			tool: Tool{
				Server: "notes", Name: "create_note", ServerTrust: Trusted, ToolPolicy: Deny,
				Declared: declared(`{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":false}`),
			},
			want: Classification{
				Tier:   TierBlocked,
				Action: Deny,
				Reasons: []string{
					"tool policy deny overrides the tier's ask",
					"server notes is trusted: its readOnlyHint=false, destructiveHint=false, openWorldHint=false are believed",
				},
			},
		},
		{
			name: "tool policy deny when the tier's policy is deny too",
			tool: Tool{
				Server: "fs", Name: "read", ServerTrust: Trusted, ToolPolicy: Deny,
				Declared: declared(`{"readOnlyHint":true,"openWorldHint":false}`),
			},
			policy: Policy{Read: Deny},
			want: Classification{
				Tier:      TierBlocked,
				Effective: Effective{ReadOnly: true, Destructive: true},
				Action:    Deny,
				Reasons: []string{
					"tool policy deny is the same as the tier's",
					"server fs is trusted: its readOnlyHint=true, openWorldHint=false are believed",
				},
			},
		},
		{
			name: "definition changed since pinned: date named",
			tool: Tool{
				Server: "notes", Name: "list_notes", ServerTrust: Trusted, Pin: PinChanged, PinnedAt: pinned,
				Declared: declared(`{"readOnlyHint":true,"openWorldHint":false}`),
			},
			want: Classification{
				Tier:      TierBlocked,
				Effective: Effective{ReadOnly: true, Destructive: true},
				Action:    Deny,
				Reasons: []string{
					"definition changed since pinned on 2026-03-14; review it before use",
					"server notes is trusted: its readOnlyHint=true, openWorldHint=false are believed",
				},
			},
		},
		{
			name: "definition changed, pin time unknown: no date",
			tool: Tool{
				Server: "notes", Name: "list_notes", ServerTrust: Trusted, Pin: PinChanged,
				Declared: declared(`{"readOnlyHint":true,"openWorldHint":false}`),
			},
			want: Classification{
				Tier:      TierBlocked,
				Effective: Effective{ReadOnly: true, Destructive: true},
				Action:    Deny,
				Reasons: []string{
					"definition changed since pinned; review it before use",
					"server notes is trusted: its readOnlyHint=true, openWorldHint=false are believed",
				},
			},
		},
		{
			name: "instructions changed",
			tool: Tool{
				Server: "notes", Name: "list_notes", ServerTrust: Trusted, InstructionsChanged: true, Pin: PinSame,
				Declared: declared(`{"readOnlyHint":true,"openWorldHint":false}`),
			},
			want: Classification{
				Tier:      TierBlocked,
				Effective: Effective{ReadOnly: true, Destructive: true},
				Action:    Deny,
				Reasons: []string{
					"server notes's instructions changed since pinned; review before use",
					"server notes is trusted: its readOnlyHint=true, openWorldHint=false are believed",
				},
			},
		},
		{
			name: "name problem",
			tool: Tool{Server: "a", Name: "search", NameProblem: "duplicate tool name: the server lists it 2 times", Asserted: Hints{ReadOnly: new(true), OpenWorld: new(false)}},
			want: Classification{
				Tier:      TierBlocked,
				Effective: Effective{ReadOnly: true, Destructive: true},
				Action:    Deny,
				Reasons: []string{
					"duplicate tool name: the server lists it 2 times",
					"you asserted read_only=true, open_world=false for this tool",
				},
			},
		},
		{
			name: "disabled for this session",
			tool: Tool{Server: "a", Name: "t", Disabled: true, Asserted: Hints{ReadOnly: new(true), OpenWorld: new(false)}},
			want: Classification{
				Tier:      TierBlocked,
				Effective: Effective{ReadOnly: true, Destructive: true},
				Action:    Deny,
				Reasons:   []string{"disabled for this session", "you asserted read_only=true, open_world=false for this tool"},
			},
		},
		{
			name: "every blocking cause, in a fixed order",
			tool: Tool{
				Server: "evil", Name: "t t", ServerTrust: BlockedServer, ToolPolicy: Deny,
				Pin: PinChanged, PinnedAt: pinned, InstructionsChanged: true,
				NameProblem: "name is not a valid MCP tool name (allowed: A-Z a-z 0-9 _ . -, 1-128 chars)",
				Disabled:    true, ServerLabels: []Leg{LegPrivateData},
			},
			want: Classification{
				Tier:      TierBlocked,
				Effective: Effective{Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegPrivateData, LegExfiltration},
				Action:    Deny,
				Reasons: []string{
					"server evil is blocked in the trust list",
					"tool policy deny overrides the tier's ask",
					"definition changed since pinned on 2026-03-14; review it before use",
					"server evil's instructions changed since pinned; review before use",
					"name is not a valid MCP tool name (allowed: A-Z a-z 0-9 _ . -, 1-128 chars)",
					"disabled for this session",
					"server evil declared no annotations: spec defaults apply (destructive, open world)",
					"server evil is labelled private-data",
				},
			},
		},
		// Policy: tool policy, tier policy, fallbacks.
		{
			name: "tool policy allow overrides the tier's ask",
			tool: Tool{Server: "mail", Name: "send_email", ToolPolicy: Allow},
			want: Classification{
				Tier:      TierDestructive,
				Effective: Effective{Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Allow,
				Reasons: []string{
					"server mail declared no annotations: spec defaults apply (destructive, open world)",
					"tier destructive: policy ask",
					"tool policy allow overrides the tier's ask",
				},
			},
		},
		{
			name: "tool policy ask overrides the tier's allow",
			tool: Tool{Server: "fs", Name: "read", ServerTrust: Trusted, ToolPolicy: Ask, Declared: declared(`{"readOnlyHint":true,"openWorldHint":false}`)},
			want: Classification{
				Tier:      TierRead,
				Effective: Effective{ReadOnly: true, Destructive: true},
				Action:    Ask,
				Reasons: []string{
					"server fs is trusted: its readOnlyHint=true, openWorldHint=false are believed",
					"tier read: policy allow",
					"tool policy ask overrides the tier's allow",
				},
			},
		},
		{
			name: "tool policy the same as the tier's",
			tool: Tool{Server: "notes", Name: "delete_note", ToolPolicy: Ask},
			want: Classification{
				Tier:      TierDestructive,
				Effective: Effective{Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Ask,
				Reasons: []string{
					"server notes declared no annotations: spec defaults apply (destructive, open world)",
					"tier destructive: policy ask",
					"tool policy ask is the same as the tier's",
				},
			},
		},
		{
			name: "unknown tool policy value is ignored",
			tool: Tool{Server: "notes", Name: "delete_note", ToolPolicy: Action(9)},
			want: Classification{
				Tier:      TierDestructive,
				Effective: Effective{Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Ask,
				Reasons: []string{
					"server notes declared no annotations: spec defaults apply (destructive, open world)",
					"tier destructive: policy ask",
				},
			},
		},
		{
			name:   "policy allows destructive",
			tool:   Tool{Server: "mail", Name: "send_email"},
			policy: Policy{Read: Allow, Write: Allow, Destructive: Allow},
			want: Classification{
				Tier:      TierDestructive,
				Effective: Effective{Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Allow,
				Reasons: []string{
					"server mail declared no annotations: spec defaults apply (destructive, open world)",
					"tier destructive: policy allow",
				},
			},
		},
		{
			name:   "policy denies destructive: deny, not blocked",
			tool:   Tool{Server: "mail", Name: "send_email"},
			policy: Policy{Destructive: Deny},
			want: Classification{
				Tier:      TierDestructive,
				Effective: Effective{Destructive: true, OpenWorld: true},
				Legs:      []Leg{LegUntrustedContent, LegExfiltration},
				Action:    Deny,
				Reasons: []string{
					"server mail declared no annotations: spec defaults apply (destructive, open world)",
					"tier destructive: policy deny",
				},
			},
		},
		{
			name:   "unset read policy falls back to the default allow",
			tool:   Tool{Server: "fs", Name: "read", ServerTrust: Trusted, Declared: declared(`{"readOnlyHint":true,"openWorldHint":false}`)},
			policy: Policy{Write: Allow},
			want: Classification{
				Tier:      TierRead,
				Effective: Effective{ReadOnly: true, Destructive: true},
				Action:    Allow,
				Reasons: []string{
					"server fs is trusted: its readOnlyHint=true, openWorldHint=false are believed",
					"tier read: policy allow",
				},
			},
		},
		{
			name:   "read policy ask",
			tool:   Tool{Server: "fs", Name: "read", ServerTrust: Trusted, Declared: declared(`{"readOnlyHint":true,"openWorldHint":false}`)},
			policy: Policy{Read: Ask},
			want: Classification{
				Tier:      TierRead,
				Effective: Effective{ReadOnly: true, Destructive: true},
				Action:    Ask,
				Reasons: []string{
					"server fs is trusted: its readOnlyHint=true, openWorldHint=false are believed",
					"tier read: policy ask",
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(tt.tool, tt.policy)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Classify mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// The UI and an end-to-end test look for this phrase (hostile case 7).
func TestClassifyUntrustedClaimSaysClaimsReadOnly(t *testing.T) {
	for _, st := range []ServerTrust{Untrusted, BlockedServer} {
		c := Classify(Tool{Server: "repo", Name: "delete_repo", ServerTrust: st, Declared: declared(`{"readOnlyHint":true,"destructiveHint":false}`)}, DefaultPolicy())
		if c.Effective.ReadOnly {
			t.Errorf("%v server: effective read_only = true, want false", st)
		}
		found := false
		for _, r := range c.Reasons {
			found = found || strings.Contains(r, "claims read-only")
		}
		if !found {
			t.Errorf("%v server: no reason says \"claims read-only\": %q", st, c.Reasons)
		}
	}
	c := Classify(Tool{Server: "repo", Name: "list", ServerTrust: Trusted, Declared: declared(`{"readOnlyHint":true}`)}, DefaultPolicy())
	for _, r := range c.Reasons {
		if strings.Contains(r, "claims") || strings.Contains(r, "ignored") {
			t.Errorf("trusted server: reason %q speaks of a claim or of ignoring", r)
		}
	}
}

// A classification must not share its slices with the tool it came from.
func TestClassifyDoesNotAliasLabels(t *testing.T) {
	labels := []Leg{LegPrivateData}
	c := Classify(Tool{Server: "n", Name: "t", ToolLabels: labels, Asserted: Hints{ReadOnly: new(true), OpenWorld: new(false)}}, DefaultPolicy())
	labels[0] = LegExfiltration
	if diff := cmp.Diff([]Leg{LegPrivateData}, c.Legs); diff != "" {
		t.Errorf("Legs changed with the caller's labels (-want +got):\n%s", diff)
	}
}

func TestTierOf(t *testing.T) {
	checkFn(t, "TierOf", TierOf, []fnCase[Effective, Tier]{
		{name: "read-only wins over destructive", in: Effective{ReadOnly: true, Destructive: true}, want: TierRead},
		{name: "read-only", in: Effective{ReadOnly: true}, want: TierRead},
		{name: "additive", in: Effective{OpenWorld: true}, want: TierWrite},
		{name: "destructive", in: Effective{Destructive: true}, want: TierDestructive},
	})
}

func TestPolicyFor(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		tier   Tier
		want   Action
	}{
		{name: "zero policy read falls back to allow", tier: TierRead, want: Allow},
		{name: "zero policy write falls back to ask", tier: TierWrite, want: Ask},
		{name: "zero policy destructive falls back to ask", tier: TierDestructive, want: Ask},
		{name: "blocked is deny whatever the policy", policy: Policy{Read: Allow, Write: Allow, Destructive: Allow}, tier: TierBlocked, want: Deny},
		{name: "set read", policy: Policy{Read: Deny}, tier: TierRead, want: Deny},
		{name: "set write", policy: Policy{Write: Allow}, tier: TierWrite, want: Allow},
		{name: "set destructive", policy: Policy{Destructive: Deny}, tier: TierDestructive, want: Deny},
		{name: "unknown value falls back", policy: Policy{Destructive: Action(42)}, tier: TierDestructive, want: Ask},
		{name: "unknown tier is deny", tier: Tier(9), want: Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.policy.For(tt.tier); got != tt.want {
				t.Errorf("%+v.For(%v) = %v, want %v", tt.policy, tt.tier, got, tt.want)
			}
		})
	}
}

// The legs of a classification are one of eight shared lists, not
// a copy per tool; each is full, so that appending to one copies it and the others
// stay as they were; every mask lists its legs in the order of Legs.
func TestLegs_SharedFullAndInOrder(t *testing.T) {
	for m := range legMask(1 << len(Legs)) {
		got := m.legs()
		if m == 0 {
			if got != nil {
				t.Errorf("no legs: got %v, want nil", got)
			}
			continue
		}
		var want []Leg
		for i, l := range Legs {
			if m&(1<<i) != 0 {
				want = append(want, l)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("mask %03b: legs %v, want %v", m, got, want)
		}
		if cap(got) != len(got) {
			t.Errorf("mask %03b: cap %d > len %d: an append would write into the shared list", m, cap(got), len(got))
		}
	}
	a := Classify(Tool{Server: "s", Name: "fetch", Declared: ParseDeclared(json.RawMessage(`{"openWorldHint":true,"readOnlyHint":true}`))}, DefaultPolicy())
	b := Classify(Tool{Server: "s", Name: "fetch2", Declared: ParseDeclared(json.RawMessage(`{"openWorldHint":true,"readOnlyHint":true}`))}, DefaultPolicy())
	if len(a.Legs) == 0 || &a.Legs[0] != &b.Legs[0] {
		t.Fatalf("two tools with the same legs hold two lists: %v %v", a.Legs, b.Legs)
	}
	grown := append(a.Legs, LegExfiltration)
	if &grown[0] == &a.Legs[0] || !slices.Equal(b.Legs, a.Legs) || len(b.Legs) != len(grown)-1 {
		t.Errorf("an append wrote into the shared list: %v, %v", grown, b.Legs)
	}
}
