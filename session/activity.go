package session

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"

	"github.com/airlock-mcp/airlock/trust"
)

// callFinished builds the event of one call from what Call returned.
func callFinished(req model.CallRequest, snap *model.Snapshot, start, end time.Time, out *Outcome, err error) model.CallFinished {
	e := model.CallFinished{
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
	var denied *model.DeniedError
	var withdrawn *model.WithdrawnError
	switch {
	case errors.As(err, &denied):
		e.Decision, e.DecidedBy, e.Reasons, e.Reason, e.Rule = "deny", string(denied.Verdict.By), denied.Verdict.Reasons, denied.Reason, denied.Rule
		e.Outcome, e.Err = "denied", err.Error()
	case errors.Is(err, model.ErrAgentGone):
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
