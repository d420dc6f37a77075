package session

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/conn"
	"github.com/airlock-mcp/airlock/trust"
)

// The methods below make the Manager the gateway's host (gateway.Host): each
// forwards one thing the gateway needs of the approval engine, so the gateway never
// holds the engine (whose Answer and ClearTaint are the person's alone).

// CallTool is Call for the gateway: the tool's result when the call ran, else the
// error.
func (m *Manager) CallTool(ctx context.Context, req model.CallRequest) (*mcp.CallToolResult, error) {
	out, err := m.Call(ctx, req)
	if err != nil {
		return nil, err
	}
	return out.Result, nil
}

// NewCallID is Engine().NewCallID.
func (m *Manager) NewCallID() string { return m.engine.NewCallID() }

// Limits is Engine().Limits.
func (m *Manager) Limits() config.Limits { return m.engine.Limits() }

// Pending is Engine().Pending.
func (m *Manager) Pending() []*model.Pending { return m.engine.Pending() }

// MarkTainted is Engine().MarkTainted.
func (m *Manager) MarkTainted(ctxName string, t trust.Taint) { m.engine.MarkTainted(ctxName, t) }

// MoveTaints is Engine().MoveTaints.
func (m *Manager) MoveTaints(to string, from func(ctxName string) bool) ([]string, error) {
	return m.engine.MoveTaints(to, from)
}

// NoteClient is Engine().NoteClient.
func (m *Manager) NoteClient(ctxName, client string) { m.engine.NoteClient(ctxName, client) }

// EndContext is Engine().EndContext.
func (m *Manager) EndContext(ctxName string) { m.engine.EndContext(ctxName) }

// AgentHistories is where the gateway keeps each agent session's protocol
// messages (nil when the history is off).
func (m *Manager) AgentHistories() *conn.AgentHistories { return m.agentHist }

// nameBudget is [gateway] name_budget, or the default.
func (m *Manager) nameBudget() int {
	if g := m.cfg.Gateway; g != nil {
		return trust.ServedNameBudget(g.NameBudget)
	}
	return trust.DefaultNameBudget
}
