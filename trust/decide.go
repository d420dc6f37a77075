package trust

import (
	"slices"
	"time"
)

// Taints reports whether a returned call to a tool with this classification taints
// its context: the tool fills the untrusted-content leg, so what it returned may carry
// instructions written by someone else.
func Taints(c Classification) bool { return c.Has(LegUntrustedContent) }

// EscalatedByTaint reports whether a tainted context makes a call to this tool ask a
// person whatever policy or grants say: the tool can carry data out (exfiltration leg),
// its tier is destructive, or it writes to a persistent store (c.Persistent), where
// an instruction planted by untrusted content would outlive the context and reach
// later ones.
func EscalatedByTaint(c Classification) bool {
	return c.Has(LegExfiltration) || c.Tier == TierDestructive || c.Persistent
}

// ReasonPersistentWrite is the sentence a tainted context's question adds for a write
// to a persistent store.
const ReasonPersistentWrite = "this writes to a persistent store: untrusted content read in this context could persist into later sessions, so it asks whatever policy or grants say"

// DecidedBy says who or what decided a call, as written to the audit log.
type DecidedBy string

// The deciders written to the audit log; each record also carries the reason sentence.
const (
	// DecidedByPolicy: the tier's or the tool's policy allowed or denied without asking,
	// or a limit or a refusal (arguments, bounds, a change while deciding) ended the call.
	DecidedByPolicy DecidedBy = "policy"
	// DecidedByRule is an argument rule, from the config or rules.toml (docs/rules.md).
	DecidedByRule DecidedBy = "rule"
	// DecidedByGrant: the person's standing "allow for this context" allowed it; nobody
	// saw this call.
	DecidedByGrant DecidedBy = "grant"
	// DecidedByPerson: the person answered the question for this call.
	DecidedByPerson DecidedBy = "person"
	// DecidedByTimeout: nobody answered within the approval timeout.
	DecidedByTimeout DecidedBy = "timeout"
	// DecidedByAgentCancelled: the caller withdrew the call while it waited.
	DecidedByAgentCancelled DecidedBy = "agent-cancelled"
	// DecidedByAgentGone: the agent that made the call went away (its connection
	// closed, its session ended, its bridge's stdin closed) before the call was
	// forwarded; nothing of it ran.
	DecidedByAgentGone DecidedBy = "agent-gone"
	// DecidedByPin: the tool's definition changed since pinned (or while deciding).
	DecidedByPin DecidedBy = "pin"
	// DecidedByTaintThenPerson: policy would have allowed, taint made it ask, and the
	// person answered.
	DecidedByTaintThenPerson DecidedBy = "taint-asked-then-person"
	// DecidedByFlag: the call asked and `--yes` on the command line allowed it once;
	// nobody was asked.
	DecidedByFlag DecidedBy = "flag"
	// DecidedByTaintThenFlag: policy would have allowed, taint made it ask, and
	// `--yes` on the command line allowed it once; nobody was asked.
	DecidedByTaintThenFlag DecidedBy = "taint-asked-then-flag"
	// DecidedByDisabled: the person turned the tool off.
	DecidedByDisabled DecidedBy = "disabled"
	// DecidedByUnknownTool: the call named a tool the server does not list.
	DecidedByUnknownTool DecidedBy = "unknown-tool"

	// DecidedByTaint marks a Verdict whose Ask comes from taint (Decide's rule 2); it
	// is never the final decider written to the audit log.
	DecidedByTaint DecidedBy = "taint"
	// DecidedBySecret marks a Verdict whose Ask comes from a secret found in the
	// arguments of a call to a tool that can carry data out (the exfiltration leg):
	// a policy, a rule or a grant would have allowed it. Like DecidedByTaint it is
	// never the final decider written to the audit log: the person's answer is.
	DecidedBySecret DecidedBy = "secret"
	// DecidedByUser is the name DecidedByPerson had before the values were exact;
	// new code says DecidedByPerson (or DecidedByGrant for a standing grant).
	DecidedByUser = DecidedByPerson
)

// Taint records the call that tainted a context. The zero value is a clean context.
// A context's taint never goes back to clean while the context lives; keeping the first
// taint is the caller's job (it names the call that started it).
type Taint struct {
	By     Ref
	CallID string
	At     time.Time
	// Channel is how the untrusted text reached the context (ChannelResult when
	// empty).
	Channel string
	// Subject is what a channel's text came from: the resource URI or the prompt
	// name (ChannelResource, ChannelPrompt); empty for tool calls.
	Subject string `json:",omitempty"`
}

// The channels by which a server's text reaches a context.
const (
	ChannelResult   = "result"
	ChannelError    = "error message"
	ChannelProgress = "progress message"
	ChannelListing  = "tool listing"
	// ChannelUnreadable is no server's text: the taint store cannot be read, so
	// airlock cannot tell which contexts are tainted and treats every one as
	// tainted. By names the store (Server "airlock", Tool its file name) and
	// Subject says why it cannot be read.
	ChannelUnreadable = "unreadable taint store"
)

// Tainted reports whether the context is tainted.
func (t Taint) Tainted() bool { return t.By.Tool != "" }

// taintAsks ends every taint sentence: what a tainted context asks for.
const taintAsks = "; exfiltration and destructive tools, and writes to persistent stores, ask whatever policy or grants say"

// Reason is the sentence a dialog shows for a call that taint turned into Ask, naming
// the call that tainted the context. The call ID and time are left out when unknown;
// the time is shown in At's own location.
func (t Taint) Reason() string {
	s := "this context is tainted: " + t.By.Qualified() + " returned untrusted content"
	if t.Channel == ChannelUnreadable {
		s = "this context is treated as tainted: " + t.By.Tool + " cannot be read (" + t.Subject + "), so airlock cannot tell which contexts are tainted"
		if !t.At.IsZero() {
			s += " (since " + t.At.Format(time.TimeOnly) + ")"
		}
		return s + taintAsks
	}
	if channelTaint(t) {
		s = "this context is tainted: " + subjectPhrase(t)
	} else if t.Channel != "" && t.Channel != ChannelResult {
		s = "this context is tainted: server " + t.By.Server + " sent untrusted text by its " + t.Channel + " (" + t.By.Qualified() + ")"
	}
	if t.CallID != "" {
		s += " (call " + t.CallID + ")"
	}
	if !t.At.IsZero() {
		s += " at " + t.At.Format(time.TimeOnly)
	}
	return s + taintAsks
}

// Verdict is the engine's answer for one call before any person is asked: the action,
// who decided it, and the sentences that explain it. Reasons holds the classification's
// reasons (blocking causes first, the policy sentence last), preceded, when taint or a
// grant decided, by the sentence saying so.
type Verdict struct {
	Action  Action
	By      DecidedBy
	Reasons []string
}

// ReasonGranted is the sentence of a call allowed by the person's grant.
const ReasonGranted = "you allowed this tool for this context"

// Decide applies taint and grants to a classification, first match wins:
//
//  1. c.Action is Deny (the tool is blocked, or policy denies its tier): Deny by
//     policy, with c's reasons, whose blocking causes come first.
//  2. The context is tainted and EscalatedByTaint(c): Ask by taint, with
//     taint.Reason() first (and, for a write to a persistent store that taint
//     escalates for no other reason, ReasonPersistentWrite next). A grant does not
//     bypass taint.
//  3. granted (the person allowed this tool for this context, and the grant still
//     binds what it was given for): Allow by grant.
//  4. Otherwise c.Action (Allow or Ask) by policy.
//
// Reasons is always a fresh slice.
func Decide(c Classification, granted bool, taint Taint) Verdict {
	switch {
	case c.Action == Deny || c.Tier == TierBlocked:
		return Verdict{Action: Deny, By: DecidedByPolicy, Reasons: slices.Clone(c.Reasons)}
	case taint.Tainted() && EscalatedByTaint(c):
		reasons := prepend(taint.Reason(), c.Reasons)
		if c.Persistent && !c.Has(LegExfiltration) && c.Tier != TierDestructive {
			reasons = slices.Insert(reasons, 1, ReasonPersistentWrite)
		}
		return Verdict{Action: Ask, By: DecidedByTaint, Reasons: reasons}
	case granted:
		return Verdict{Action: Allow, By: DecidedByGrant, Reasons: prepend(ReasonGranted, c.Reasons)}
	}
	a := c.Action
	if a != Allow {
		// Unset or unknown never runs unseen: ask.
		a = Ask
	}
	return Verdict{Action: a, By: DecidedByPolicy, Reasons: slices.Clone(c.Reasons)}
}

func prepend(s string, rest []string) []string {
	out := make([]string, 0, 1+len(rest))
	return append(append(out, s), rest...)
}
