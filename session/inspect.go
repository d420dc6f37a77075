package session

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Inspector's controls of a running connection: ping and the server's log level.
// Neither calls a tool nor reads a channel, so neither is decided by the engine; each
// is a message of the protocol itself, kept in the server's history like any other.

// connected is the server's current session, or errNotReady.
func (m *Manager) connected(name string) (*server, *mcp.ClientSession, error) {
	s, ok := m.servers[name]
	if !ok {
		return nil, nil, fmt.Errorf("no server %q", name)
	}
	s.mu.Lock()
	cs := s.cs
	s.mu.Unlock()
	if cs == nil {
		return nil, nil, fmt.Errorf("%s: %w", name, errNotReady)
	}
	return s, cs, nil
}

// Ping sends the server a ping and returns how long its answer took (the round trip,
// on the monotonic clock). It is bounded by the server's call timeout.
func (m *Manager) Ping(ctx context.Context, name string) (time.Duration, error) {
	s, cs, err := m.connected(name)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	defer cancel()
	start := time.Now()
	if err := cs.Ping(ctx, nil); err != nil {
		return 0, fmt.Errorf("pinging %s: %w", name, err)
	}
	return time.Since(start), nil
}

// LogLevels are the levels of logging/setLevel, least severe first.
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// SetLogLevel asks a server that declares logging to send its log messages from
// level up (logging/setLevel); they arrive as notifications/message, shown in the
// logs and the history.
func (m *Manager) SetLogLevel(ctx context.Context, name, level string) error {
	if !slices.Contains(LogLevels, level) {
		return fmt.Errorf("no log level %q (one of %v)", level, LogLevels)
	}
	s, cs, err := m.connected(name)
	if err != nil {
		return err
	}
	//lint:ignore SA1019 servers before protocol 2026-07-28 still log this way
	if r := cs.InitializeResult(); r == nil || r.Capabilities == nil || r.Capabilities.Logging == nil {
		return fmt.Errorf("%s declares no logging capability", name)
	}
	ctx, cancel := context.WithTimeout(ctx, s.callTimeout())
	defer cancel()
	//lint:ignore SA1019 servers before protocol 2026-07-28 still log this way
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(level)}); err != nil {
		return fmt.Errorf("setting the log level of %s: %w", name, err)
	}
	return nil
}
