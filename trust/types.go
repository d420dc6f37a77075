// Package trust holds airlock's pure decisions: how a tool's annotations and the
// person's trust list become a risk tier, which policy applies, which legs of the
// "lethal trifecta" a tool fills, which hazards the toolset as a whole carries,
// how taint escalates a call, and how a tool definition is fingerprinted.
//
// It must never do I/O, start goroutines, or import bubbletea, go-sdk transports or
// any other airlock package: every function is values in, values out, so it can be
// table-tested exhaustively and called on every key press.
package trust

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Tier is a tool's risk tier. Tiers are ordered: Read < Write < Destructive < Blocked.
type Tier int

// The tiers, from least to most risky.
const (
	TierRead Tier = iota
	TierWrite
	TierDestructive
	TierBlocked
)

// Tiers lists every tier in order.
var Tiers = [...]Tier{TierRead, TierWrite, TierDestructive, TierBlocked}

// tierWords are the tiers' words, by value.
var tierWords = []string{TierRead: "read", TierWrite: "write", TierDestructive: "destructive", TierBlocked: "blocked"}

// String returns the tier's word: read, write, destructive or blocked.
func (t Tier) String() string { return word(tierWords, t, "tier") }

// word is the word of v in words (indexed by value), or kind(v) for a value
// with none.
func word[T ~int](words []string, v T, kind string) string {
	if v >= 0 && int(v) < len(words) {
		return words[v]
	}
	return fmt.Sprintf("%s(%d)", kind, int(v))
}

// parseWord is the value whose word in words is s; ok is false for a word that
// is not there or empty.
func parseWord[T ~int](words []string, s string) (v T, ok bool) {
	if i := slices.Index(words, s); s != "" && i >= 0 {
		return T(i), true
	}
	return 0, false
}

// MarshalText encodes the tier as its word.
func (t Tier) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// ServerTrust is the person's trust in one server, from the config's trust list.
// The zero value is Untrusted, the default for any server the config does not mark.
type ServerTrust int

// The trust levels.
const (
	Untrusted ServerTrust = iota
	Trusted
	BlockedServer
)

// trustWords are the trust levels' words, by value.
var trustWords = []string{Untrusted: "untrusted", Trusted: "trusted", BlockedServer: "blocked"}

// String returns the trust word used in the config: untrusted, trusted or blocked.
func (s ServerTrust) String() string { return word(trustWords, s, "trust") }

// MarshalText encodes the trust level as its word.
func (s ServerTrust) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ParseServerTrust reads a config trust word.
func ParseServerTrust(s string) (ServerTrust, bool) {
	return parseWord[ServerTrust](trustWords, s) // Untrusted when not a word
}

// Action is what happens to a call: it runs (Allow), waits for a person (Ask), or is
// refused (Deny). The zero value ActionUnset means "no opinion" in a config layer, so
// that a tool's policy can fall back to its tier's.
type Action int

// The actions.
const (
	ActionUnset Action = iota
	Allow
	Ask
	Deny
)

// actionWords are the actions' words, by value; unset has none.
var actionWords = []string{ActionUnset: "", Allow: "allow", Ask: "ask", Deny: "deny"}

// String returns the action word used in the config: allow, ask or deny ("" when unset).
func (a Action) String() string { return word(actionWords, a, "action") }

// MarshalText encodes the action as its word.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// ParseAction reads a config action word (allow, ask, deny).
func ParseAction(s string) (Action, bool) {
	return parseWord[Action](actionWords, s) // ActionUnset when not a word
}

// Policy is the action for each tier unless a tool says otherwise. Blocked is always Deny.
type Policy struct {
	Read        Action
	Write       Action
	Destructive Action
}

// DefaultPolicy is the default policy: reads run, writes and destructive calls ask.
func DefaultPolicy() Policy { return Policy{Read: Allow, Write: Ask, Destructive: Ask} }

// Leg is one leg of the lethal trifecta. Labels in the config use the same words.
type Leg string

// The three legs.
const (
	LegPrivateData      Leg = "private-data"
	LegUntrustedContent Leg = "untrusted-content"
	LegExfiltration     Leg = "exfiltration"
)

// LegPersistent is the label of a persistent store (memory, notes, a knowledge
// base): what its write tools are given outlives the context that wrote it. It is
// no leg of the trifecta; a write to such a store is EscalatedByTaint, and with
// untrusted content it makes the untrusted-persistence hazard (docs/hazards.md).
const LegPersistent Leg = "persistent"

// Legs lists the legs in the order they are shown.
var Legs = [...]Leg{LegUntrustedContent, LegPrivateData, LegExfiltration}

// ParseLeg reads a config label word: a leg, or LegPersistent.
func ParseLeg(s string) (Leg, bool) {
	switch l := Leg(s); l {
	case LegPrivateData, LegUntrustedContent, LegExfiltration, LegPersistent:
		return l, true
	}
	return "", false
}

// Hints is a set of the four MCP tool hints where each may be absent (nil). It is
// used both for what a server declared and for what the person asserted in config.
type Hints struct {
	ReadOnly    *bool `json:"readOnlyHint,omitempty"`
	Destructive *bool `json:"destructiveHint,omitempty"`
	Idempotent  *bool `json:"idempotentHint,omitempty"`
	OpenWorld   *bool `json:"openWorldHint,omitempty"`
}

// Effective is the value of each hint that airlock acts on, after the trust rule.
type Effective struct {
	ReadOnly    bool `json:"read_only"`
	Destructive bool `json:"destructive"`
	Idempotent  bool `json:"idempotent"`
	OpenWorld   bool `json:"open_world"`
}

// Declared is exactly what a server sent as a tool's annotations. Raw keeps the bytes
// (nil when the tool had no annotations) because go-sdk decodes an absent readOnlyHint
// as false; Hints is parsed from Raw, keeping absent (nil) and false apart. A hint whose
// JSON value is not a boolean is treated as absent.
type Declared struct {
	Raw   json.RawMessage
	Hints Hints
	Title string
}

// PinState says how a tool's definition compares with the pinned one.
type PinState int

// The pin states.
const (
	PinNew PinState = iota // first sight: pinned now (trust on first use)
	PinSame
	PinChanged // changed since pinned and not yet reviewed: the tool is blocked
)

// pinWords are the pin states' words, by value.
var pinWords = []string{PinNew: "new", PinSame: "same", PinChanged: "changed"}

// String returns new, same or changed.
func (p PinState) String() string { return word(pinWords, p, "pin") }

// MarshalText encodes the pin state as its word.
func (p PinState) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// Tool is everything the classifier needs to know about one tool: what the server
// sent, what the person configured, and what the session noticed (pins, names).
type Tool struct {
	Server      string
	Name        string
	Description string
	Declared    Declared

	ServerTrust  ServerTrust
	ServerLabels []Leg
	// ToolLabels and Asserted come from [servers.X.tools.Y] in the config.
	ToolLabels []Leg
	Asserted   Hints
	// ToolPolicy overrides the tier's policy when set.
	ToolPolicy Action

	Pin PinState
	// PinnedAt is when the definition that Pin compares against was pinned.
	PinnedAt time.Time
	// InstructionsChanged is true when the server's instructions changed since pinned
	// and the change is not reviewed: every tool of the server is blocked.
	InstructionsChanged bool
	// NameProblem, when not empty, is a sentence saying why the name is rejected
	// (duplicate in the server's list, invalid characters, ...): the tool is blocked.
	NameProblem string
	// Disabled is set when the person turned the tool off for this session.
	Disabled bool
	// Fence is what the server's sandbox enforces. Only an applied fence with no
	// network changes the legs (Fence.NoNetwork; docs/hazards.md).
	Fence Fence
}

// Ref names a tool by server and tool name.
type Ref struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// Qualified returns the gateway name SERVER__TOOL. Server names cannot contain "__",
// so the mapping is injective.
func (r Ref) Qualified() string { return r.Server + "__" + r.Tool }

// Classification is the verdict on one tool: its tier, the effective hints, the legs it
// fills, the policy action that applies before taint and grants, and a reason sentence
// for every step that mattered.
type Classification struct {
	Tier      Tier
	Effective Effective
	// Legs is shared with other classifications filling the same legs: read it,
	// never write into it.
	Legs   []Leg
	Action Action
	// Persistent says the tool writes to a persistent store: its server or the
	// tool is labelled persistent and it is not (effectively) read-only.
	Persistent bool
	Reasons    []string
}

// Has reports whether the classification fills the leg.
func (c Classification) Has(l Leg) bool {
	for _, x := range c.Legs {
		if x == l {
			return true
		}
	}
	return false
}

// Severity ranks hazards.
type Severity string

// The severities.
const (
	SeverityCritical Severity = "critical"
	SeverityHigh     Severity = "high"
	// SeverityMedium is a risk that needs no other server: an untrusted server
	// alone (see HazardUntrustedServer).
	SeverityMedium Severity = "medium"
)

// HazardKind names a hazard.
type HazardKind string

// The hazard kinds.
const (
	HazardLethalTrifecta        HazardKind = "lethal-trifecta"
	HazardOpenWorldExfiltration HazardKind = "open-world-exfiltration"
	HazardUntrustedDestructive  HazardKind = "untrusted-destructive"
	HazardShadowing             HazardKind = "shadowing"
	// HazardUntrustedPersistence is untrusted content and a write to a persistent
	// store: an injected instruction can outlive the context (docs/hazards.md).
	HazardUntrustedPersistence HazardKind = "untrusted-persistence"
	// HazardUntrustedServer is one untrusted server whose own tools fill both
	// sides of open-world-exfiltration and untrusted-destructive: one finding
	// about that server rather than two pair hazards that name it twice.
	HazardUntrustedServer HazardKind = "untrusted-server"
)

// Guarded and Unguarded are the one definition of the words, for every screen,
// report and reason.
const (
	GuardedMeaning   = "guarded: at least one leg asks a person before it runs"
	UnguardedMeaning = "UNGUARDED: every leg has a tool that runs without asking"
)

// Hazard is a risk of the toolset as a whole. Legs maps each leg's name to the
// qualified names of the tools that fill it (for shadowing: "shadowing" -> the tool
// whose description names others, "shadowed" -> the tools it names).
//
// A Hazard's Legs map, its name slices and Rules are READ-ONLY: results of Hazards and
// HazardsReusing (and so session snapshots) share them with each other and between
// calls, which is what keeps a what-if from copying every leg of 10,000 tools. A caller
// that wants to sort, trim, append to or otherwise change one copies it first
// (slices.Clone, maps.Clone); the Hazard value itself (Unguarded, Summary) is a copy.
type Hazard struct {
	Kind      HazardKind          `json:"kind"`
	Severity  Severity            `json:"severity"`
	Unguarded bool                `json:"unguarded"`
	Legs      map[string][]string `json:"legs"`
	Summary   string              `json:"summary"`
	// Rules names the allow rules that make an unguarded hazard unguarded, where a
	// tool's tier would ask ("SERVER__TOOL: rule NAME (SOURCE)").
	Rules []string `json:"rules,omitempty"`
	// Unasked are the qualified names of the legs' members that run without asking
	// (Action Allow, or an allow rule), sorted; the legs list them first. Nil for
	// shadowing hazards, whose legs are the scan's.
	Unasked []string `json:"unasked,omitempty"`
}
