package gateway

import (
	"context"
	"crypto/subtle"
	"log"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
)

// Who an agent is, is airlock's word: the token it presented when it opened its
// session. The client name it gives in initialize is only a label (the Grants view,
// the audit's client field); two agents with one token share one taint and one set of
// grants, whatever they call themselves, and a token cannot reach a session another
// token opened.

// AgentContext is the taint and grant context of the agents that present the token
// named tokenName (DefaultTokenName for gateway.token): "token:NAME". It is not the
// HTTP session, so reconnecting or restarting airlock does not clean a context whose
// conversation holds untrusted text, and not the client name, which any holder of
// the token may choose.
func AgentContext(tokenName string) string { return "token:" + tokenName }

// legacyAgentContext reports whether k is an agent context as airlock named them
// before named tokens, agent-CLIENT-HASH: the client name cut to at most 24 of
// [A-Za-z0-9._-] and 8 lowercase hex digits of SHA-256(token, NUL, client name).
func legacyAgentContext(k string) bool {
	rest, ok := strings.CutPrefix(k, "agent-")
	if !ok || len(rest) < 9 || len(rest) > 24+9 || rest[len(rest)-9] != '-' {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case i >= len(rest)-8:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		case i == len(rest)-9:
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// adoptLegacyTaints moves the taint of every context named the old way into the
// default token's context: before named tokens every agent of a state dir presented
// the one default token, so those taints are its agents', and no agent can reach an
// old name any more. Moving never clears: the earliest cause is kept.
func (g *Gateway) adoptLegacyTaints() {
	moved, err := g.m.MoveTaints(AgentContext(DefaultTokenName), legacyAgentContext)
	switch {
	case err != nil:
		g.note("the taints of agent contexts named by client name could not be moved to " + AgentContext(DefaultTokenName) + ": " + err.Error())
	case len(moved) > 0:
		g.note("the taint of " + moved[0] + plural(len(moved)-1) + " (agent contexts named by client name, from an earlier airlock) now taints " + AgentContext(DefaultTokenName))
	}
}

func plural(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return " and 1 other context"
	}
	return " and " + strconv.Itoa(n) + " other contexts"
}

// note is one line of the gateway's own notes (Options.Log).
func (g *Gateway) note(s string) {
	if g.opts.Log != nil {
		g.opts.Log(s)
		return
	}
	log.Print("airlock gateway: " + s)
}

// owner is the token that opened an agent session: its name and the SHA-256 of its
// value. The value counts, not only the name: a named token revoked and added again,
// or the default token rotated, is another token, and the old one's sessions end.
type owner struct {
	name string
	sum  [32]byte
}

// owners remembers which token opened each agent session.
type owners struct {
	mu  sync.Mutex
	by  map[string]owner     // session id -> its token
	at  map[string]time.Time // when it was bound
	now func() time.Time
}

func newOwners() *owners {
	return &owners{by: map[string]owner{}, at: map[string]time.Time{}, now: time.Now}
}

func (o *owners) bind(id string, tok owner) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.by[id]; !ok {
		o.by[id], o.at[id] = tok, o.now()
	}
}

func (o *owners) of(id string) (owner, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	tok, ok := o.by[id]
	return tok, ok
}

// prune forgets the sessions that are gone: not in present and bound a while ago
// (a session being opened is bound before go-sdk lists it... or after: either way
// it is listed well within the grace).
func (o *owners) prune(present map[string]bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for id := range o.by {
		if !present[id] && o.now().Sub(o.at[id]) > 10*time.Second {
			delete(o.by, id)
			delete(o.at, id)
		}
	}
}

// bindOnHeader wraps w so that the session a request opens is bound (bind) to the
// request's token as soon as the answer's header (which names the session) is
// written, before any byte of it leaves: the agent cannot send its next request
// before the gateway knows whose session it is. A flush writes the header too, so
// it binds first.
func bindOnHeader(w http.ResponseWriter, bind func(id string)) http.ResponseWriter {
	bound := false
	return newHookWriter(w, func() {
		if bound {
			return
		}
		if id := w.Header().Get("Mcp-Session-Id"); id != "" {
			bound = true
			bind(id)
		}
	})
}

// agentOf is the context and client name of the agent behind an agent session, and
// whether its token is still accepted. A session whose token is not known (not yet
// bound, or revoked) has ok false: nothing of it may be decided.
func (g *Gateway) agentOf(ss *mcp.ServerSession) (ctxName, client string, ok bool) {
	client = "agent"
	if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil && ip.ClientInfo.Name != "" {
		client = ip.ClientInfo.Name
	}
	tok, known := g.owners.of(ss.ID())
	if !known {
		return AgentContext("?"), client, false
	}
	ctxName = AgentContext(tok.name)
	g.m.NoteClient(ctxName, client)
	return ctxName, client, g.tokenLive(tok)
}

// acceptedAgent is agentOf for a request an agent makes: when the session's token
// is accepted, the session is watched (watchSession) and err is nil; when it is not,
// err is errNotAccepted and the request must be refused. A request boundToRequester
// accepted carries that answer in ctx (withAccepted) and is not looked at again on
// its way to its handler: a tool call's, read's and prompt get's last look is
// stillAccepted's, after its decision is on disk, and a subscription's when its turn
// comes (it may wait for another's); a completion, which nothing makes wait, goes on
// from the binding's look.
func (g *Gateway) acceptedAgent(ctx context.Context, ss *mcp.ServerSession) (ctxName, client string, err error) {
	if a, ok := ctx.Value(acceptedKey{}).(accepted); ok && ss != nil && a.session == ss.ID() {
		return a.ctxName, a.client, nil
	}
	ctxName, client, ok := g.agentOf(ss)
	if !ok {
		return ctxName, client, errNotAccepted
	}
	g.watchSession(ss, ctxName)
	return ctxName, client, nil
}

// accepted is acceptedAgent's answer for a session, carried by a request's context.
type accepted struct{ session, ctxName, client string }

type acceptedKey struct{}

// withAccepted is ctx carrying acceptedAgent's answer for ss.
func withAccepted(ctx context.Context, ss *mcp.ServerSession, ctxName, client string) context.Context {
	return context.WithValue(ctx, acceptedKey{}, accepted{session: ss.ID(), ctxName: ctxName, client: client})
}

// tokenLive reports whether the token that opened a session is accepted now: the
// default token while gateway.token holds that value, a named token while the
// tokens file lists that value under that name.
func (g *Gateway) tokenLive(tok owner) bool {
	if tok.name == DefaultTokenName {
		cur := g.token.current()
		if cur == nil {
			return false
		}
		sum := tokenSum(cur)
		return subtle.ConstantTimeCompare(sum[:], tok.sum[:]) == 1
	}
	return g.named.live(tok.name, tok.sum)
}

// stillAccepted is the last check of a call before it is forwarded
// (model.CallRequest.StillAccepted): the tokens are read again, so a revoke or a
// rotation that returned before the person allowed the call is seen.
func (g *Gateway) stillAccepted(ss *mcp.ServerSession) func() error {
	return func() error {
		tok, known := g.owners.of(ss.ID())
		if !known {
			return model.ErrTokenRevoked
		}
		if tok.name != DefaultTokenName {
			g.lookAtTokens() // the default token's file is read by tokenLive itself
		}
		if g.tokenLive(tok) {
			return nil
		}
		return model.ErrTokenRevoked
	}
}

// currentTokens is the SHA-256 of each accepted token's value now, by name.
func (g *Gateway) currentTokens() map[string][32]byte {
	cur := g.named.current()
	if tok := g.token.current(); tok != nil {
		cur[DefaultTokenName] = tokenSum(tok)
	}
	return cur
}

// lookAtTokens re-reads the tokens file when it changed; a change wakes the revoke
// loop at once.
func (g *Gateway) lookAtTokens() {
	if !g.named.refresh() {
		return
	}
	g.noteTokensProblem()
	select {
	case g.tokensChanged <- struct{}{}:
	default:
	}
}

// noteTokensProblem says, once per problem, why named tokens are refused.
func (g *Gateway) noteTokensProblem() {
	err := g.named.Problem()
	g.tokensNoteMu.Lock()
	last := g.tokensNote
	g.tokensNote = ""
	if err != nil {
		g.tokensNote = err.Error()
	}
	now := g.tokensNote
	g.tokensNoteMu.Unlock()
	switch {
	case now != "" && now != last:
		g.note("named agent tokens are refused until this is fixed (the default token still works; their sessions end): " + now)
	case now == "" && last != "":
		g.note("named agent tokens are accepted again: " + g.opts.TokensFile + " reads")
	}
}

// revokeLoop ends the sessions of revoked tokens: every RevokeEvery, and at once
// when a request saw the tokens file change.
func (g *Gateway) revokeLoop() {
	g.loop(g.opts.RevokeEvery, g.tokensChanged, func(ticked bool) {
		if ticked {
			g.lookAtTokens()
		}
		g.endRevoked()
	})
}

// endRevoked ends every session whose token is no longer accepted (revoked, or its
// name now holds another value, or the default token rotated): its calls are
// withdrawn first (model.ErrTokenRevoked: a waiting question is withdrawn and
// nothing of the call runs), then the session is closed. The grants of a token's
// context end whenever its value changes or goes, even when no session of the old
// value is open: a token added again under a revoked one's name never inherits what
// was granted to the old. While the tokens file cannot be read every named token
// counts as revoked; while gateway.token cannot, the default token does.
func (g *Gateway) endRevoked() {
	present := map[string]bool{}
	var ended []*mcp.ServerSession
	names := map[string]bool{}
	cur := g.currentTokens() // the files read once for every session
	for ss := range g.srv.Sessions() {
		id := ss.ID()
		present[id] = true
		tok, known := g.owners.of(id)
		if sum, ok := cur[tok.name]; !known || ok && sum == tok.sum {
			continue
		}
		ended = append(ended, ss)
		names[tok.name] = true
	}
	g.seenMu.Lock()
	for name, sum := range g.seen {
		if now, ok := cur[name]; !ok || now != sum {
			names[name] = true
		}
	}
	g.seen = cur
	g.seenMu.Unlock()
	// Every ended session's calls are cancelled first, then the grants end (at
	// once; their records can wait for the audit log's lock, held by another
	// airlock), then the sessions are closed, each on its own: a Close waits for
	// the session's handlers, which can wait for that lock too, and neither a name
	// added again meanwhile nor the other sessions may wait with it.
	for _, ss := range ended {
		g.requesters.endSessionWith(ss.ID(), model.ErrTokenRevoked)
	}
	for name := range names {
		g.m.EndContext(AgentContext(name))
	}
	for _, ss := range ended {
		g.closeEnded(ss)
	}
	g.owners.prune(present)
	g.m.AgentHistories().EndAbsent(present, 10*time.Second)
}

// closeEnded closes ss, a session whose token is no longer accepted, in the
// background, once: a later look that finds it still open while its Close waits
// for its handlers does not close it again.
func (g *Gateway) closeEnded(ss *mcp.ServerSession) {
	id := ss.ID()
	g.closingMu.Lock()
	if g.closing[id] {
		g.closingMu.Unlock()
		return
	}
	if g.closing == nil {
		g.closing = map[string]bool{}
	}
	g.closing[id] = true
	g.closingMu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		_ = ss.Close()
		g.closingMu.Lock()
		delete(g.closing, id)
		g.closingMu.Unlock()
	}()
}
