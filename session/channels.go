package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/conn"
	"github.com/airlock-mcp/airlock/trust"
)

// The channels besides tool calls: reading a resource and getting a prompt are
// decided by the same engine as a call (docs/channels.md). Each is modelled as a
// synthetic tool of its server (trust.ResourceReadTool, trust.PromptGetTool),
// classified by trust.ClassifyChannel, and its arguments are the canonical JSON of
// what is shown ({"uri": …} or {"arguments": {…}, "name": …}): the question, the
// grant, the taint, the audit record and the forwarded request are all bound to
// those bytes.

// MaxContentBytes bounds what one resource read or prompt get hands on: the text and
// decoded blob bytes of every content together. A larger answer is refused with a
// sentence saying its size. (One JSON-RPC message is already bounded by
// MaxMessageBytes, 16 MiB, on every transport; this bound is lower so that what one
// read hands on, to the person or an agent, is at most 8 MiB, the size of the
// largest arguments a call may carry by default.)
const MaxContentBytes = 8 << 20

// maxPromptMessages bounds the messages of one prompts/get result.
const maxPromptMessages = 1000

// maxCompletionValues is the most completion values handed on (the spec's own cap).
const maxCompletionValues = 100

// errNoChannel is returned when a server does not offer resources or prompts.
var errNoChannel = errors.New("the server does not offer this")

// channelPolicy is the config's policy for a server's channel of this kind.
func channelPolicy(s *server, k trust.ChannelKind) trust.Action {
	if k == trust.KindPrompts {
		return s.cfg.Prompts
	}
	return s.cfg.Resources
}

// channelInfo is the synthetic tool a channel is decided as, for the server's trust
// st and sandbox fence. Its Fingerprint names the kind: there is no definition to pin, and what a yes
// covers beyond the channel is the canonical arguments (the URI, the prompt's name
// and arguments).
func (m *Manager) channelInfo(s *server, k trust.ChannelKind, st trust.ServerTrust, fence trust.Fence) model.ToolInfo {
	name := trust.ChannelTool(k)
	policy := channelPolicy(s, k)
	class := trust.ClassifyChannel(trust.ChannelInput{Server: s.cfg.Name, Kind: k, ServerTrust: st, ServerLabels: s.cfg.Labels, Policy: policy, Fence: fence}, m.cfg.Policy)
	hold := m.holdChannel(s, k, &class)
	ref := trust.Ref{Server: s.cfg.Name, Tool: name}
	return model.ToolInfo{
		Ref:         ref,
		Title:       string(k),
		Fingerprint: "channel:" + name,
		Class:       class,
		ServerTrust: st,
		Facts:       &model.ServerFacts{Env: s.envNames, Labels: s.cfg.Labels, Local: s.local(), Fence: fence, Fenceable: s.fenceable()},
		Policy:      policy,
		Channel:     k,
		Managed:     hold,
	}
}

// channels lists a server's channels that count in the hazards: a server that
// offers resources or prompts (and lists any) fills their legs like a tool; s.mu is
// held.
func (m *Manager) channels(s *server, st trust.ServerTrust) []model.ToolInfo {
	var out []model.ToolInfo
	c := s.catalog
	if c.offersResources && (len(c.resources) > 0 || len(c.templates) > 0) {
		out = append(out, m.channelInfo(s, trust.KindResources, st, s.fence))
	}
	if c.offersPrompts && len(c.prompts) > 0 {
		out = append(out, m.channelInfo(s, trust.KindPrompts, st, s.fence))
	}
	return out
}

// LookupTool finds a tool, or a channel's synthetic tool, as it is now: what a
// decision's last check and a waiting question compare against.
func (m *Manager) LookupTool(snap *model.Snapshot, server, name string) (model.ToolInfo, bool) {
	k, ok := trust.ChannelOf(name)
	if !ok {
		return snap.Tool(server, name)
	}
	s, ok := m.servers[server]
	if !ok {
		return model.ToolInfo{}, false
	}
	sv, ok := snap.Server(server)
	if !ok || sv.Status != model.StatusReady {
		return model.ToolInfo{}, false
	}
	return m.channelInfo(s, k, sv.Trust, sv.Fence), true
}

// channelCall is one read or get on its way through the engine.
type channelCall struct {
	req     model.CallRequest // Tool is the synthetic name, Args the canonical arguments
	kind    trust.ChannelKind
	channel string // the Taint.Channel
	subject string // the URI or prompt name, for the taint sentence
}

// runChannel decides a read or a get through the engine exactly like Manager.Call
// decides a call (questions, grants, taint, the last check under the publish lock,
// audit records before and after) and, when allowed, runs forward with the server's
// call timeout. It returns the call ID, the verdict, how long forward ran and
// whether the content tainted the context.
func (m *Manager) runChannel(ctx context.Context, cc channelCall, forward func(ctx context.Context, cs *mcp.ClientSession) error) (string, trust.Verdict, time.Duration, bool, error) {
	req := cc.req
	callID := m.callIDOf(req.CallID)
	m.engine.NoteClient(req.Context, req.Client)
	what := string(cc.kind) + " of " + req.Server
	s, ok := m.servers[req.Server]
	if !ok {
		err := fmt.Errorf("%s: no server %q", what, req.Server)
		m.AuditRefused(callID, req, trust.DecidedByUnknownTool, err.Error())
		return callID, trust.Verdict{}, 0, false, err
	}
	canon, err := trust.CanonicalArgs(req.Args, m.engine.Limits().MaxArgsBytes)
	if err != nil {
		err = fmt.Errorf("%s: %w", what, err)
		m.AuditRefused(callID, req, trust.DecidedByPolicy, err.Error())
		return callID, trust.Verdict{}, 0, false, err
	}
	req.Args = canon
	snap := m.Snapshot()
	sv, _ := snap.Server(req.Server)
	tool, ok := m.LookupTool(snap, req.Server, req.Tool)
	if !ok {
		m.AuditRefused(callID, req, trust.DecidedByPolicy, "server "+req.Server+" is not ready")
		return callID, trust.Verdict{}, 0, false, fmt.Errorf("%s: %w", what, errNotReady)
	}
	offered := sv.OffersResources
	if cc.kind == trust.KindPrompts {
		offered = sv.OffersPrompts
	}
	if !offered {
		m.AuditRefused(callID, req, trust.DecidedByPolicy, "server "+req.Server+" does not offer "+string(cc.kind))
		return callID, trust.Verdict{}, 0, false, fmt.Errorf("%s: %w (it declares no %s capability)", what, errNoChannel, cc.kind)
	}
	base := m.auditBase(callID, req, tool)
	d, err := m.engine.Authorize(ctx, callID, req, tool, s.local())
	if err != nil {
		_ = m.auditDecision(base, d)
		return callID, d.Verdict, 0, false, err
	}
	if d.Verdict.Action == trust.Allow {
		d, _ = m.recheck(ctx, req, tool, d)
	}
	if d.Verdict.Action != trust.Allow {
		_ = m.auditDecision(base, d)
		return callID, d.Verdict, 0, false, &model.DeniedError{Verdict: d.Verdict, Reason: d.PersonReason}
	}
	if err := m.auditDecision(base, d); err != nil {
		denied := trust.Verdict{Action: trust.Deny, By: trust.DecidedByPolicy, Reasons: append(d.Verdict.Reasons, "the audit log cannot be written, so the request is denied: "+err.Error())}
		return callID, denied, 0, false, &model.DeniedError{Verdict: denied}
	}
	s.mu.Lock()
	cs := s.cs
	s.mu.Unlock()
	if cs == nil {
		err := fmt.Errorf("%s: %w", what, errNotReady)
		m.auditChannelOutcome(base, 0, err)
		return callID, d.Verdict, 0, false, err
	}
	if err := m.lastLook(ctx, req, tool, d); err != nil {
		m.auditChannelOutcome(base, 0, err)
		var denied *model.DeniedError
		if errors.As(err, &denied) {
			return callID, denied.Verdict, 0, false, err
		}
		return callID, d.Verdict, 0, false, err
	}
	start := m.opts.Now()
	fctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	m.callStarted(req.Server, callID)
	err = forward(fctx, cs)
	m.callEnded(req.Server, callID)
	timedOut := fctx.Err() == context.DeadlineExceeded && ctx.Err() == nil
	cancel()
	dur := m.opts.Now().Sub(start)
	if err != nil {
		if timedOut {
			err = fmt.Errorf("%s: %w (%s)", what, ErrCallTimeout, s.callTimeout())
		} else {
			err = conn.RedactURLs(fmt.Errorf("%s: %w", what, err))
		}
	}
	m.auditChannelOutcome(base, dur, err)
	var bounded *boundError
	tainted := false
	// What the server sent reaches the caller: its content, or its error message.
	// A refusal by airlock's own bound hands on none of the server's text.
	if trust.Taints(tool.Class) && ctx.Err() == nil && !errors.As(err, &bounded) {
		ch := cc.channel
		if err != nil {
			ch = trust.ChannelError
		}
		m.engine.MarkTainted(req.Context, trust.Taint{By: tool.Ref, CallID: callID, At: m.opts.Now(), Channel: ch, Subject: cc.subject})
		tainted = true
	}
	return callID, d.Verdict, dur, tainted, err
}

// boundError is a result refused by one of airlock's bounds; none of the server's
// text is handed on.
type boundError struct{ msg string }

func (e *boundError) Error() string { return e.msg }

// auditChannelOutcome records how a forwarded read or get ended (best effort).
func (m *Manager) auditChannelOutcome(base *audit.Record, dur time.Duration, err error) {
	if base == nil {
		return
	}
	r := *base
	r.Kind, r.DurationMS, r.Outcome = "outcome", dur.Milliseconds(), "ok"
	switch {
	case errors.Is(err, ErrCallTimeout):
		r.Outcome, r.Error = "timeout", err.Error()
	case err != nil:
		r.Outcome, r.Error = "failed", err.Error()
	}
	r.TS = m.opts.Now().UTC()
	_ = m.opts.Audit.Append(r)
}

// finished reports a read or get as a CallFinished event (the Activity view).
func (m *Manager) finished(req model.CallRequest, start time.Time, callID string, v trust.Verdict, dur time.Duration, err error) {
	if canon, cerr := trust.CanonicalArgs(req.Args, m.engine.Limits().MaxArgsBytes); cerr == nil {
		req.Args = canon
	}
	var out *Outcome
	if v.Action == trust.Allow {
		out = &Outcome{CallID: callID, Verdict: v, Duration: dur, Result: &mcp.CallToolResult{}}
	}
	e := callFinished(req, m.Snapshot(), start, m.opts.Now(), out, err)
	e.Tier = trust.TierRead.String()
	m.events.push(e)
}

// ReadResource reads one resource through the engine: decided as the server's
// resources channel (policy `resources`, read tier, taint, grants, audit), bound to
// the URI as given. Content from an untrusted server, or one labelled
// untrusted-content, taints the request's context before it is returned. A result
// over MaxContentBytes is refused (and taints nothing).
func (m *Manager) ReadResource(ctx context.Context, req model.ReadRequest) (*model.ReadOutcome, error) {
	start := m.opts.Now()
	cr := model.CallRequest{Context: req.Context, Client: req.Client, Server: req.Server, Tool: trust.ResourceReadTool, CallID: req.CallID, StillAccepted: req.StillAccepted}
	if req.URI == "" || !utf8.ValidString(req.URI) {
		err := fmt.Errorf("reading a resource of %s: the URI must be non-empty UTF-8 text, got %s", req.Server, strconv.QuoteToASCII(req.URI))
		m.AuditRefused(m.engine.NewCallID(), cr, trust.DecidedByPolicy, err.Error())
		return nil, err
	}
	cr.Args, _ = json.Marshal(struct {
		URI string `json:"uri"`
	}{req.URI})
	var res *mcp.ReadResourceResult
	callID, v, dur, tainted, err := m.runChannel(ctx, channelCall{req: cr, kind: trust.KindResources, channel: trust.ChannelResource, subject: req.URI},
		func(ctx context.Context, cs *mcp.ClientSession) error {
			r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: req.URI})
			if err != nil {
				return err
			}
			if n := resourceBytes(r); n > MaxContentBytes {
				return &boundError{fmt.Sprintf("reading %s: the resource holds %d bytes; airlock hands on at most %d (MaxContentBytes)", strconv.Quote(req.URI), n, MaxContentBytes)}
			}
			res = r
			return nil
		})
	m.finished(cr, start, callID, v, dur, err)
	if err != nil {
		return nil, err
	}
	return &model.ReadOutcome{CallID: callID, Verdict: v, Result: res, Duration: dur, Tainted: tainted}, nil
}

func resourceBytes(r *mcp.ReadResourceResult) int64 {
	var n int64
	for _, c := range r.Contents {
		if c != nil {
			n += int64(len(c.Text) + len(c.Blob) + len(c.URI) + len(c.MIMEType))
		}
	}
	return n
}

// GetPrompt gets one prompt through the engine: decided as the server's prompts
// channel (policy `prompts`), bound to the name and the canonical arguments. A prompt
// of an untrusted server is untrusted content: it taints the context. Arguments must
// be a JSON object of strings.
func (m *Manager) GetPrompt(ctx context.Context, req model.PromptRequest) (*model.PromptOutcome, error) {
	start := m.opts.Now()
	cr := model.CallRequest{Context: req.Context, Client: req.Client, Server: req.Server, Tool: trust.PromptGetTool, CallID: req.CallID, StillAccepted: req.StillAccepted}
	if req.Served != (trust.Ref{Server: req.Server, Tool: req.Name}).Qualified() {
		cr.Served = req.Served
	}
	args := req.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	canon, err := trust.CanonicalArgs(args, m.engine.Limits().MaxArgsBytes)
	var strs map[string]string
	if err == nil {
		if uerr := json.Unmarshal(canon, &strs); uerr != nil {
			err = errors.New("prompt arguments must be a JSON object of strings")
		}
	}
	if err == nil && (req.Name == "" || !utf8.ValidString(req.Name)) {
		err = fmt.Errorf("the prompt name must be non-empty UTF-8 text, got %s", strconv.QuoteToASCII(req.Name))
	}
	if err != nil {
		err = fmt.Errorf("getting a prompt of %s: %w", req.Server, err)
		cr.Args = args
		m.AuditRefused(m.engine.NewCallID(), cr, trust.DecidedByPolicy, err.Error())
		return nil, err
	}
	cr.Args, _ = json.Marshal(struct {
		Arguments json.RawMessage `json:"arguments"`
		Name      string          `json:"name"`
	}{canon, req.Name})
	var res *mcp.GetPromptResult
	callID, v, dur, tainted, err := m.runChannel(ctx, channelCall{req: cr, kind: trust.KindPrompts, channel: trust.ChannelPrompt, subject: req.Name},
		func(ctx context.Context, cs *mcp.ClientSession) error {
			r, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: req.Name, Arguments: strs})
			if err != nil {
				return err
			}
			if len(r.Messages) > maxPromptMessages {
				return &boundError{fmt.Sprintf("prompt %s returned %d messages; airlock hands on at most %d", strconv.Quote(req.Name), len(r.Messages), maxPromptMessages)}
			}
			if n := promptBytes(r); n > MaxContentBytes {
				return &boundError{fmt.Sprintf("prompt %s returned %d bytes; airlock hands on at most %d (MaxContentBytes)", strconv.Quote(req.Name), n, MaxContentBytes)}
			}
			res = r
			return nil
		})
	m.finished(cr, start, callID, v, dur, err)
	if err != nil {
		return nil, err
	}
	return &model.PromptOutcome{CallID: callID, Verdict: v, Result: res, Duration: dur, Tainted: tainted}, nil
}

func promptBytes(r *mcp.GetPromptResult) int64 {
	n := int64(len(r.Description))
	for _, msg := range r.Messages {
		if msg == nil || msg.Content == nil {
			continue
		}
		if b, err := msg.Content.MarshalJSON(); err == nil {
			n += int64(len(b))
		}
	}
	return n
}

// Complete asks a server for completion values of a prompt's or a resource
// template's argument. Completions are metadata, decided without a question: they
// run unless the channel they complete is denied (policy deny, or a blocked server),
// and they are not audited (they run per key press). Values from a server whose
// channel is untrusted content taint the context like the channel's content would:
// they are the server's text, and an agent that receives them reads it.
func (m *Manager) Complete(ctx context.Context, req model.CompleteRequest) (*model.Completion, error) {
	s, ok := m.servers[req.Server]
	if !ok {
		return nil, fmt.Errorf("completing: no server %q", req.Server)
	}
	kind, ref := trust.KindPrompts, &mcp.CompleteReference{Type: "ref/prompt", Name: req.Prompt}
	subject := req.Prompt
	switch {
	case req.Prompt != "" && req.Template == "":
	case req.Template != "" && req.Prompt == "":
		kind, ref, subject = trust.KindResources, &mcp.CompleteReference{Type: "ref/resource", URI: req.Template}, req.Template
	default:
		return nil, errors.New("completing: name either a prompt or a resource template")
	}
	snap := m.Snapshot()
	sv, _ := snap.Server(req.Server)
	tool, ok := m.LookupTool(snap, req.Server, trust.ChannelTool(kind))
	if !ok {
		return nil, fmt.Errorf("completing for %s: %w", req.Server, errNotReady)
	}
	if !sv.Completions {
		return nil, fmt.Errorf("completing for %s: %w (it declares no completions capability)", req.Server, errNoChannel)
	}
	if tool.Class.Action == trust.Deny || tool.Class.Tier == trust.TierBlocked {
		return nil, &model.DeniedError{Verdict: trust.Verdict{Action: trust.Deny, By: trust.DecidedByPolicy, Reasons: tool.Class.Reasons}}
	}
	if err := m.taintedOutbound(req.Context, req.Client, tool, "a completion sends the text typed so far and the arguments already chosen"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	cs := s.cs
	s.mu.Unlock()
	if cs == nil {
		return nil, fmt.Errorf("completing for %s: %w", req.Server, errNotReady)
	}
	if req.StillAccepted != nil {
		// The last look before sending: the text typed so far is the agent's,
		// and its token must still be accepted when it goes.
		if err := req.StillAccepted(); err != nil {
			return nil, fmt.Errorf("completing for %s: %w, so the completion was not sent", req.Server, err)
		}
	}
	params := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: req.Argument, Value: req.Value}}
	if len(req.Resolved) > 0 {
		params.Context = &mcp.CompleteContext{Arguments: req.Resolved}
	}
	cctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	defer cancel()
	res, err := cs.Complete(cctx, params)
	if err != nil {
		// The server's error message reaches the caller: it taints like a read's or
		// a get's error message does.
		if trust.Taints(tool.Class) && ctx.Err() == nil {
			m.engine.MarkTainted(req.Context, trust.Taint{By: tool.Ref, At: m.opts.Now(), Channel: trust.ChannelError, Subject: subject})
		}
		return nil, conn.RedactURLs(fmt.Errorf("completing for %s: %w", req.Server, err))
	}
	c := &model.Completion{Values: res.Completion.Values, Total: res.Completion.Total, HasMore: res.Completion.HasMore}
	if len(c.Values) > maxCompletionValues {
		c.Values, c.HasMore = c.Values[:maxCompletionValues:maxCompletionValues], true
	}
	if trust.Taints(tool.Class) && len(c.Values) > 0 {
		m.engine.MarkTainted(req.Context, trust.Taint{By: tool.Ref, At: m.opts.Now(), Channel: trust.ChannelCompletion, Subject: subject})
		c.Tainted = true
	}
	return c, nil
}

// serverSaid marks an error that carries the server's own message (whoever hands it
// on hands on the server's text).
type serverSaid struct{ error }

func (e serverSaid) Unwrap() error { return e.error }

// taintedOutbound refuses a request that never asks (a completion, a subscription)
// when it would carry an agent's text from a tainted context to a channel that taint
// escalates (the channel of an untrusted server has the exfiltration leg): a read or
// a get there asks, and these must not be the way around that question. The
// person's own context is not refused: the person sees what they type.
func (m *Manager) taintedOutbound(ctxName, client string, tool model.ToolInfo, what string) error {
	if approval.ContextKey(ctxName) == model.PersonContext || !trust.EscalatedByTaint(tool.Class) {
		return nil
	}
	t := m.engine.Taint(ctxName)
	if !t.Tainted() {
		return nil
	}
	why := "this context is tainted (" + t.Reason() + ") and " + what + " to server " + tool.Ref.Server + ", which could carry it out; it never asks, so it is refused (a read or a get asks)"
	m.AuditRefused(m.engine.NewCallID(), model.CallRequest{Context: ctxName, Client: client, Server: tool.Ref.Server, Tool: tool.Ref.Tool}, trust.DecidedByTaint, why)
	return &model.DeniedError{Verdict: trust.Verdict{Action: trust.Deny, By: trust.DecidedByTaint, Reasons: []string{why}}}
}

// Subscribe asks a server for notifications/resources/updated about uri for the
// person; they arrive as ResourceUpdated events. It is refused when the server does
// not take subscriptions or its resources are denied. A subscription lasts for the
// current connection (a reconnect drops it).
func (m *Manager) Subscribe(ctx context.Context, server, uri string) error {
	return m.subscription(ctx, model.HolderPerson, server, uri, true, nil)
}

// Unsubscribe ends the person's subscription Subscribe made.
func (m *Manager) Unsubscribe(ctx context.Context, server, uri string) error {
	return m.subscription(ctx, model.HolderPerson, server, uri, false, nil)
}

// SubscribeFor and UnsubscribeFor subscribe and unsubscribe on behalf of holder. One
// upstream subscription serves every holder of a URI: the server is asked to
// subscribe when the first holder arrives and to stop when the last one leaves, so
// one holder letting go never ends another's updates.
func (m *Manager) SubscribeFor(ctx context.Context, holder, server, uri string) error {
	return m.subscription(ctx, holder, server, uri, true, nil)
}

// SubscribeAgent subscribes the gateway (HolderGateway) to a resource for an agent's
// context, with the two rules an agent's subscription meets and the person's does not
// need: from a tainted context to a channel that taint escalates it is refused
// (taintedOutbound: the URI is the agent's text, and the read of it would ask), and a
// server's error message, which reaches the agent, taints the context as a read's
// does. Both, with the caller's presence and req.StillAccepted, are looked at again
// when the subscription's turn comes: it may wait for another holder's round trip to
// the same server. SubscribeFor is the holder's bookkeeping alone (a reconnect
// resubscribes with it); every new subscription an agent asks for goes through here.
func (m *Manager) SubscribeAgent(ctx context.Context, req model.SubscribeRequest) error {
	tool, known := m.LookupTool(m.Snapshot(), req.Server, trust.ResourceReadTool)
	outbound := func() error {
		if !known {
			return nil
		}
		return m.taintedOutbound(req.Context, req.Client, tool, "a subscription sends the URI "+strconv.Quote(clipURI(req.URI)))
	}
	if err := outbound(); err != nil {
		return err
	}
	err := m.subscription(ctx, model.HolderGateway, req.Server, req.URI, true, func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		// The taint look (it takes the engine's lock) first, the token's last:
		// nothing that waits comes between it and the subscription sent.
		if err := outbound(); err != nil {
			return err
		}
		if req.StillAccepted != nil {
			return req.StillAccepted()
		}
		return nil
	})
	var said serverSaid // the server's own message, which reaches the agent
	if known && errors.As(err, &said) && trust.Taints(tool.Class) && ctx.Err() == nil {
		m.engine.MarkTainted(req.Context, trust.Taint{By: tool.Ref, At: m.opts.Now(), Channel: trust.ChannelError, Subject: req.URI})
	}
	return err
}

// clipURI cuts a URI for a sentence.
func clipURI(s string) string {
	const most = 120
	if len(s) > most {
		return s[:most] + "…"
	}
	return s
}

// UnsubscribeFor ends holder's subscription to uri (see SubscribeFor).
func (m *Manager) UnsubscribeFor(ctx context.Context, holder, server, uri string) error {
	return m.subscription(ctx, holder, server, uri, false, nil)
}

// subscription changes holder's subscription to uri of server; turn, when set, is
// asked once the change's turn comes (subMu held), and an error it returns stops it
// before anything changes or is sent.
func (m *Manager) subscription(ctx context.Context, holder, server, uri string, on bool, turn func() error) error {
	s, ok := m.servers[server]
	if !ok {
		return fmt.Errorf("subscribing: no server %q", server)
	}
	if uri == "" || !utf8.ValidString(uri) {
		return fmt.Errorf("subscribing to a resource of %s: the URI must be non-empty UTF-8 text", server)
	}
	snap := m.Snapshot()
	sv, _ := snap.Server(server)
	tool, ok := m.LookupTool(snap, server, trust.ResourceReadTool)
	if !ok {
		return fmt.Errorf("subscribing to a resource of %s: %w", server, errNotReady)
	}
	if !sv.Subscribe {
		return fmt.Errorf("subscribing to a resource of %s: %w (it does not take resources/subscribe)", server, errNoChannel)
	}
	if on && (tool.Class.Action == trust.Deny || tool.Class.Tier == trust.TierBlocked) {
		return &model.DeniedError{Verdict: trust.Verdict{Action: trust.Deny, By: trust.DecidedByPolicy, Reasons: tool.Class.Reasons}}
	}
	// subMu orders the holders' changes: the first-in and last-out decisions and
	// the round trips they lead to happen one at a time per server.
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if turn != nil {
		if err := turn(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	cs := s.cs
	holders := s.subscribed[uri]
	held := holders[holder]
	send := (on && len(holders) == 0) || (!on && held && len(holders) == 1)
	if cs != nil && !send && on {
		holders[holder] = true
	} else if cs != nil && !send && held {
		delete(holders, holder)
	}
	s.mu.Unlock()
	if cs == nil {
		return fmt.Errorf("subscribing to a resource of %s: %w", server, errNotReady)
	}
	if !send {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	defer cancel()
	var err error
	if on {
		err = cs.Subscribe(cctx, &mcp.SubscribeParams{URI: uri})
	} else {
		err = cs.Unsubscribe(cctx, &mcp.UnsubscribeParams{URI: uri})
	}
	if err != nil {
		return serverSaid{conn.RedactURLs(fmt.Errorf("subscribing to %s of %s: %w", strconv.Quote(uri), server, err))}
	}
	s.mu.Lock()
	if s.cs == cs {
		if on {
			if s.subscribed == nil {
				s.subscribed = map[string]map[string]bool{}
			}
			s.subscribed[uri] = map[string]bool{holder: true}
		} else {
			delete(s.subscribed, uri)
		}
	}
	s.mu.Unlock()
	return nil
}

// resourceUpdated hands on a resources/updated notification for a URI subscribed to
// on this connection; any other is dropped (a server cannot make airlock announce
// URIs nobody asked about).
func (s *server) resourceUpdated(gen uint64, p *mcp.ResourceUpdatedNotificationParams) {
	if p == nil {
		return
	}
	s.mu.Lock()
	ok := s.gen == gen && len(s.subscribed[p.URI]) > 0
	s.mu.Unlock()
	if ok {
		ev := model.ResourceUpdated{Server: s.cfg.Name, Gen: gen, URI: p.URI}
		s.m.events.push(ev)
		s.m.resourceUpdatedHooks(ev)
	}
}
