package session

import (
	"runtime"
	"slices"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/conn"
	"github.com/airlock-mcp/airlock/trust"
)

// setFence records what the launcher reported of the sandbox of the process it is
// about to start (or did not start): the snapshot shows it and classification
// reads it (trust.Classify's Tool.Fence) from the next build on. It takes s.mu, so
// call it without it held, before the connection lists tools. The zero Fence is a
// server with no sandbox asked for. The launcher's report reaches it through
// setFenceOf in (*server).connect, on every start, refused and failed ones too.
func (s *server) setFence(f trust.Fence) { s.setFenceOf(0, f) }

// setFenceOf is setFence for the start of connection gen: a report that comes
// after a newer start began is dropped (gen 0: always set).
func (s *server) setFenceOf(gen uint64, f trust.Fence) {
	f.Read, f.Write = slices.Clone(f.Read), slices.Clone(f.Write)
	s.mu.Lock()
	if gen != 0 && s.gen != gen {
		s.mu.Unlock()
		return
	}
	s.fence = f
	s.infoVer++ // the snapshot cache key: every tool is classified again
	s.mu.Unlock()
	s.m.dropSnapshot()
	s.m.notify()
}

// fenceableOS says this system has a launcher that fences (Landlock, Seatbelt);
// on Windows a sandbox is refused.
var fenceableOS = runtime.GOOS != "windows"

// fenceable reports whether a sandbox can be applied to s: a stdio server airlock
// starts itself, on a system that fences. Only then is a fence proposed as a fix.
func (s *server) fenceable() bool {
	if _, inProcess := s.m.opts.InProcess[s.cfg.Name]; inProcess {
		return false
	}
	return fenceableOS && s.cfg.Transport == config.TransportStdio
}

// configFence is the sandbox the config asks for, as a Fence that is not applied
// (Requested, Network, Read, Write): what `check --snapshot` compares a recorded
// sandbox with, since nothing is launched there. The zero Fence: none asked for.
// It reads the server's [servers.NAME.sandbox] table.
var configFence = func(s config.Server) trust.Fence {
	f := conn.RequestedFence(s)
	f.Detail = ""
	return f
}
