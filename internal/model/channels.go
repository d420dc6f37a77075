package model

import (
	"encoding/json"
	"time"

	"github.com/airlock-mcp/airlock/trust"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The holders of a subscription: the person in the TUI, and the gateway for all its
// agent sessions (it counts its sessions itself).
const (
	HolderPerson  = "you"
	HolderGateway = "gateway"
)

// ReadRequest is one resources/read, from the person or from an agent. Context and
// Client are CallRequest's: the taint and grant context ("" is the person's own) and
// the agent client's name for dialogs.
type ReadRequest struct {
	Context string
	Client  string
	Server  string
	// URI is the resource to read, exactly as it is shown, hashed and sent. It must
	// be valid UTF-8 and not empty.
	URI string
	// CallID is CallRequest's: the read's ID when the caller gave one.
	CallID string
	// StillAccepted is CallRequest's: asked once more just before an allowed read
	// is forwarded.
	StillAccepted func() error
}

// PromptRequest is one prompts/get. Args is a JSON object of string values (or empty
// for none): made canonical, it is what is shown, hashed, audited and sent.
type PromptRequest struct {
	Context string
	Client  string
	Server  string
	Name    string
	// Served is the name the gateway serves the prompt under when it is not
	// SERVER__NAME (see CallRequest.Served); the audit records it.
	Served string
	Args   json.RawMessage
	// CallID is CallRequest's: the get's ID when the caller gave one.
	CallID string
	// StillAccepted is CallRequest's: asked once more just before an allowed get
	// is forwarded.
	StillAccepted func() error
}

// SubscribeRequest is one agent's resources/subscribe, held by the gateway
// (HolderGateway). Context and Client are CallRequest's.
type SubscribeRequest struct {
	Context string
	Client  string
	Server  string
	URI     string
	// StillAccepted is CallRequest's: asked once more when the subscription's turn
	// comes (after any other holder's change of the same server), before anything
	// is sent for it.
	StillAccepted func() error
}

// CompleteRequest is one completion/complete for an argument of a prompt (Prompt
// set) or of a resource template (Template set, its URI template).
type CompleteRequest struct {
	Context  string
	Client   string
	Server   string
	Prompt   string
	Template string
	// Argument is the argument's name and Value what is typed so far; Resolved are
	// the arguments already filled in.
	Argument string
	Value    string
	Resolved map[string]string
	// StillAccepted, when set, is asked just before the completion is sent: an
	// error (a revoked or rotated gateway token) refuses it, as
	// CallRequest.StillAccepted refuses a call.
	StillAccepted func() error
}

// ReadOutcome is what a resource read that ran returned.
type ReadOutcome struct {
	CallID   string
	Verdict  trust.Verdict
	Result   *mcp.ReadResourceResult
	Duration time.Duration
	// Tainted says the content is untrusted and tainted the request's context.
	Tainted bool
}

// PromptOutcome is what a prompt get that ran returned.
type PromptOutcome struct {
	CallID   string
	Verdict  trust.Verdict
	Result   *mcp.GetPromptResult
	Duration time.Duration
	Tainted  bool
}

// Completion is what completion/complete returned, bounded to the session's 100 values.
type Completion struct {
	Values  []string
	Total   int
	HasMore bool
	// Tainted says the values are untrusted content and tainted the context.
	Tainted bool
}
