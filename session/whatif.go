package session

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/tomlw"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// Overrides returns a copy of the current live changes.
func (m *Manager) Overrides() model.Overrides {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := model.Overrides{Trust: map[string]trust.ServerTrust{}, Policy: map[trust.Ref]trust.Action{}, Disabled: map[trust.Ref]bool{}}
	for k, v := range m.over.Trust {
		out.Trust[k] = v
	}
	for k, v := range m.over.Policy {
		out.Policy[k] = v
	}
	for k, v := range m.over.Disabled {
		out.Disabled[k] = v
	}
	out.RulesOff = maps.Clone(m.over.RulesOff)
	if out.RulesOff == nil {
		out.RulesOff = map[string]trust.Ref{}
	}
	return out
}

// SetRuleOff turns an argument rule (named as RuleEntry.Name) off for this session,
// or back on: an off rule decides no call, and the hazards count its tool's legs as
// the tier leaves them. ref is the tool the rule is for.
func (m *Manager) SetRuleOff(name string, ref trust.Ref, off bool) error {
	if _, ok := m.servers[ref.Server]; !ok {
		return fmt.Errorf("no server %q", ref.Server)
	}
	m.publish.Lock()
	defer m.announceOverrides()
	defer m.publish.Unlock()
	m.mu.Lock()
	m.bumpOver(ref.Server)
	if off {
		if m.over.RulesOff == nil {
			m.over.RulesOff = map[string]trust.Ref{}
		}
		m.over.RulesOff[name] = ref
	} else {
		delete(m.over.RulesOff, name)
	}
	m.engine.SetRulesOff(maps.Clone(m.over.RulesOff))
	m.mu.Unlock()
	m.invalidate()
	return nil
}

// Unsaved reports whether there are live changes not in the config.
func (m *Manager) Unsaved() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.over.Empty()
}

// PolicyHold is a what-if change refused because the team policy holds the value
// stricter: nothing changed, and neither U nor the person's config can loosen it.
type PolicyHold struct {
	What   string // "server web", or a tool's qualified name
	At     string // the value the policy holds it at: "untrusted", "deny"
	Source config.Source
}

// Error is the session's sentence: "the team policy holds server web at untrusted
// (policy: /etc/airlock/policy.toml:2): a what-if cannot loosen it".
func (h *PolicyHold) Error() string {
	return "the team policy holds " + h.What + " at " + h.At + " (" + h.Source.String() + "): a what-if cannot loosen it"
}

// TrustHeld is the hold that refuses server name's trust at t, nil when the team
// policy lets the server have it (or there is no such server). SetServerTrust
// refuses exactly these; the screens ask it before offering a step.
func (m *Manager) TrustHeld(name string, t trust.ServerTrust) *PolicyHold {
	s, ok := m.servers[name]
	if !ok {
		return nil
	}
	if c := s.cfg; c.TrustCapSource.IsPolicy() && config.StricterTrust(t, c.TrustCap) != t {
		return &PolicyHold{What: "server " + name, At: c.TrustCap.String(), Source: c.TrustCapSource}
	}
	return nil
}

// ToolPolicyHeld is TrustHeld for a tool's policy override a (ActionUnset, no
// override, is never held: the policy's cap applies to the tier's policy too).
func (m *Manager) ToolPolicyHeld(ref trust.Ref, a trust.Action) *PolicyHold {
	s, ok := m.servers[ref.Server]
	if !ok || a == trust.ActionUnset {
		return nil
	}
	if cp := s.cfg.Tools[ref.Tool].Cap; cp.Action != trust.ActionUnset && config.Stricter(a, cp.Action) != a {
		return &PolicyHold{What: ref.Qualified(), At: cp.Action.String(), Source: cp.Source}
	}
	return nil
}

// SetServerTrust changes a server's trust for this session. Setting the trust the
// config already gives removes the change. A server that was blocked, and so never
// connected, is connected now.
func (m *Manager) SetServerTrust(name string, t trust.ServerTrust) error {
	s, ok := m.servers[name]
	if !ok {
		return fmt.Errorf("no server %q", name)
	}
	if h := m.TrustHeld(name, t); h != nil {
		return h
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
		if st != model.StatusReady {
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
	if h := m.ToolPolicyHeld(ref, a); h != nil {
		return h
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

// ResetOverrides removes every live change at once (the demo's reset, and the tour's
// restore) and returns how many there were. A server that a change had blocked, and
// that so may never have connected, is connected now.
func (m *Manager) ResetOverrides() int {
	m.publish.Lock()
	m.mu.Lock()
	n := len(m.over.Trust) + len(m.over.Policy) + len(m.over.Disabled) + len(m.over.RulesOff)
	for _, ref := range m.over.RulesOff {
		m.bumpOver(ref.Server)
	}
	var reconnect []string
	for name, t := range m.over.Trust {
		m.bumpOver(name)
		if s, ok := m.servers[name]; ok && t == trust.BlockedServer && s.cfg.Trust != trust.BlockedServer {
			reconnect = append(reconnect, name)
		}
	}
	for ref := range m.over.Policy {
		m.bumpOver(ref.Server)
	}
	for ref := range m.over.Disabled {
		m.bumpOver(ref.Server)
	}
	m.over = model.Overrides{}
	m.engine.SetRulesOff(nil)
	m.mu.Unlock()
	m.invalidate()
	m.publish.Unlock()
	if n > 0 {
		m.announceOverrides()
	}
	sort.Strings(reconnect)
	for _, name := range reconnect {
		s := m.servers[name]
		s.mu.Lock()
		st := s.status
		s.mu.Unlock()
		if st != model.StatusReady {
			_ = m.Reconnect(name)
		}
	}
	return n
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
	m.events.push(model.OverridesChanged{})
	m.notify()
}

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

// ExportOverrides writes the live changes as a TOML fragment that, appended to the
// config it came from, reproduces them: [servers.NAME] with its trust, and
// [servers.NAME.tools.TOOL] with its policy, each only where the config does not
// define that table yet (TOML forbids defining a table twice). A change to a table the
// config already defines becomes a comment saying what to set there. A tool turned
// off becomes policy "deny". Every name is a quoted TOML key with each character
// outside printable ASCII escaped, so a server-controlled tool name can leave neither
// its key nor a comment. The fragment is "" when there is no change.
func (m *Manager) ExportOverrides() string {
	o := m.Overrides()
	if o.Empty() {
		return ""
	}
	type piece struct {
		table string // the table header's key, e.g. servers.mail.tools."x"
		key   string // the key set in it
		value string // a TOML string
	}
	var pieces []piece
	for _, n := range slices.Sorted(maps.Keys(o.Trust)) {
		pieces = append(pieces, piece{table: "servers." + tomlKey(n), key: "trust", value: tomlString(o.Trust[n].String())})
	}
	policies := map[trust.Ref]trust.Action{}
	maps.Copy(policies, o.Policy)
	var disabled []string
	for ref, off := range o.Disabled {
		if off {
			policies[ref] = trust.Deny
			name := ref.Qualified()
			if tomlKey(name) != name {
				name = tomlString(name)
			}
			disabled = append(disabled, name)
		}
	}
	refs := slices.SortedFunc(maps.Keys(policies), func(a, b trust.Ref) int {
		return cmp.Or(strings.Compare(a.Server, b.Server), strings.Compare(a.Tool, b.Tool))
	})
	for _, ref := range refs {
		pieces = append(pieces, piece{table: "servers." + tomlKey(ref.Server) + ".tools." + tomlKey(ref.Tool), key: "policy", value: tomlString(policies[ref].String())})
	}
	sort.Strings(disabled)

	// What the config defines: its own text when it is a TOML file, else a skeleton of
	// the loaded servers and tools (a config imported from another client's JSON).
	base := m.configSkeleton()
	if m.cfg.Path != "" {
		if b, err := os.ReadFile(m.cfg.Path); err == nil {
			var tree map[string]any
			if _, err := toml.Decode(string(b), &tree); err == nil {
				base = string(b)
			}
		}
	}
	var tables, edits []string
	text := base + "\n"
	for _, p := range pieces {
		t := "[" + p.table + "]\n" + p.key + " = " + p.value + "\n"
		var probe map[string]any
		if _, err := toml.Decode(text+t, &probe); err == nil {
			text += t
			tables = append(tables, t)
		} else {
			edits = append(edits, "# ["+p.table+"] is already in the config: set "+p.key+" = "+p.value+" there\n")
		}
	}

	// Rules: one turned off is a comment (TOML cannot take an array element back by
	// appending); each remembered rule that is on becomes a config rule, so it can
	// move from rules.toml into the config.
	var ruleNotes, ruleBlocks []string
	for _, name := range slices.Sorted(maps.Keys(o.RulesOff)) {
		if strings.HasPrefix(name, "servers.") {
			ruleNotes = append(ruleNotes, "# rule "+tomlString(name)+" was turned off in the session: delete it from the config to keep it off\n")
		} else {
			ruleNotes = append(ruleNotes, "# remembered rule "+tomlString(name)+" was turned off in the session: `airlock rules revoke` it to keep it off\n")
		}
	}
	if saved, err := m.engine.Rules(); err == nil {
		for _, r := range saved {
			if _, off := o.RulesOff[r.ID]; off || r.Problem != "" {
				continue
			}
			var blk strings.Builder
			fmt.Fprintf(&blk, "# remembered rule %s (rules.toml), from %s; once this is in the config, revoke it there\n", tomlString(r.ID), tomlString(r.From))
			fmt.Fprintf(&blk, "[[servers.%s.tools.%s.rules]]\nwhen = %s\npolicy = %s\n", tomlKey(r.Server), tomlKey(r.Tool), approval.FormatWhen(r.When), tomlString(r.Policy))
			if r.Reason != "" {
				fmt.Fprintf(&blk, "reason = %s\n", tomlString(r.Reason))
			}
			var probe map[string]any
			if _, err := toml.Decode(text+blk.String(), &probe); err != nil {
				ruleNotes = append(ruleNotes, "# remembered rule "+tomlString(r.ID)+" cannot be appended here (the config defines that tool's rules another way): copy it from rules.toml\n")
				continue
			}
			text += blk.String()
			ruleBlocks = append(ruleBlocks, blk.String())
		}
	}

	var b strings.Builder
	target := "your config"
	if m.cfg.Path != "" {
		target = tomlString(m.cfg.Path)
	}
	fmt.Fprintf(&b, "# airlock: changes made in the session on %s.\n", m.opts.Now().Format(time.DateTime))
	fmt.Fprintf(&b, "# Append this to %s; airlock never rewrites it.\n", target)
	if len(disabled) > 0 {
		fmt.Fprintf(&b, "# Turned off in the session, kept off here with policy \"deny\": %s\n", strings.Join(disabled, ", "))
	}
	for _, e := range edits {
		b.WriteString(e)
	}
	for _, e := range ruleNotes {
		b.WriteString(e)
	}
	for _, t := range tables {
		b.WriteString(t)
	}
	for _, r := range ruleBlocks {
		b.WriteString(r)
	}
	return b.String()
}

// configSkeleton is a TOML text defining the tables the loaded config has: a table per
// server, one per tool override.
func (m *Manager) configSkeleton() string {
	var b strings.Builder
	for _, s := range m.cfg.Servers {
		b.WriteString("[servers." + tomlKey(s.Name) + "]\n")
		for _, tool := range slices.Sorted(maps.Keys(s.Tools)) {
			b.WriteString("[servers." + tomlKey(s.Name) + ".tools." + tomlKey(tool) + "]\n")
		}
	}
	return b.String()
}

// tomlKey and tomlString are the what-if export's (and rule editing's) TOML keys and
// basic strings: printable ASCII only (tomlw.ASCII), so a server-controlled name can
// leave neither its string nor a comment it is shown in.
func tomlKey(k string) string { return tomlw.ASCII.Key(k) }

func tomlString(s string) string { return tomlw.ASCII.Quote(s) }

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
	return writeNew(path, []byte(frag))
}

// writeNew writes data to path, or, when path exists, to the first free numbered
// name beside it (NAME-2.toml, NAME-3.toml, …): an export never overwrites a file,
// whoever wrote it. The file is created exclusively, so two exports at once get two
// files.
func writeNew(path string, data []byte) (string, error) {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	for n := 1; n <= 1000; n++ {
		p := path
		if n > 1 {
			p = base + "-" + strconv.Itoa(n) + ext
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return "", err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return "", err
		}
		return p, f.Close()
	}
	return "", fmt.Errorf("%s and 999 numbered names beside it exist: move some away", path)
}
