package model

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SamplingRequested reports a server asking for a completion; answer it with
// Manager.AnswerSampling.
type SamplingRequested struct{ Request *SamplingRequest }

// SamplingClosed reports that a sampling request no longer waits (answered, or the
// server cancelled it).
type SamplingClosed struct{ ID uint64 }

func (SamplingRequested) event() {}

func (SamplingClosed) event() {}

// Event is something the session reports to whoever drives it (the TUI, the CLI).
// Every event names its server where it has one; events about a connection carry its
// generation so that a late event from a connection that was since replaced can be
// recognised as stale and dropped.
type Event interface{ event() }

// ListOnly reports whether e only adds an entry to a list (a call's end, a log
// line): showing it a little later, together with the ones after it, changes
// nothing a person decides on. Every other event (a question, a status, a listing)
// is shown as it comes.
func ListOnly(e Event) bool {
	switch e.(type) {
	case CallFinished, LogLine:
		return true
	}
	return false
}

// ServerChanged reports a server's status or tool list changed; read Snapshot for the
// new state.
type ServerChanged struct {
	Server string
	Gen    uint64
	Status Status
}

// LogLine is one line of a server's stderr or one logging notification. Text is raw
// server-controlled text: escape it before display.
type LogLine struct {
	Server string
	Source string // "stderr", "log:<level>", or "airlock" for airlock's own notes on the server
	Text   string
}

// ApprovalRequested reports a call that waits for a person.
type ApprovalRequested struct{ Pending *Pending }

// ApprovalClosed reports that a pending approval is no longer waiting (answered,
// timed out or withdrawn by its caller).
type ApprovalClosed struct {
	ID      uint64
	Outcome string
	// Stale is true when airlock withdrew the question because what it showed (the
	// tool's definition, tier, trust or policy) changed while it waited; Outcome then
	// says what changed. The call is denied.
	Stale bool
}

// Progress reports a progress notification for a running call.
type Progress struct {
	CallID string
	// Server is the server the call went to, the only one whose progress counts.
	Server   string
	Progress float64
	Total    float64
	Message  string
}

// Dropped reports that the event queue overflowed: Count log lines were dropped
// (they remain in each server's bounded stderr buffer), and Calls finished calls were
// let go unread, the oldest first (the audit log has their records).
type Dropped struct{ Count, Calls int }

func (ServerChanged) event() {}

func (LogLine) event() {}

func (ApprovalRequested) event() {}

func (ApprovalClosed) event() {}

func (Progress) event() {}

func (Dropped) event() {}

// CallFinished reports that a call through Manager.Call ended, however it ended:
// run (ok or a tool error), failed, cancelled or denied. Every call is reported,
// the person's and every agent's, so the TUI can show what agents did. Args and
// Result are server- and agent-controlled: escape them before display.
type CallFinished struct {
	// CallID is the engine's id of the call ("" when it ended before one was given).
	CallID string
	// Client names the agent client ("" for the person); Context is the taint and
	// grant context the call ran in ("" for the person's own).
	Client, Context string
	Server, Tool    string
	// Tier is the tool's tier when the call ended ("" when the tool is unknown).
	Tier string
	Args json.RawMessage
	// Decision is "allow" or "deny", or "" when the call ended before it was
	// decided (an unknown tool, bad arguments, cancelled while waiting).
	Decision string
	// DecidedBy is who or what decided (trust.DecidedBy), and Reasons why.
	DecidedBy string
	Reasons   []string
	// Rule names the argument rule that decided ("NAME (SOURCE)") when DecidedBy
	// is "rule".
	Rule string
	// Reason is the person's own reason for a denial, if they gave one.
	Reason string
	// Outcome is "ok", "tool-error", "result-invalid" (the result does not match
	// the tool's output schema: ErrResultSchema), "failed", "cancelled",
	// "agent-gone" (the agent went away before the call was forwarded) or "denied".
	Outcome string
	// Err is the error's text when the call failed or was denied.
	Err    string
	Result *mcp.CallToolResult
	// Unkept says Args and Result were let go before the event was read, to bound
	// the memory of calls nobody had read yet (the audit log has the record).
	Unkept bool
	// At is when the call started; Duration is how long it took in all, any wait
	// for a person included; Ran is how long the server took (0 when it never ran).
	At            time.Time
	Duration, Ran time.Duration
}

func (CallFinished) event() {}

// ElicitationRequested reports a server asking the person for input.
type ElicitationRequested struct{ Elicitation *Elicitation }

// ElicitationClosed reports that an elicitation no longer waits (answered, or the
// server cancelled its request).
type ElicitationClosed struct{ ID uint64 }

func (ElicitationRequested) event() {}

func (ElicitationClosed) event() {}

// OverridesChanged reports that the person's live changes moved: take a new Snapshot.
type OverridesChanged struct{}

func (OverridesChanged) event() {}

// AuditChanged says that what is wrong with the audit log changed: it became
// damaged, a write failed (a full disk), its head file could not be written, a
// damaged record was found, or the problem went away. AuditProblem says what it is now.
type AuditChanged struct{}

func (AuditChanged) event() {}

// AuthorizationRequested reports that a server needs the person to authorize airlock
// in a browser: URL is the authorization server's page (server-influenced text:
// escape before display). airlock waits for the redirect on a loopback address.
type AuthorizationRequested struct {
	Server string
	URL    string
}

func (AuthorizationRequested) event() {}

// ResourceUpdated reports notifications/resources/updated for a URI subscribed to
// (Subscribe); a notification for any other URI is dropped. URI is server text.
type ResourceUpdated struct {
	Server string
	Gen    uint64
	URI    string
}

func (ResourceUpdated) event() {}
