package model

import (
	"encoding/json"
	"time"

	"github.com/airlock-mcp/airlock/trust"
)

// ToolInfo is a point-in-time view of one tool with its classification. Raw is the
// whole tool object exactly as received; strings in it are server-controlled.
type ToolInfo struct {
	Ref          trust.Ref
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Raw          json.RawMessage
	// Fingerprint is the canonical SHA-256 of Raw (what pins compare); "" when the
	// definition could not be fingerprinted.
	Fingerprint string
	Declared    trust.Declared
	Class       trust.Classification
	Pin         trust.PinState
	PinnedAt    time.Time
	ServerTrust trust.ServerTrust
	// Facts is what the entry says of the tool's server, one value shared by all
	// of its tools (ServerEnv and the methods after it read it; nil reads as
	// nothing known).
	Facts *ServerFacts
	// Exposed is false when the name cannot be offered through the gateway.
	Exposed bool
	// Disabled is true when the person turned the tool off for this session.
	Disabled bool
	// Policy is the tool's own policy (config, or the person's live change);
	// ActionUnset when the tier's policy applies.
	Policy trust.Action
	// ToolLabels and Asserted are the config's labels and asserted hints for the
	// tool, InstructionsChanged and NameProblem the blocks it was classified with:
	// with the fields above and the server's labels (Facts), what Input gives back.
	ToolLabels          []trust.Leg
	Asserted            trust.Hints
	InstructionsChanged bool
	NameProblem         string
	// Rules are the tool's argument rules: the config's, then the remembered ones
	// (docs/rules.md). They decide only while the tool is not blocked, so a changed
	// pin suspends them until the new definition is accepted.
	Rules []trust.Rule
	// RuleSet is Rules compiled for matching (built with the listing). RuleSet,
	// RuleSchema and BrokenRules are the session's own: it sets them with the
	// listing and only it reads them.
	RuleSet *trust.RuleSet
	// RuleSchema is InputSchema read for rules (trust.ParseSchema), with the
	// listing for a tool that has config rules; nil otherwise (read when a call
	// to a tool with remembered rules needs it).
	RuleSchema *trust.Schema
	// BrokenRules are the config's rules of the tool that can never match its
	// listed schema (trust.RuleProblems), by name: while one is in effect, every
	// call of the tool asks.
	BrokenRules map[string][]string
	// Channel is set when this is no tool but a channel decided like one (a
	// resource read, a prompt get; Ref.Tool is then trust.ResourceReadTool or
	// trust.PromptGetTool): questions and the Activity view say so.
	Channel trust.ChannelKind
	// TaskSupport is the tool's execution.taskSupport as listed ("", "forbidden",
	// "optional" or "required"). airlock cannot run task-augmented calls (go-sdk
	// v1.8.0 does not implement SEP-2663): Call refuses a "required" tool up front.
	TaskSupport string
	// Managed is the managed policy's hold on the tool (docs/policy.md); nil when
	// the policy sets nothing for it or its tier.
	Managed *PolicyHold
}

// PolicyHold is what the managed policy holds a tool to.
type PolicyHold struct {
	// Action is trust.Ask or trust.Deny when the policy (the tool's entry, or its
	// tier's) holds the tool there: no rule, grant or answer of the person's lets
	// its calls run unasked. ActionUnset when only the policy's rules apply.
	Action trust.Action
	// Source says where: "policy: FILE:LINE".
	Source string
	// Rules are the policy's deny and ask rules for the tool, which decide before
	// the person's; RuleSet is them compiled (the session's own).
	Rules   []trust.Rule
	RuleSet *trust.RuleSet
}

// Holds reports whether the policy holds the tool at ask or deny.
func (h *PolicyHold) Holds() bool { return h != nil && h.Action >= trust.Ask }

// PolicyHeld is the sentence of a question the policy's hold forbids a standing
// allow for: said in the dialog and in every refusal of a grant or an "always".
func (h *PolicyHold) PolicyHeld() string {
	return "the team policy asks for every call of this tool (" + h.Source + "): it cannot be allowed for the context or always"
}

// ServerFacts is what a tool's entry says of its server. One value is shared by the
// tools of a listing: as four fields of each ToolInfo it was 96 bytes a tool, a
// megabyte of copies at 10,000 tools that a first listing wrote and zeroed first.
type ServerFacts struct {
	// Env is ServerInfo.Env: variable names only.
	Env []string
	// Roots and Deprecated are ServerInfo.Roots and .Deprecated.
	Roots      []string
	Deprecated []string
	// Labels are the config's labels of the server, as classification read them.
	Labels []trust.Leg
	// Local is true for a server on this machine (stdio, in-process): a path in its
	// arguments names a file airlock can resolve.
	Local bool
	// Fence is ServerInfo.Fence, as classification read it; Fenceable says a
	// sandbox can be applied to the server (a stdio server airlock starts, on a
	// system it fences), so a fix hint may propose one.
	Fence     trust.Fence
	Fenceable bool
}

// ServerEnv is ServerInfo.Env of the tool's server: variable names only (nil when
// unknown).
func (t *ToolInfo) ServerEnv() []string {
	if t.Facts == nil {
		return nil
	}
	return t.Facts.Env
}

// ServerRoots is ServerInfo.Roots of the tool's server.
func (t *ToolInfo) ServerRoots() []string {
	if t.Facts == nil {
		return nil
	}
	return t.Facts.Roots
}

// ServerDeprecated is ServerInfo.Deprecated of the tool's server.
func (t *ToolInfo) ServerDeprecated() []string {
	if t.Facts == nil {
		return nil
	}
	return t.Facts.Deprecated
}

// ServerFence is ServerInfo.Fence of the tool's server, as classified.
func (t *ToolInfo) ServerFence() trust.Fence {
	if t.Facts == nil {
		return trust.Fence{}
	}
	return t.Facts.Fence
}

// ServerLabels are the config's labels of the tool's server, as classified.
func (t *ToolInfo) ServerLabels() []trust.Leg {
	if t.Facts == nil {
		return nil
	}
	return t.Facts.Labels
}

// Input is exactly what trust.Classify was given for this tool (with the session's
// live changes applied): explanations and fix hints re-run the pure trust functions
// on it. It is rebuilt from the tool's fields rather than kept beside them, which at
// 10,000 tools was 2.8 MB of copies a first listing wrote and nobody read.
func (t *ToolInfo) Input() trust.Tool {
	return trust.Tool{
		Server:              t.Ref.Server,
		Name:                t.Ref.Tool,
		Description:         t.Description,
		Declared:            t.Declared,
		ServerTrust:         t.ServerTrust,
		ServerLabels:        t.ServerLabels(),
		ToolLabels:          t.ToolLabels,
		Asserted:            t.Asserted,
		ToolPolicy:          t.Policy,
		Pin:                 t.Pin,
		PinnedAt:            t.PinnedAt,
		InstructionsChanged: t.InstructionsChanged,
		NameProblem:         t.NameProblem,
		Disabled:            t.Disabled,
		Fence:               t.ServerFence(),
	}
}
