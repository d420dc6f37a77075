package trust

import (
	"strconv"
	"strings"
)

// ChannelKind names a way a server's text reaches a context other than a tool call:
// reading a resource, getting a prompt, completing an argument (docs/channels.md).
type ChannelKind string

// The channel kinds; each is decided per server by the config key of the same name
// (resources = "allow" | "ask" | "deny", prompts = …). Completions follow the policy
// of what they complete (a prompt or a resource template).
const (
	KindResources ChannelKind = "resources"
	KindPrompts   ChannelKind = "prompts"
)

// The synthetic tool names a channel is decided, granted, tainted and audited under.
// A "/" is never valid in a tool name (ValidToolName), so these cannot collide with a
// tool any server lists.
const (
	ResourceReadTool = "resources/read"
	PromptGetTool    = "prompts/get"
)

// The Taint.Channel values of the channels (besides ChannelResult and friends).
const (
	ChannelResource   = "resource"
	ChannelPrompt     = "prompt"
	ChannelCompletion = "completion values"
)

// ChannelTool returns the synthetic tool name of a channel kind ("" for an unknown kind).
func ChannelTool(k ChannelKind) string {
	switch k {
	case KindResources:
		return ResourceReadTool
	case KindPrompts:
		return PromptGetTool
	}
	return ""
}

// ChannelOf returns the channel kind a synthetic tool name stands for, and false for
// a real tool name.
func ChannelOf(tool string) (ChannelKind, bool) {
	switch tool {
	case ResourceReadTool:
		return KindResources, true
	case PromptGetTool:
		return KindPrompts, true
	}
	return "", false
}

// ChannelInput is everything ClassifyChannel needs about one server's channel.
type ChannelInput struct {
	Server       string
	Kind         ChannelKind
	ServerTrust  ServerTrust
	ServerLabels []Leg
	// Policy is the server's key for this kind (resources = …, prompts = …);
	// ActionUnset means the read tier's policy.
	Policy Action
	// Fence is the server's sandbox, as for its tools (Tool.Fence).
	Fence Fence
}

// ClassifyChannel decides a channel like Classify decides a tool, so that the engine
// asks, grants, taints and audits it the same way:
//
//   - its tier is read: reading a resource or getting a prompt changes nothing;
//   - it is blocked (Deny) when the server is blocked or the policy says deny;
//   - the action is the policy when set, else the read tier's action of p;
//   - legs: the server's labels (a private-data server's resources join the
//     private-data leg, an untrusted-content label makes the content untrusted);
//     an untrusted server's channel is untrusted content (its text may carry
//     someone else's instructions) and exfiltration (the URI or the prompt's
//     arguments the reader chose go to a server whose intentions are not believed),
//     unless the server is fenced with no network (Fence.NoNetwork): then they go
//     no further than it.
//
// A channel in the untrusted-content leg taints the context its content reaches
// (Taints), and one in the exfiltration leg asks in a tainted context
// (EscalatedByTaint), exactly like a tool.
func ClassifyChannel(in ChannelInput, p Policy) Classification {
	labels := labelMask(in.ServerLabels)
	legs := labels
	if in.ServerTrust != Trusted {
		legs |= maskOf(LegUntrustedContent)
		if !in.Fence.NoNetwork() {
			legs |= maskOf(LegExfiltration)
		}
	}
	what := string(in.Kind)
	tierAction := p.For(TierRead)
	policy := in.Policy
	if !known(policy) {
		policy = ActionUnset
	}
	var reasons []string
	blocked := false
	if in.ServerTrust == BlockedServer {
		reasons, blocked = append(reasons, "server "+in.Server+" is blocked in the trust list"), true
	}
	if policy == Deny {
		reasons, blocked = append(reasons, "the config denies the "+what+" of server "+in.Server+" ("+what+" = \"deny\")"), true
	}
	switch {
	case in.ServerTrust == Trusted:
	case in.Kind == KindResources && in.Fence.NoNetwork():
		reasons = append(reasons, "server "+in.Server+" is not trusted: what its resources hold is untrusted content; it is fenced with no network, so the URI you read goes no further")
	case in.Kind == KindResources:
		reasons = append(reasons, "server "+in.Server+" is not trusted: what its resources hold is untrusted content, and the URI you read goes to it")
	case in.Fence.NoNetwork():
		reasons = append(reasons, "server "+in.Server+" is not trusted: its prompts are untrusted content; it is fenced with no network, so their arguments go no further")
	default:
		reasons = append(reasons, "server "+in.Server+" is not trusted: its prompts are untrusted content, and their arguments go to it")
	}
	if in.Fence.Requested && !in.Fence.Applied {
		reasons = append(reasons, fenceReason(in.Fence, in.ServerTrust))
	}
	if labels != 0 {
		reasons = append(reasons, "server "+in.Server+" is labelled "+labels.words())
	}
	c := Classification{Tier: TierRead, Effective: Effective{ReadOnly: true}, Legs: legs.legs(), Action: tierAction}
	if blocked {
		c.Tier, c.Action = TierBlocked, Deny
	} else {
		if policy != ActionUnset {
			c.Action = policy
			reasons = append(reasons, "the config says "+what+" = \""+policy.String()+"\" for server "+in.Server)
		} else {
			reasons = append(reasons, "reading "+what+" is read tier: "+tierAction.String()+" by the read tier's policy")
		}
	}
	c.Reasons = reasons
	return c
}

// maxSubjectBytes bounds the URI or prompt name a taint sentence quotes.
const maxSubjectBytes = 200

// subjectPhrase names what a channel taint came from: `resource "URI" of server X`,
// `prompt "NAME" of server X`, or `completion values for "NAME" of server X`, with
// the verb of the sentence. The subject is
// quoted (control characters escaped) and cut after maxSubjectBytes bytes.
func subjectPhrase(t Taint) string {
	subj := t.Subject
	cut := ""
	if len(subj) > maxSubjectBytes {
		cut = "…"
		subj = subj[:maxSubjectBytes]
	}
	q := strconv.Quote(subj) + cut
	switch t.Channel {
	case ChannelResource:
		return "resource " + q + " of server " + t.By.Server + " returned untrusted content"
	case ChannelPrompt:
		return "prompt " + q + " of server " + t.By.Server + " is untrusted content"
	}
	return "completion values for " + q + " of server " + t.By.Server + " are untrusted content"
}

// channelTaint reports whether t came from a channel rather than a tool call.
func channelTaint(t Taint) bool {
	switch t.Channel {
	case ChannelResource, ChannelPrompt, ChannelCompletion:
		return true
	}
	return false
}

// CountMembers counts the members of a leg in words: "3 tools", "1 tool and 2
// channels" (a server's resources or prompts are no tool).
func CountMembers(qualified []string) string {
	channels := 0
	for _, q := range qualified {
		if LegName(q) != q {
			channels++
		}
	}
	tools := len(qualified) - channels
	n := func(k int, what string) string {
		if k == 1 {
			return "1 " + what
		}
		return strconv.Itoa(k) + " " + what + "s"
	}
	switch {
	case channels == 0:
		return n(tools, "tool")
	case tools == 0:
		return n(channels, "channel")
	}
	return n(tools, "tool") + " and " + n(channels, "channel")
}

// LegName is how a member of a hazard's leg is shown to a person: a tool by its
// qualified name, a channel as "SERVER resources" or "SERVER prompts" (the synthetic
// tool names resources/read and prompts/get mean nothing to a reader: a person reads
// "notes resources as a private-data source"). Machine output keeps the qualified
// name.
func LegName(qualified string) string {
	if s, ok := strings.CutSuffix(qualified, "__"+ResourceReadTool); ok {
		return s + " resources"
	}
	if s, ok := strings.CutSuffix(qualified, "__"+PromptGetTool); ok {
		return s + " prompts"
	}
	return qualified
}
