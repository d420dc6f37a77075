package approval

import (
	"fmt"
	"sort"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"

	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/trust"
)

// Grant is a person's "allow this tool for this context": later calls to the tool in
// that context run without a question. A grant binds what it was given for: the
// tool's fingerprint, tier, server trust and policy at the moment of the answer. Any
// change to those ends it (audited), so a rug pull, a pin accepted since, a trust or
// policy change all bring the question back. A destructive tool is never granted.
type Grant struct {
	Context string
	Ref     trust.Ref
	// Scope is what the grant covers: "every call to this tool in this context".
	Scope string
	At    time.Time
	// By is who granted it ("person") and CallID the call whose answer did.
	By     string
	CallID string
	// The binding: what the tool was when granted.
	Fingerprint string
	Tier        trust.Tier
	Trust       trust.ServerTrust
	Policy      trust.Action

	tool      model.ToolInfo  // as granted, for ToolChanges
	endReason string          // set when the grant is found no longer binding
	endBy     trust.DecidedBy // pin or policy, with endReason
}

const grantScope = "every call to this tool in this context"

// record is the audit record of a grant given, revoked or ended; by is who ended it.
func (g *Grant) record(kind, reason string, by trust.DecidedBy) audit.Record {
	return audit.Record{Kind: kind, CallID: g.CallID, Context: g.Context, Server: g.Ref.Server, Tool: g.Ref.Tool,
		Tier: g.Tier.String(), DecidedBy: string(by), Reason: reason}
}

// grant records a grant for the tool as it is now, audited.
func (e *Engine) grant(ctxName, callID string, tool model.ToolInfo) {
	k := ContextKey(ctxName)
	g := &Grant{Context: k, Ref: tool.Ref, Scope: grantScope, At: e.now(), By: string(trust.DecidedByPerson), CallID: callID,
		Fingerprint: tool.Fingerprint, Tier: tool.Class.Tier, Trust: tool.ServerTrust, Policy: tool.Class.Action, tool: tool}
	e.mu.Lock()
	if e.grants[k] == nil {
		e.grants[k] = map[trust.Ref]*Grant{}
	}
	e.grants[k][tool.Ref] = g
	e.mu.Unlock()
	e.audit(g.record("grant", "allowed "+tool.Ref.Qualified()+" for context "+k+": "+grantScope, trust.DecidedByPerson))
}

// grantForLocked reports whether a grant allows tool in context k. A grant whose tool
// changed is removed and returned as ended (the caller audits it outside e.mu).
func (e *Engine) grantForLocked(k string, tool model.ToolInfo) (bool, *Grant) {
	g := e.grants[k][tool.Ref]
	if g == nil {
		return false, nil
	}
	if changes := ToolChanges(g.tool, tool); len(changes) > 0 {
		delete(e.grants[k], tool.Ref)
		g.endReason = ChangedSentence(tool.Ref, "it was granted", changes)
		g.endBy = ChangedBy(g.tool, tool)
		return false, g
	}
	return tool.Class.Tier < trust.TierDestructive, nil
}

// Grants lists every standing grant, by context then tool.
func (e *Engine) Grants() []Grant {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Grant
	for _, gs := range e.grants {
		for _, g := range gs {
			out = append(out, *g)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Context != out[j].Context {
			return out[i].Context < out[j].Context
		}
		return out[i].Ref.Qualified() < out[j].Ref.Qualified()
	})
	return out
}

// Revoke ends one grant (the person revoked it), audited. It fails when there is no
// such grant.
func (e *Engine) Revoke(ctxName string, ref trust.Ref) error {
	k := ContextKey(ctxName)
	e.mu.Lock()
	g := e.grants[k][ref]
	delete(e.grants[k], ref)
	e.mu.Unlock()
	if g == nil {
		return fmt.Errorf("context %s has no grant for %s", k, ref.Qualified())
	}
	e.audit(g.record("revoke", "the person revoked the grant of "+ref.Qualified()+" for context "+k, trust.DecidedByPerson))
	return nil
}

// NoteClient remembers the client name an agent context gave (for the Grants view).
func (e *Engine) NoteClient(ctxName, client string) {
	if client == "" {
		return
	}
	k := ContextKey(ctxName)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.clients == nil {
		e.clients = map[string]string{}
	}
	if _, ok := e.clients[k]; !ok && len(e.clients) >= maxClientNames {
		return
	}
	e.clients[k] = client
}

// maxClientNames bounds the client names kept: one per agent context seen.
const maxClientNames = 4096

// ContextClient is the client name an agent context gave, as given (server- and
// agent-controlled text: escape it), or "" when this run has not seen it (the
// context's name still holds a cut of it).
func (e *Engine) ContextClient(ctxName string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.clients[ContextKey(ctxName)]
}

func sortedGrants(gs map[trust.Ref]*Grant) []*Grant {
	out := make([]*Grant, 0, len(gs))
	for _, g := range gs {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref.Qualified() < out[j].Ref.Qualified() })
	return out
}

// audit writes one of the engine's own records, best effort.
func (e *Engine) audit(r audit.Record) {
	if e.record != nil {
		r.TS = e.now().UTC()
		_ = e.record(r)
	}
}
