package session

import (
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// SetFence records f as the launcher's report for server, as the launcher does
// before it starts the process.
func SetFence(m *Manager, server string, f trust.Fence) { m.servers[server].setFence(f) }

// SetConfigFence makes the config's sandbox of every server read as f(server)
// until the test ends.
func SetConfigFence(t interface{ Cleanup(func()) }, f func(config.Server) trust.Fence) {
	old := configFence
	configFence = f
	t.Cleanup(func() { configFence = old })
}
