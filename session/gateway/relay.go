package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

// The relay: what the gateway serves agents besides tools (docs/relay.md). Every
// server that is ready and whose channel is not denied has its resources, resource
// templates and prompts served under relay names (relayuri.go); a read, a get or a
// completion is read back into the server's own name and goes through the Manager
// (ReadResource, GetPrompt, Complete, Subscribe) in the agent's context, so the
// approval engine asks, taints and audits it exactly as it does a call. Sampling,
// elicitation and roots are never relayed to agents.

// relayed is what the gateway serves of the servers' resources, templates and prompts;
// the Gateway's mu guards it.
type relayed struct {
	resources map[string]string      // relay URI -> key of what the agent sees
	templates map[string]string      // relay template -> key
	prompts   map[string]relayPrompt // served name (SERVER__NAME, or mapped) -> the server's prompt
	// subs holds the relay URIs each agent session subscribed to; a server is told
	// to unsubscribe when no session holds the URI any more.
	subs map[string]map[string]bool

	// updated holds relay URIs whose resources/updated waits to be sent; a flood of
	// notifications for one URI is sent once.
	updated map[string]bool
	wake    chan struct{}

	// gens is each server's connection generation at the last sync: a server that
	// reconnected has forgotten its subscriptions, and is asked again.
	gens map[string]uint64
}

type relayPrompt struct{ server, name, key string }

func newRelayed() relayed {
	return relayed{resources: map[string]string{}, templates: map[string]string{}, prompts: map[string]relayPrompt{},
		subs: map[string]map[string]bool{}, updated: map[string]bool{}, wake: make(chan struct{}, 1), gens: map[string]uint64{}}
}

// relayCapabilities are what the gateway declares: resources (with subscribe), prompts
// and completions, each with list_changed, whether or not any server offers them yet
// (a capability cannot be added after initialize).
func relayCapabilities(c *mcp.ServerCapabilities) {
	c.Resources = &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true}
	c.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	c.Completions = &mcp.CompletionCapabilities{}
}

// channelServed reports whether a server's channel of kind k is served to agents: the
// server is ready, declared the capability, and the channel is not blocked or denied.
func (g *Gateway) channelServed(snap *model.Snapshot, sv model.ServerInfo, k trust.ChannelKind) bool {
	offered := sv.OffersResources
	if k == trust.KindPrompts {
		offered = sv.OffersPrompts
	}
	if sv.Status != model.StatusReady || !offered {
		return false
	}
	ti, ok := g.m.LookupTool(snap, sv.Name, trust.ChannelTool(k))
	return ok && ti.Class.Tier != trust.TierBlocked && ti.Class.Action != trust.Deny
}

// syncRelay makes the served resources, templates and prompts match the snapshot;
// g.mu is held. go-sdk tells agents with resources/list_changed and
// prompts/list_changed. It returns what is not served and why.
func (g *Gateway) syncRelay(snap *model.Snapshot) []string {
	var skipped []string
	wantRes, wantTmpl, wantPrompt := map[string]bool{}, map[string]bool{}, map[string]bool{}
	g.resubscribe(snap)
	for _, sv := range snap.Servers {
		if g.channelServed(snap, sv, trust.KindResources) {
			for _, r := range sv.Resources {
				u := RelayURI(sv.Name, r.URI)
				if err := g.relayOne(g.relay.resources, wantRes, u, jsonKey(r), func() {
					g.srv.AddResource(&mcp.Resource{URI: u, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, Size: r.Size}, g.readHandler)
				}); err != nil {
					skipped = append(skipped, sv.Name+" resource "+strconv.QuoteToASCII(clip(r.URI))+": "+err.Error())
				}
			}
			for _, t := range sv.ResourceTemplates {
				u := RelayTemplate(sv.Name, t.URITemplate)
				if err := g.relayOne(g.relay.templates, wantTmpl, u, jsonKey(t), func() {
					g.srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: u, Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType}, g.readHandler)
				}); err != nil {
					skipped = append(skipped, sv.Name+" resource template "+strconv.QuoteToASCII(clip(t.URITemplate))+": "+err.Error())
				}
			}
		}
		if g.channelServed(snap, sv, trust.KindPrompts) {
			for _, p := range sv.Prompts {
				if !trust.ValidToolName(p.Name) {
					skipped = append(skipped, sv.Name+" prompt "+strconv.QuoteToASCII(clip(p.Name))+": name cannot be served to agents")
					continue
				}
				q, ok := snap.ServedPromptName(sv.Name, p.Name)
				if !ok {
					skipped = append(skipped, RelayPromptName(sv.Name, p.Name)+": every name within the name budget it could be served under is another prompt's")
					continue
				}
				// The server and name are in the key: a served name that now stands
				// for another prompt is registered again, with that prompt's handler.
				key := sv.Name + "\x00" + p.Name + "\x00" + jsonKey(p)
				wantPrompt[q] = true
				if old, ok := g.relay.prompts[q]; ok && old.key == key {
					continue
				}
				pr := &mcp.Prompt{Name: q, Title: p.Title, Description: p.Description}
				for _, a := range p.Arguments {
					pr.Arguments = append(pr.Arguments, &mcp.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
				}
				server, name := sv.Name, p.Name
				if err := g.serve(func() { g.srv.AddPrompt(pr, g.promptHandler(server, name, q)) }); err != nil {
					delete(wantPrompt, q)
					skipped = append(skipped, q+": "+err.Error())
					continue
				}
				g.relay.prompts[q] = relayPrompt{server: server, name: name, key: key}
			}
		}
	}
	if gone := goneKeys(g.relay.resources, wantRes); len(gone) > 0 {
		g.srv.RemoveResources(gone...)
	}
	if gone := goneKeys(g.relay.templates, wantTmpl); len(gone) > 0 {
		g.srv.RemoveResourceTemplates(gone...)
	}
	if gone := goneKeys(g.relay.prompts, wantPrompt); len(gone) > 0 {
		g.srv.RemovePrompts(gone...)
	}
	return skipped
}

// resubscribe asks every server that reconnected since the last sync to subscribe
// again to the URIs agents hold; g.mu is held, the requests run in the background.
func (g *Gateway) resubscribe(snap *model.Snapshot) {
	var again []string
	for _, sv := range snap.Servers {
		// A connection counts once it is ready with the resources capability
		// declared (which says whether the server takes subscriptions).
		if sv.Status != model.StatusReady || !sv.OffersResources {
			continue
		}
		old, seen := g.relay.gens[sv.Name]
		g.relay.gens[sv.Name] = sv.Gen
		if !seen || old == sv.Gen {
			continue
		}
		held := map[string]bool{}
		for _, subs := range g.relay.subs {
			for u := range subs {
				if server, _, err := ParseRelayURI(u); err == nil && server == sv.Name && !held[u] {
					held[u] = true
					again = append(again, u)
				}
			}
		}
	}
	if len(again) == 0 {
		return
	}
	sort.Strings(again)
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for _, u := range again {
			server, uri, _ := ParseRelayURI(u)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = g.m.SubscribeFor(ctx, model.HolderGateway, server, uri)
			cancel()
		}
	}()
}

// relayOne serves a resource or a template under u, whose key (what the agent sees
// of it) is key: u is wanted from now on, and unless served already holds key for
// u, add registers it with go-sdk (through serve) and served records key. When add
// cannot serve it, u is wanted no more and relayOne returns why.
func (g *Gateway) relayOne(served map[string]string, want map[string]bool, u, key string, add func()) error {
	want[u] = true
	if old, ok := served[u]; ok && old == key {
		return nil
	}
	if err := g.serve(add); err != nil {
		delete(want, u)
		return err
	}
	served[u] = key
	return nil
}

// goneKeys deletes from served every key not in want and returns them, sorted.
func goneKeys[V any](served map[string]V, want map[string]bool) []string {
	var gone []string
	maps.DeleteFunc(served, func(k string, _ V) bool {
		if want[k] {
			return false
		}
		gone = append(gone, k)
		return true
	})
	sort.Strings(gone)
	return gone
}

func jsonKey(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// clip cuts a server's string for a skipped-entry sentence.
func clip(s string) string {
	const most = 120
	if len(s) > most {
		return s[:most] + "…"
	}
	return s
}

// serve runs a go-sdk registration; go-sdk panics on a URI or template it cannot
// serve, which must not take the gateway down.
func (g *Gateway) serve(add func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("cannot be served: " + agentText(clip(toString(r))))
		}
	}()
	add()
	return nil
}

func toString(v any) string {
	if e, ok := v.(error); ok {
		return e.Error()
	}
	if s, ok := v.(string); ok {
		return s
	}
	return "invalid"
}

// relayMiddleware reads every resources/read itself (a resource link from a tool
// result names a resource the server need not list, and go-sdk would answer it "not
// found"), and makes the URI of resources/subscribe and unsubscribe the canonical
// relay URI, the one resources/updated is sent for.
func (g *Gateway) relayMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.ReadResourceRequest:
			if method == "resources/read" && r.Params != nil {
				return g.readHandler(ctx, r)
			}
		case *mcp.SubscribeRequest:
			if r.Params != nil {
				if server, uri, err := ParseRelayURI(r.Params.URI); err == nil {
					r.Params.URI = RelayURI(server, uri)
				}
			}
		case *mcp.UnsubscribeRequest:
			if r.Params != nil {
				if server, uri, err := ParseRelayURI(r.Params.URI); err == nil {
					r.Params.URI = RelayURI(server, uri)
				}
			}
		case *mcp.GetPromptRequest:
			if r.Params != nil {
				g.mu.Lock()
				_, served := g.relay.prompts[r.Params.Name]
				g.mu.Unlock()
				if !served {
					ctxName, client, _ := g.agentOf(r.Session)
					args, _ := json.Marshal(struct {
						Arguments map[string]string `json:"arguments"`
						Name      string            `json:"name"`
					}{r.Params.Arguments, r.Params.Name})
					g.m.AuditRefused(g.m.NewCallID(), model.CallRequest{Context: ctxName, Client: client, Tool: trust.PromptGetTool, Args: args},
						trust.DecidedByUnknownTool, "the gateway serves no prompt "+strconv.Quote(r.Params.Name))
				}
			}
		}
		return next(ctx, method, req)
	}
}

// readHandler reads one resource for an agent: the relay URI is read back into its
// server and the server's own URI, and the read goes through Manager.ReadResource in
// the agent's context.
func (g *Gateway) readHandler(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	ss := req.Session
	ctxName, client, err := g.acceptedAgent(ctx, ss)
	if err != nil {
		return nil, err
	}
	server, uri, err := ParseRelayURI(req.Params.URI)
	if err != nil {
		args, _ := json.Marshal(map[string]string{"uri": req.Params.URI})
		g.m.AuditRefused(g.m.NewCallID(), model.CallRequest{Context: ctxName, Client: client, Tool: trust.ResourceReadTool, Args: args},
			trust.DecidedByUnknownTool, err.Error())
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "airlock: " + err.Error() + "; read a URI the gateway lists or links to (" + relayPrefix + "SERVER/…)"}
	}
	callID := g.m.NewCallID()
	stop := g.waitingFor(ctx, req.Params.GetProgressToken(), ss, server, callID, "reading "+strconv.Quote(clip(uri))+" of "+server)
	out, err := g.m.ReadResource(ctx, model.ReadRequest{Context: ctxName, Client: client, Server: server, URI: uri, CallID: callID,
		StillAccepted: g.stillAccepted(ss)})
	stop()
	if err != nil {
		return nil, channelError(ctx, "read", err)
	}
	return relayRead(server, out.Result), nil
}

// promptHandler gets one prompt of server for an agent, through Manager.GetPrompt;
// served is the name the agent got it by.
func (g *Gateway) promptHandler(server, name, served string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		ss := req.Session
		ctxName, client, err := g.acceptedAgent(ctx, ss)
		if err != nil {
			return nil, err
		}
		args := json.RawMessage("{}")
		if len(req.Params.Arguments) > 0 {
			args, _ = json.Marshal(req.Params.Arguments)
		}
		callID := g.m.NewCallID()
		stop := g.waitingFor(ctx, req.Params.GetProgressToken(), ss, server, callID, "getting prompt "+served)
		out, err := g.m.GetPrompt(ctx, model.PromptRequest{Context: ctxName, Client: client, Server: server, Name: name, Served: served, Args: args, CallID: callID,
			StillAccepted: g.stillAccepted(ss)})
		stop()
		if err != nil {
			return nil, channelError(ctx, "prompt get", err)
		}
		return relayPromptResult(server, out.Result), nil
	}
}

// completeHandler answers completion/complete for a served prompt or resource
// template, through Manager.Complete.
func (g *Gateway) completeHandler(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	ss := req.Session
	ctxName, client, err := g.acceptedAgent(ctx, ss)
	if err != nil {
		return nil, err
	}
	p := req.Params
	cr := model.CompleteRequest{Context: ctxName, Client: client, Argument: p.Argument.Name, Value: p.Argument.Value,
		StillAccepted: g.stillAccepted(ss)}
	if p.Context != nil {
		cr.Resolved = p.Context.Arguments
	}
	g.mu.Lock()
	switch p.Ref.Type {
	case "ref/prompt":
		if pr, ok := g.relay.prompts[p.Ref.Name]; ok {
			cr.Server, cr.Prompt = pr.server, pr.name
		}
	case "ref/resource":
		if _, ok := g.relay.templates[p.Ref.URI]; ok {
			cr.Server, cr.Template, _ = ParseRelayTemplate(p.Ref.URI)
		}
	}
	g.mu.Unlock()
	if cr.Server == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "airlock: the gateway serves no " + agentText(clip(p.Ref.Type)) + " " + strconv.QuoteToASCII(clip(p.Ref.Name+p.Ref.URI))}
	}
	c, err := g.m.Complete(ctx, cr)
	if err != nil {
		return nil, channelError(ctx, "completion", err)
	}
	values := c.Values
	if values == nil {
		values = []string{}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: c.Total, HasMore: c.HasMore}}, nil
}

// subscribeHandler subscribes the server to a resource for an agent session, through
// Manager.SubscribeAgent.
func (g *Gateway) subscribeHandler(ctx context.Context, req *mcp.SubscribeRequest) error {
	ss := req.Session
	ctxName, client, err := g.acceptedAgent(ctx, ss)
	if err != nil {
		return err
	}
	server, uri, err := ParseRelayURI(req.Params.URI)
	if err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "airlock: " + err.Error()}
	}
	g.mu.Lock()
	mine := g.relay.subs[ss.ID()]
	full := len(mine) >= g.opts.MaxSubscriptions && !mine[req.Params.URI]
	g.mu.Unlock()
	if full {
		return &jsonrpc.Error{Code: relayDeniedCode, Message: "airlock denied this subscription: an agent session holds at most " + strconv.Itoa(g.opts.MaxSubscriptions) + " subscriptions; unsubscribe from one first"}
	}
	// The Manager refuses it from a tainted context, and taints on the server's error.
	if err := g.m.SubscribeAgent(ctx, model.SubscribeRequest{Context: ctxName, Client: client, Server: server, URI: uri,
		StillAccepted: g.stillAccepted(ss)}); err != nil {
		return channelError(ctx, "subscription", err)
	}
	g.mu.Lock()
	if g.relay.subs[ss.ID()] == nil {
		g.relay.subs[ss.ID()] = map[string]bool{}
	}
	g.relay.subs[ss.ID()][req.Params.URI] = true
	g.mu.Unlock()
	return nil
}

// unsubscribeHandler ends an agent session's subscription; the server is told once no
// agent session holds the URI.
func (g *Gateway) unsubscribeHandler(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	g.mu.Lock()
	delete(g.relay.subs[req.Session.ID()], req.Params.URI)
	last := !g.subscribedLocked(req.Params.URI)
	g.mu.Unlock()
	if !last {
		return nil
	}
	server, uri, err := ParseRelayURI(req.Params.URI)
	if err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "airlock: " + err.Error()}
	}
	if err := g.m.UnsubscribeFor(ctx, model.HolderGateway, server, uri); err != nil {
		return channelError(ctx, "unsubscription", err)
	}
	return nil
}

func (g *Gateway) subscribedLocked(u string) bool {
	for _, s := range g.relay.subs {
		if s[u] {
			return true
		}
	}
	return false
}

// endRelaySession drops an ended agent session's subscriptions and unsubscribes the
// servers from the URIs no other session holds.
func (g *Gateway) endRelaySession(id string) {
	g.mu.Lock()
	mine := g.relay.subs[id]
	delete(g.relay.subs, id)
	var last []string
	for u := range mine {
		if !g.subscribedLocked(u) {
			last = append(last, u)
		}
	}
	g.mu.Unlock()
	for _, u := range last {
		if server, uri, err := ParseRelayURI(u); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = g.m.UnsubscribeFor(ctx, model.HolderGateway, server, uri)
			cancel()
		}
	}
}

// resourceUpdated queues a server's resources/updated for the agents subscribed to it;
// it never blocks the server's reader.
func (g *Gateway) resourceUpdated(ev model.ResourceUpdated) {
	u := RelayURI(ev.Server, ev.URI)
	g.mu.Lock()
	held := g.subscribedLocked(u)
	if held {
		g.relay.updated[u] = true
	}
	g.mu.Unlock()
	if held {
		select {
		case g.relay.wake <- struct{}{}:
		default:
		}
	}
}

// updateLoop sends the queued resources/updated notifications; go-sdk sends each to
// the sessions subscribed to its URI.
func (g *Gateway) updateLoop() { g.loop(0, g.relay.wake, func(bool) { g.sendUpdates() }) }

// sendUpdates sends, in URI order, the resources/updated notifications queued since
// the last time, and empties the queue.
func (g *Gateway) sendUpdates() {
	g.mu.Lock()
	batch := make([]string, 0, len(g.relay.updated))
	for u := range g.relay.updated {
		batch = append(batch, u)
	}
	clear(g.relay.updated)
	g.mu.Unlock()
	sort.Strings(batch)
	for _, u := range batch {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = g.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: u})
		cancel()
	}
}

// waitingFor tells an agent that asked for progress that its request callID to
// server waits for a person (see tellWaiting); the returned func stops it.
func (g *Gateway) waitingFor(ctx context.Context, token any, ss *mcp.ServerSession, server, callID, what string) func() {
	if token == nil {
		return func() {}
	}
	var mu sync.Mutex
	var last float64
	return g.tellWaiting(ctx, server, callID, what, func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		last++
		_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: last, Message: msg})
	})
}

// channelError is a failed read, get or completion as an agent gets it: a denial says
// airlock denied it and why; any other error is escaped (it may hold the server's
// text).
func channelError(ctx context.Context, what string, err error) error {
	var denied *model.DeniedError
	switch {
	case errors.As(err, &denied):
		return &jsonrpc.Error{Code: relayDeniedCode, Message: "airlock denied this " + what + ": " + denied.Error()}
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return &jsonrpc.Error{Code: relayDeniedCode, Message: "airlock could not complete this " + what + ": " + agentText(err.Error())}
}

// MaxAgentSubscriptions is the default bound on the resources one agent session may
// subscribe to through the gateway (each is a subscription at a server and an entry
// kept here); Options.MaxSubscriptions sets another.
const MaxAgentSubscriptions = 1000

// relayDeniedCode is the JSON-RPC error code of a read, get or completion that was
// denied or failed (a server error in JSON-RPC's range; MCP defines none for this).
const relayDeniedCode = -32000

// relayRead is a read result as the agent gets it: every content's URI a relay URI of
// the server read. The server's result is not changed.
func relayRead(server string, res *mcp.ReadResourceResult) *mcp.ReadResourceResult {
	if res == nil {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}
	}
	cp := *res
	cp.Contents = copiesOf(res.Contents, func(rc *mcp.ResourceContents) { rc.URI = RelayURI(server, rc.URI) })
	return &cp
}

// relayPromptResult is a prompt's messages as the agent gets them: resource links and
// embedded resources name relay URIs. The server's result is not changed.
func relayPromptResult(server string, res *mcp.GetPromptResult) *mcp.GetPromptResult {
	if res == nil {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{}}
	}
	cp := *res
	cp.Messages = copiesOf(res.Messages, func(m *mcp.PromptMessage) {
		if m.Content != nil {
			m.Content = relayContent(server, []mcp.Content{m.Content})[0]
		}
	})
	return &cp
}

// copiesOf is a copy of each entry of xs that is not nil, in order, each changed by
// f: what xs points to is not changed. It is never nil.
func copiesOf[T any](xs []*T, f func(*T)) []*T {
	out := make([]*T, 0, len(xs))
	for _, x := range xs {
		if x == nil {
			continue
		}
		c := *x
		f(&c)
		out = append(out, &c)
	}
	return out
}
