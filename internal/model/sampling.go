package model

import (
	"context"
	"encoding/json"
)

// Elicitation is a server's request for input from the person (elicitation/create).
// Message, Schema and URL are server-controlled: escape before display. Answer it
// with Manager.AnswerElicitation; until then the server's request waits.
type Elicitation struct {
	ID     uint64
	Server string
	// Mode is "form" (answer Schema) or "url" (the server asks the person to visit URL).
	Mode    string
	Message string
	// Schema is the requested schema, a flat JSON object schema of primitive fields.
	Schema json.RawMessage
	URL    string
	// CallID is the call to Server that was in flight when the server asked (the
	// oldest, when several were); InFlight lists them all. Both are empty only for a
	// server whose config allows elicitation = "anytime" and that asked between calls.
	CallID   string
	InFlight []string
}

// SamplingRequest is a server asking for an LLM completion (sampling/createMessage,
// deprecated by the 2026-07-28 spec, SEP-2577). airlock has no model of its own and
// never forwards it to an agent: the person reads the request and declines it or
// writes the reply by hand. Every string is server-controlled: escape before display.
// A request beyond the bounds (MaxSamplingMessages, MaxSamplingText) never becomes a
// SamplingRequest: it is declined at once.
type SamplingRequest struct {
	ID     uint64
	Server string
	// CallID is the call to Server in flight when it asked (the oldest); InFlight
	// lists them all. Empty only for a server allowed to ask between calls.
	CallID   string
	InFlight []string

	SystemPrompt string
	Messages     []SamplingMessage
	// IncludeContext is the server's wish ("none", "thisServer", "allServers", or
	// ""); airlock includes no context whatever it says.
	IncludeContext string
	// ModelHints are the model names the server prefers, in its order; the
	// priorities are 0..1, 0 when not given.
	ModelHints           []string
	CostPriority         float64
	SpeedPriority        float64
	IntelligencePriority float64
	MaxTokens            int64
	Temperature          float64
	StopSequences        []string
	// Tools are the tools the server offers the model (sampling with tools); airlock
	// does not declare sampling.tools, so a server that follows the spec sends none.
	Tools      []SamplingTool
	ToolChoice string
	// Metadata is the server's metadata object as JSON ("" when none).
	Metadata string
}

// SamplingMessage is one message of a sampling request.
type SamplingMessage struct {
	Role  string
	Parts []SamplingPart
}

// SamplingPart is one content block of a message. Image and audio data are not kept:
// Kind, MIME and Size say what was there.
type SamplingPart struct {
	// Kind is text, image, audio, tool_use, tool_result, or the content's own type.
	Kind string
	// Text is the text of a text block; for tool_use the tool's name and its input
	// as JSON; for tool_result its text blocks; for another kind its JSON.
	Text string
	MIME string
	// Size is the number of bytes of image or audio data.
	Size int
}

// SamplingTool is a tool a sampling request offers the model.
type SamplingTool struct {
	Name        string
	Description string
}

// SamplingAnswer is the person's answer to a sampling request: Decline, or Reply,
// the text written by hand that goes back as the assistant's message.
type SamplingAnswer struct {
	Decline bool
	Reply   string
}

// Asker answers a server's requests of the person where no TUI reads the Manager's
// events (airlock call, airlock check): without a terminal it declines at once.
// Nil (the TUI's way) turns them into ElicitationRequested and SamplingRequested
// events answered through AnswerElicitation and AnswerSampling.
type Asker interface {
	// Elicit returns accept (with content matching e.Schema), decline or cancel.
	Elicit(ctx context.Context, e *Elicitation) (action string, content map[string]any, err error)
	Sample(ctx context.Context, r *SamplingRequest) (SamplingAnswer, error)
}

// The bounds of a sampling request a person is asked about. Everything within them
// is shown (the question scrolls); a request beyond them is declined at once, unseen,
// with an error that names the bound, and the person is told in the server's log.
const (
	// MaxSamplingMessages is the most messages a sampling request may carry.
	MaxSamplingMessages = 1000
	// MaxSamplingText is the most bytes of text (system prompt, messages, tool
	// descriptions and metadata together) a sampling request may carry.
	MaxSamplingText = 256 << 10
	// MaxSamplingWaiting is the most sampling requests of one server that wait for
	// the person at once; more are declined unseen.
	MaxSamplingWaiting = 4
)
