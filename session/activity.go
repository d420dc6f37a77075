package session

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/trust"
)

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
	// Outcome is "ok", "tool-error", "failed", "cancelled", "agent-gone" (the agent
	// went away before the call was forwarded) or "denied".
	Outcome string
	// Err is the error's text when the call failed or was denied.
	Err    string
	Result *mcp.CallToolResult
	// At is when the call started; Duration is how long it took in all, any wait
	// for a person included; Ran is how long the server took (0 when it never ran).
	At            time.Time
	Duration, Ran time.Duration
}

func (CallFinished) event() {}

// callFinished builds the event of one call from what Call returned.
func callFinished(req CallRequest, snap *Snapshot, start, end time.Time, out *Outcome, err error) CallFinished {
	e := CallFinished{
		Client: req.Client, Context: req.Context, Server: req.Server, Tool: req.Tool,
		Args: req.Args, At: start, Duration: end.Sub(start),
	}
	if len(e.Args) == 0 {
		e.Args = json.RawMessage("{}")
	}
	if t, ok := snap.Tool(req.Server, req.Tool); ok {
		e.Tier = t.Class.Tier.String()
	}
	if out != nil {
		e.CallID, e.Result, e.Ran = out.CallID, out.Result, out.Duration
		e.DecidedBy, e.Reasons, e.Rule = string(out.Verdict.By), out.Verdict.Reasons, out.Rule
		if out.Verdict.Action == trust.Allow {
			e.Decision = "allow"
		}
	}
	var denied *DeniedError
	var withdrawn *WithdrawnError
	switch {
	case errors.As(err, &denied):
		e.Decision, e.DecidedBy, e.Reasons, e.Reason, e.Rule = "deny", string(denied.Verdict.By), denied.Verdict.Reasons, denied.Reason, denied.Rule
		e.Outcome, e.Err = "denied", err.Error()
	case errors.Is(err, ErrAgentGone):
		// Not decided by anyone: the agent left while it waited. Why it asked is kept.
		e.DecidedBy, e.Outcome, e.Err = string(trust.DecidedByAgentGone), "agent-gone", err.Error()
		if errors.As(err, &withdrawn) {
			e.Reasons = withdrawn.Verdict.Reasons
		}
	case errors.As(err, &withdrawn):
		// Not decided: the caller withdrew it while it waited. Why it asked is kept.
		e.DecidedBy, e.Reasons = string(withdrawn.Verdict.By), withdrawn.Verdict.Reasons
		e.Outcome, e.Err = "cancelled", err.Error()
	case errors.Is(err, context.Canceled):
		e.Outcome, e.Err = "cancelled", err.Error()
	case err != nil:
		e.Outcome, e.Err = "failed", err.Error()
	case out == nil || out.Result == nil:
		e.Outcome = "failed"
	case out.Result.IsError:
		e.Outcome = "tool-error"
	default:
		e.Outcome = "ok"
	}
	return e
}
