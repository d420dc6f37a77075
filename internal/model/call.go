package model

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/airlock-mcp/airlock/trust"
)

// Answer is a person's answer to a pending call. The zero value is Deny, so an answer
// that was never given can never mean yes.
type Answer int

// String returns the answer as a phrase for logs and audit.
func (a Answer) String() string {
	switch a {
	case AllowOnce:
		return "allow once"
	case AllowForContext:
		return "allow this tool for this context"
	}
	return "deny"
}

// Response is an answer with the person's optional reason.
type Response struct {
	Answer Answer
	Reason string
	// Remember, when set, saves the answer as a remembered rule (rules.toml): an
	// allow answer as "always allow" these arguments, a deny as "always deny". The
	// proposal must be for the asked tool; a bad one denies the call.
	Remember *RuleProposal
	// By, when set, says that no person decided: an approver that denies without
	// asking anyone (no terminal to ask on) sets DecidedByPolicy, and one that allows
	// because of `--yes` on the command line sets DecidedByFlag, so that the audit
	// log and the sentences do not name a person who was never asked. Zero means the
	// person. The engine writes DecidedByTaintThenFlag for a flag's answer to a
	// question that taint made ask, as it writes DecidedByTaintThenPerson.
	By trust.DecidedBy
}

// Approver answers calls that ask. Approve blocks until the person answers or ctx
// ends; the engine treats an error or an ended ctx as a denial.
type Approver interface {
	Approve(ctx context.Context, p *Pending) (Response, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, p *Pending) (Response, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, p *Pending) (Response, error) { return f(ctx, p) }

// Pending is a call that waits for a person. Everything in it is what the dialog shows;
// Request.Args are the canonical bytes that will be forwarded if allowed. The answer
// covers exactly what is shown: the tool as listed (Tool, whose Fingerprint and tier
// are copied below), its trust and policy, and these argument bytes. If any of them
// changes while the question waits, the question is withdrawn (ApprovalClosed with
// Stale) and the call is denied; the same check runs again just before forwarding.
type Pending struct {
	ID      uint64
	CallID  string
	Request CallRequest
	Tool    ToolInfo
	// Fingerprint and Tier are the tool's as shown (Tool.Fingerprint, Tool.Class.Tier).
	Fingerprint string
	Tier        trust.Tier
	// Verdict is why the engine asks (policy, taint or a rule) with its reasons.
	Verdict trust.Verdict
	// Rule is the argument rule that matched this call (nil when none): the ask rule
	// that made it ask, or the allow rule that taint overrode (its sentence is among
	// Verdict.Reasons).
	Rule  *trust.Rule
	Taint trust.Taint
	// Secrets are the secrets found in the arguments of a call to a tool that can
	// carry data out (what made it ask when Verdict.By is trust.DecidedBySecret);
	// ArgsMasked is then Request.Args with each of them masked ("ghp_…(40 chars)"),
	// what a question shows until the person reveals them. Both are empty when
	// nothing was found.
	Secrets    []SecretFinding
	ArgsMasked json.RawMessage
	// Held is set when the managed policy holds this call (its tool or tier at
	// ask, or a rule of the policy's decided it): the sentence saying so. The
	// question then offers only this call's yes and no, never a grant or an
	// "always".
	Held       string
	ArgsSHA256 string
	Created    time.Time
	// Deadline is when the call is denied if nobody answers.
	Deadline time.Time
}

// SecretFinding is one secret found in a call's arguments, without its value.
type SecretFinding struct {
	// Path names the argument (body, headers.Authorization, items[2]).
	Path string
	// Sentence says what it holds: "body holds something shaped like a GitHub
	// token".
	Sentence string
}

// Status is a server connection's state.
type Status int

// String returns connecting, ready or failed.
func (s Status) String() string {
	switch s {
	case StatusConnecting:
		return "connecting"
	case StatusReady:
		return "ready"
	case StatusFailed:
		return "failed"
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// MarshalText encodes the status as its word.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// DeniedError is returned by Call when the call was not allowed to run.
type DeniedError struct {
	Verdict trust.Verdict
	// Reason is the person's reason for a denial, if they gave one.
	Reason string
	// Rule names the argument rule that denied ("NAME (SOURCE)"), "" when none did.
	Rule string
	// Audit is why the audit log could not record the call, when that denied it
	// (Unwrap returns it: errors.Is(err, audit.ErrBroken)).
	Audit error
}

// auditBroken is the words of the audit log's ErrBroken (session/audit), which a
// denial by the audit log always says; model cannot import the log, and a test
// there keeps the two the same.
const auditBroken = "the audit log cannot be written"

// Unwrap returns the audit log's error when that is what denied the call.
func (e *DeniedError) Unwrap() error { return e.Audit }

func (e *DeniedError) Error() string {
	if e.Audit != nil {
		// Not a policy: airlock forwards no call whose decision it cannot record.
		msg := e.Audit.Error()
		// The log's error wraps ErrBroken without always saying it in words.
		if !strings.Contains(msg, auditBroken) {
			msg = auditBroken + ": " + msg
		}
		return "call refused, nothing was sent: " + msg
	}
	msg := "call denied"
	switch e.Verdict.By {
	case trust.DecidedByPerson:
		msg = "call denied by the person at airlock"
	case trust.DecidedByTaintThenPerson:
		msg = "call denied by the person at airlock (asked because this context is tainted)"
	case trust.DecidedByTimeout:
		msg = "call denied: nobody answered the approval in time"
	case trust.DecidedByAgentCancelled:
		msg = "call withdrawn by its caller"
	case trust.DecidedByAgentGone:
		msg = "call withdrawn: its agent disconnected"
	case trust.DecidedByPolicy:
		msg = "call denied by policy"
	case trust.DecidedByPin:
		msg = "call denied: the tool's definition changed"
	case trust.DecidedByDisabled:
		msg = "call denied: the tool is turned off"
	case trust.DecidedByRule:
		if e.Reason == "" && len(e.Verdict.Reasons) > 0 {
			return "call denied: " + e.Verdict.Reasons[0]
		}
		msg = "call denied by a rule"
	}
	switch {
	case e.Reason != "":
		msg += ": " + e.Reason
	case e.Verdict.By == trust.DecidedByTimeout:
		// Why it asked, then how it ended: "asked because …; nobody answered within 2m0s".
		msg = "call denied: " + strings.Join(e.Verdict.Reasons, "; ")
	case len(e.Verdict.Reasons) > 0:
		msg += ": " + e.Verdict.Reasons[len(e.Verdict.Reasons)-1]
	}
	return msg
}

// WithdrawnError is returned by Call when the caller withdrew the call (its context
// ended) while it waited for a person. It unwraps to the context's error, so
// errors.Is(err, context.Canceled) holds; Verdict says why the call asked and that it
// was withdrawn, as its audit record does.
type WithdrawnError struct {
	Verdict trust.Verdict
	Err     error
}

func (e *WithdrawnError) Error() string {
	return "call withdrawn by its caller: " + strings.Join(e.Verdict.Reasons, "; ")
}

// Unwrap returns the caller's context error.
func (e *WithdrawnError) Unwrap() error { return e.Err }

// Withdrawal is the cause (context.WithCancelCause) a caller cancels its call's
// context with to say why it withdrew the call while it waited for a person: the
// question closes saying Why, and the call's record keeps Why after the sentence
// that made it ask, in place of "the caller withdrew the call".
type Withdrawal struct{ Why string }

func (w *Withdrawal) Error() string { return w.Why }

// CallRequest is one tool call, from the person or from an agent.
type CallRequest struct {
	// Context is the taint and grant context: "" means the person's own calls.
	Context string
	// Client names the agent client for dialogs ("" for the person).
	Client string
	Server string
	Tool   string
	// Served is the name the caller named the tool by when that is not its
	// qualified name SERVER__TOOL: the gateway's mapped name (Snapshot.ServedName).
	// The dialog shows it and the audit records it beside the tool; it decides
	// nothing.
	Served string
	// Args are the exact argument bytes: a JSON object, or empty for {}. They are
	// what the person approves, what is hashed, and what is forwarded.
	Args json.RawMessage
	// OnProgress, when set, receives progress notifications for this call.
	OnProgress func(Progress)
	// CallID, when set, is the call's ID, from Engine().NewCallID (so no other
	// call has it): the caller can then ask about the call while it runs
	// (QuestionWaiting). Empty, the call gets a new one.
	CallID string
	// StillAccepted, when set, is asked once more just before an allowed call is
	// forwarded, after any question was answered: an error that is ErrAgentGone
	// (ErrTokenRevoked: the gateway token the agent presented was revoked or
	// replaced meanwhile) means its caller may no longer call, and the call is
	// withdrawn as its agent's (decided_by agent-gone, the error's words in the
	// reasons); nothing of it runs. Any other error refuses it too.
	StillAccepted func() error
}

// PersonContext is the context of the person's own calls.
const PersonContext = "you"

// The answers.
const (
	Deny Answer = iota
	AllowOnce
	AllowForContext
)

// The statuses.
const (
	StatusConnecting Status = iota
	StatusReady
	StatusFailed
)
