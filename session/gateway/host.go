package gateway

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/conn"
	"github.com/airlock-mcp/airlock/trust"
)

// Host is what the gateway needs of the session it serves (the Manager implements
// it). It is the gateway's whole reach into airlock: every agent call and read goes
// through the host's approval engine, and nothing here can decide a call's fate from
// the gateway's side.
//
// Invariant: no method of Host can allow a call, clear or lower taint, change policy
// or trust, or drop a record (audit line, recording, rule). Concretely no method's
// name begins with Answer, Approve, Allow, Accept, Grant, Decide, Remember, Set,
// Reset, Clear, Untaint, Forget, Drop, Delete, Remove, Purge or Prune, and none is
// Engine (the engine answers and clears); a test in this package checks that list
// against the method set. The gateway may only taint (MarkTainted), move taint
// whole from one context name to another (MoveTaints, which keeps every taint),
// end a context's grants (EndContext), and ask.
type Host interface {
	// Version is airlock's version, shown to agents in initialize.
	Version() string
	// Now is the session's clock.
	Now() time.Time
	// Snapshot is the newest published view of the servers and their tools.
	Snapshot() *model.Snapshot
	// LookupTool finds server's tool name in snap.
	LookupTool(snap *model.Snapshot, server, name string) (model.ToolInfo, bool)
	// OnChange and OnResourceUpdated register callbacks for a new snapshot and a
	// server's resources/updated.
	OnChange(f func())
	OnResourceUpdated(f func(model.ResourceUpdated))

	// CallTool decides req through the approval engine and, when allowed, runs it:
	// the tool's result, or the error (a *model.DeniedError when not allowed).
	CallTool(ctx context.Context, req model.CallRequest) (*mcp.CallToolResult, error)
	// ReadResource, GetPrompt and Complete are the resource, prompt and completion
	// requests of an agent, decided by the approval engine as a call is.
	ReadResource(ctx context.Context, req model.ReadRequest) (*model.ReadOutcome, error)
	GetPrompt(ctx context.Context, req model.PromptRequest) (*model.PromptOutcome, error)
	Complete(ctx context.Context, req model.CompleteRequest) (*model.Completion, error)
	// SubscribeAgent is an agent's subscription to a resource (with the agent's
	// rules); SubscribeFor and UnsubscribeFor are a holder's bookkeeping.
	SubscribeAgent(ctx context.Context, req model.SubscribeRequest) error
	SubscribeFor(ctx context.Context, holder, server, uri string) error
	UnsubscribeFor(ctx context.Context, holder, server, uri string) error
	// AuditRefused writes the audit line of a request refused before the engine.
	AuditRefused(callID string, req model.CallRequest, by trust.DecidedBy, why string)

	// NewCallID is a fresh call id for the audit log.
	NewCallID() string
	// Limits are the [limits] in force.
	Limits() config.Limits
	// Pending lists the calls waiting for a person (read only: answering is the
	// person's); QuestionWaiting reports a server's question waiting during callID.
	Pending() []*model.Pending
	QuestionWaiting(callID string) bool
	// MarkTainted adds a taint to a context; MoveTaints moves every taint of the
	// contexts from matches to the context to (none is lost) and returns their names.
	MarkTainted(ctxName string, t trust.Taint)
	MoveTaints(to string, from func(ctxName string) bool) ([]string, error)
	// NoteClient remembers the client name of a context (shown beside its grants).
	NoteClient(ctxName, client string)
	// EndContext ends a context's grants when its agent session is gone; its taint
	// stays.
	EndContext(ctxName string)
	// AgentHistories keeps each agent session's protocol messages, both ways (nil:
	// none kept).
	AgentHistories() *conn.AgentHistories
}
