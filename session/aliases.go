package session

// The aliases below exist only until every user imports internal/model directly:
// each names the model type, constant or function that used to be declared here, so
// that session.ToolInfo and the rest still compile everywhere meanwhile.

import "github.com/airlock-mcp/airlock/internal/model"

type (
	Answer                 = model.Answer
	ApprovalClosed         = model.ApprovalClosed
	ApprovalRequested      = model.ApprovalRequested
	Approver               = model.Approver
	ApproverFunc           = model.ApproverFunc
	Asker                  = model.Asker
	AuditChanged           = model.AuditChanged
	AuthorizationRequested = model.AuthorizationRequested
	CallFinished           = model.CallFinished
	CallRequest            = model.CallRequest
	DeniedError            = model.DeniedError
	Dropped                = model.Dropped
	Elicitation            = model.Elicitation
	ElicitationClosed      = model.ElicitationClosed
	ElicitationRequested   = model.ElicitationRequested
	Event                  = model.Event
	LogLine                = model.LogLine
	Overrides              = model.Overrides
	OverridesChanged       = model.OverridesChanged
	Pending                = model.Pending
	Progress               = model.Progress
	ResourceUpdated        = model.ResourceUpdated
	Response               = model.Response
	RuleProposal           = model.RuleProposal
	SamplingAnswer         = model.SamplingAnswer
	SamplingClosed         = model.SamplingClosed
	SamplingMessage        = model.SamplingMessage
	SamplingPart           = model.SamplingPart
	SamplingRequest        = model.SamplingRequest
	SamplingRequested      = model.SamplingRequested
	SamplingTool           = model.SamplingTool
	ServerChanged          = model.ServerChanged
	ServerFacts            = model.ServerFacts
	Status                 = model.Status
	ToolInfo               = model.ToolInfo
	WithdrawnError         = model.WithdrawnError
)

const (
	PersonContext    = model.PersonContext
	Deny             = model.Deny
	AllowOnce        = model.AllowOnce
	AllowForContext  = model.AllowForContext
	StatusConnecting = model.StatusConnecting
	StatusReady      = model.StatusReady
	StatusFailed     = model.StatusFailed

	MaxSamplingMessages = model.MaxSamplingMessages
	MaxSamplingText     = model.MaxSamplingText
	MaxSamplingWaiting  = model.MaxSamplingWaiting
)
