package session

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/airlock-mcp/airlock/trust"
)

// Overrides are the person's live "what if" changes for this session: a server's trust,
// a tool's policy, a tool turned off. They recompute tiers, policies and hazards at once
// and are never written into the person's config; ExportOverrides turns them into a
// TOML fragment to merge by hand.
type Overrides struct {
	Trust    map[string]trust.ServerTrust
	Policy   map[trust.Ref]trust.Action
	Disabled map[trust.Ref]bool
}

func (o Overrides) empty() bool {
	return len(o.Trust) == 0 && len(o.Policy) == 0 && len(o.Disabled) == 0
}

// Overrides returns a copy of the current live changes.
func (m *Manager) Overrides() Overrides {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := Overrides{Trust: map[string]trust.ServerTrust{}, Policy: map[trust.Ref]trust.Action{}, Disabled: map[trust.Ref]bool{}}
	for k, v := range m.over.Trust {
		out.Trust[k] = v
	}
	for k, v := range m.over.Policy {
		out.Policy[k] = v
	}
	for k, v := range m.over.Disabled {
		out.Disabled[k] = v
	}
	return out
}

// Unsaved reports whether there are live changes not in the config.
func (m *Manager) Unsaved() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.over.empty()
}

// SetServerTrust changes a server's trust for this session. Setting the trust the
// config already gives removes the change. A server that was blocked, and so never
// connected, is connected now.
func (m *Manager) SetServerTrust(name string, t trust.ServerTrust) error {
	s, ok := m.servers[name]
	if !ok {
		return fmt.Errorf("no server %q", name)
	}
	m.publish.Lock()
	m.mu.Lock()
	m.bumpOver(name)
	was := m.trustLocked(s)
	if t == s.cfg.Trust {
		delete(m.over.Trust, name)
	} else {
		if m.over.Trust == nil {
			m.over.Trust = map[string]trust.ServerTrust{}
		}
		m.over.Trust[name] = t
	}
	m.mu.Unlock()
	m.invalidate()
	m.publish.Unlock()
	m.announceOverrides()
	if was == trust.BlockedServer && t != trust.BlockedServer {
		s.mu.Lock()
		st := s.status
		s.mu.Unlock()
		if st != StatusReady {
			return m.Reconnect(name)
		}
	}
	return nil
}

// SetToolPolicy sets a tool's policy for this session; ActionUnset removes the change.
func (m *Manager) SetToolPolicy(ref trust.Ref, a trust.Action) error {
	if _, ok := m.servers[ref.Server]; !ok {
		return fmt.Errorf("no server %q", ref.Server)
	}
	m.publish.Lock()
	defer m.announceOverrides()
	defer m.publish.Unlock()
	m.mu.Lock()
	m.bumpOver(ref.Server)
	if a == trust.ActionUnset {
		delete(m.over.Policy, ref)
	} else {
		if m.over.Policy == nil {
			m.over.Policy = map[trust.Ref]trust.Action{}
		}
		m.over.Policy[ref] = a
	}
	m.mu.Unlock()
	m.invalidate()
	return nil
}

// SetDisabled turns a tool off (blocked) or back on for this session.
func (m *Manager) SetDisabled(ref trust.Ref, off bool) error {
	if _, ok := m.servers[ref.Server]; !ok {
		return fmt.Errorf("no server %q", ref.Server)
	}
	m.publish.Lock()
	defer m.announceOverrides()
	defer m.publish.Unlock()
	m.mu.Lock()
	m.bumpOver(ref.Server)
	if off {
		if m.over.Disabled == nil {
			m.over.Disabled = map[trust.Ref]bool{}
		}
		m.over.Disabled[ref] = true
	} else {
		delete(m.over.Disabled, ref)
	}
	m.mu.Unlock()
	m.invalidate()
	return nil
}

// bumpOver marks a server's part of the snapshot stale after a live change; m.mu is held.
func (m *Manager) bumpOver(server string) {
	if m.overVersion == nil {
		m.overVersion = map[string]uint64{}
	}
	m.overVersion[server]++
}

// invalidate drops the cached snapshot after a live change; m.publish is held.
// announceOverrides, called after m.publish is released, then tells every listener
// (the UI through an OverridesChanged event, the gateway through its subscription) so
// that everything on screen and at the gateway moves at once.
func (m *Manager) invalidate() { m.dropSnapshot() }

func (m *Manager) announceOverrides() {
	m.events.push(OverridesChanged{})
	m.notify()
}

// OverridesChanged reports that the person's live changes moved: take a new Snapshot.
type OverridesChanged struct{}

func (OverridesChanged) event() {}

// trustLocked is a server's trust with the live change applied; m.mu must be held.
func (m *Manager) trustLocked(s *server) trust.ServerTrust {
	if t, ok := m.over.Trust[s.cfg.Name]; ok {
		return t
	}
	return s.cfg.Trust
}

// serverTrust is trustLocked for callers without the lock.
func (m *Manager) serverTrust(s *server) trust.ServerTrust {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.trustLocked(s)
}

// ExportOverrides writes the live changes as a TOML fragment that, merged into the
// config, reproduces them: a [servers.NAME] trust and [servers.NAME.tools.TOOL]
// policy per change. A tool turned off becomes policy "deny". The fragment says where
// it came from and that it must be merged by hand; it is "" when there is no change.
func (m *Manager) ExportOverrides() string {
	o := m.Overrides()
	if o.empty() {
		return ""
	}
	type toolT struct {
		Policy string `toml:"policy"`
	}
	type serverT struct {
		Trust string           `toml:"trust,omitempty"`
		Tools map[string]toolT `toml:"tools,omitempty"`
	}
	servers := map[string]*serverT{}
	get := func(n string) *serverT {
		if servers[n] == nil {
			servers[n] = &serverT{}
		}
		return servers[n]
	}
	for n, t := range o.Trust {
		get(n).Trust = t.String()
	}
	setPolicy := func(ref trust.Ref, a trust.Action) {
		s := get(ref.Server)
		if s.Tools == nil {
			s.Tools = map[string]toolT{}
		}
		s.Tools[ref.Tool] = toolT{Policy: a.String()}
	}
	for ref, a := range o.Policy {
		setPolicy(ref, a)
	}
	var disabled []string
	for ref, off := range o.Disabled {
		if off {
			setPolicy(ref, trust.Deny)
			disabled = append(disabled, ref.Qualified())
		}
	}
	sort.Strings(disabled)
	var b bytes.Buffer
	target := "your config"
	if m.cfg.Path != "" {
		target = m.cfg.Path
	}
	fmt.Fprintf(&b, "# airlock: changes made in the session on %s.\n", m.opts.Now().Format(time.DateTime))
	fmt.Fprintf(&b, "# Merge these tables into %s by hand; airlock never rewrites it.\n", target)
	if len(disabled) > 0 {
		fmt.Fprintf(&b, "# Turned off in the session, kept off here with policy \"deny\": %s\n", strings.Join(disabled, ", "))
	}
	enc := toml.NewEncoder(&b)
	enc.Indent = ""
	_ = enc.Encode(map[string]any{"servers": servers})
	return b.String()
}

// WriteOverrides writes ExportOverrides next to the config (CONFIG.changes.toml), or
// into the state dir when the config has no file (the demo), and returns the path.
func (m *Manager) WriteOverrides() (string, error) {
	frag := m.ExportOverrides()
	if frag == "" {
		return "", fmt.Errorf("there are no changes to export")
	}
	var path string
	switch {
	case m.cfg.Path != "":
		path = strings.TrimSuffix(m.cfg.Path, filepath.Ext(m.cfg.Path)) + ".changes.toml"
	case m.cfg.StateDir != "":
		path = filepath.Join(m.cfg.StateDir, "changes.toml")
	default:
		dir, err := os.Getwd()
		if err != nil {
			return "", err
		}
		path = filepath.Join(dir, "airlock.changes.toml")
	}
	if err := WriteFileAtomic(path, []byte(frag), 0o600); err != nil {
		return "", err
	}
	return path, nil
}
