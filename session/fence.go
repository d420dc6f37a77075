package session

import (
	"runtime"
	"slices"
	"strings"

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

// RecordedSandbox is a RecordedServer's sandbox: what the config asked for and
// whether the launcher applied it where the snapshot was taken. It leaves out the
// launcher's detail (a kernel's Landlock ABI), which depends on the machine.
type RecordedSandbox struct {
	Requested bool     `json:"requested"`
	Applied   bool     `json:"applied"`
	Network   string   `json:"network,omitempty"`
	Read      []string `json:"read,omitempty"`
	Write     []string `json:"write,omitempty"`
}

// recordSandbox is f for a snapshot; nil when no sandbox was asked for.
func recordSandbox(f trust.Fence) *RecordedSandbox {
	if !f.Requested {
		return nil
	}
	return &RecordedSandbox{Requested: true, Applied: f.Applied, Network: f.Network, Read: slices.Clone(f.Read), Write: slices.Clone(f.Write)}
}

// sameRequest reports whether the recorded sandbox asked for what want asks for.
func (r *RecordedSandbox) sameRequest(want trust.Fence) bool {
	return r != nil && r.Requested && r.Network == want.Network && slices.Equal(r.Read, want.Read) && slices.Equal(r.Write, want.Write)
}

// offlineFence is the fence `check --snapshot` counts for a server whose config
// asks for want and whose snapshot recorded rec: the recorded one only while the
// config still asks for exactly that sandbox. A config that asks for another (or
// one the snapshot lacks) is unfenced until the snapshot is taken again, and a
// recorded sandbox the config no longer asks for is not counted: a pull request
// that drops the sandbox from the config is judged without it.
func offlineFence(want trust.Fence, rec *RecordedSandbox) trust.Fence {
	if !want.Requested {
		return trust.Fence{}
	}
	f := trust.Fence{Requested: true, Network: want.Network, Read: want.Read, Write: want.Write}
	switch {
	case rec == nil || !rec.Requested:
		f.Detail = "the snapshot records no sandbox for this server: take it again with `airlock snapshot`"
	case !rec.sameRequest(want):
		f.Detail = "the snapshot recorded another sandbox than the config asks for: take it again with `airlock snapshot`"
	case !rec.Applied:
		f.Detail = "not applied where the snapshot was taken"
	default:
		f.Applied, f.Detail = true, "applied where the snapshot was taken"
	}
	return f
}

// DriftSandboxLoosened is a server's sandbox loosened since the snapshot: network
// none → all, a folder more to read or write, applied then and not now, or no
// longer asked for. A tightened sandbox is no finding (it takes no risk away from
// what the snapshot approved); taking the snapshot again records it.
const DriftSandboxLoosened DriftKind = "sandbox-loosened"

// sandboxLoosened says how cur loosens old ("" when it does not).
func sandboxLoosened(old, cur *RecordedSandbox) string {
	if old == nil || !old.Requested {
		return "" // nothing was fenced: nothing can loosen
	}
	if cur == nil || !cur.Requested {
		return "the sandbox is no longer asked for"
	}
	var parts []string
	if old.Applied && !cur.Applied {
		parts = append(parts, "applied in the snapshot, not applied now")
	}
	if old.Network == "none" && cur.Network != "none" {
		parts = append(parts, "network none in the snapshot, "+orWord(cur.Network, "unset")+" now")
	}
	if more := added(old.Read, cur.Read); len(more) > 0 {
		parts = append(parts, "reads "+strings.Join(more, ", ")+" too")
	}
	if more := added(old.Write, cur.Write); len(more) > 0 {
		parts = append(parts, "writes "+strings.Join(more, ", ")+" too")
	}
	return strings.Join(parts, "; ")
}

// added lists what cur has that old has not, in cur's order.
func added(old, cur []string) []string {
	var out []string
	for _, p := range cur {
		if !slices.Contains(old, p) {
			out = append(out, p)
		}
	}
	return out
}

func orWord(s, none string) string {
	if s == "" {
		return none
	}
	return s
}
