package session

// The aliases and forwarders below exist only until every user imports
// internal/model (or trust, or session/record) directly: each names what used to be
// declared here, so that session.ToolInfo and the rest still compile everywhere
// meanwhile.

import (
	"io"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/record"
	"github.com/airlock-mcp/airlock/trust"
)

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
	CompleteRequest        = model.CompleteRequest
	Completion             = model.Completion
	DeniedError            = model.DeniedError
	DriftFinding           = model.DriftFinding
	DriftKind              = model.DriftKind
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
	PromptArgInfo          = model.PromptArgInfo
	PromptInfo             = model.PromptInfo
	PromptOutcome          = model.PromptOutcome
	PromptRequest          = model.PromptRequest
	ReadOutcome            = model.ReadOutcome
	ReadRequest            = model.ReadRequest
	RecordedPrompts        = model.RecordedPrompts
	RecordedResources      = model.RecordedResources
	RecordedSandbox        = model.RecordedSandbox
	RecordedServer         = model.RecordedServer
	RecordedTool           = model.RecordedTool
	Recording              = model.Recording
	ResourceInfo           = model.ResourceInfo
	ResourceTemplateInfo   = model.ResourceTemplateInfo
	ResourceUpdated        = model.ResourceUpdated
	Response               = model.Response
	Reviewed               = model.Reviewed
	RuleEntry              = model.RuleEntry
	RuleError              = model.RuleError
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
	ServerInfo             = model.ServerInfo
	Snapshot               = model.Snapshot
	Status                 = model.Status
	ToolInfo               = model.ToolInfo
	WithdrawnError         = model.WithdrawnError
)

const (
	AllowForContext          = model.AllowForContext
	AllowOnce                = model.AllowOnce
	Deny                     = model.Deny
	DriftInstructionsChanged = model.DriftInstructionsChanged
	DriftSandboxLoosened     = model.DriftSandboxLoosened
	DriftServerAdded         = model.DriftServerAdded
	DriftServerRemoved       = model.DriftServerRemoved
	DriftServerStatus        = model.DriftServerStatus
	DriftToolAdded           = model.DriftToolAdded
	DriftToolChanged         = model.DriftToolChanged
	DriftToolRemoved         = model.DriftToolRemoved
	HolderGateway            = model.HolderGateway
	HolderPerson             = model.HolderPerson
	MaxRecordingBytes        = model.MaxRecordingBytes
	MaxSamplingMessages      = model.MaxSamplingMessages
	MaxSamplingText          = model.MaxSamplingText
	MaxSamplingWaiting       = model.MaxSamplingWaiting
	PersonContext            = model.PersonContext
	RecordingSchemaVersion   = model.RecordingSchemaVersion
	StatusConnecting         = model.StatusConnecting
	StatusFailed             = model.StatusFailed
	StatusReady              = model.StatusReady
)

var (
	ErrAgentGone    = model.ErrAgentGone
	ErrTokenRevoked = model.ErrTokenRevoked
)

// ArgsSHA256 is trust.ArgsSHA256 under its old name.
func ArgsSHA256(args []byte) string { return trust.ArgsSHA256(args) }

// OpenArgs is trust.OpenArgs under its old name.
func OpenArgs(args any, when map[string]map[string]any) []string { return trust.OpenArgs(args, when) }

// DescribeWhen is trust.DescribeWhen under its old name.
func DescribeWhen(w map[string]map[string]any) string { return trust.DescribeWhen(w) }

// ReadRecording is record.Read under its old name.
func ReadRecording(r io.Reader) (*Recording, error) { return record.Read(r) }

// Drift is record.Drift under its old name.
func Drift(old, cur *Recording) []DriftFinding { return record.Drift(old, cur) }
