package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/pins"
	"github.com/airlock-mcp/airlock/trust"
)

// minReviewedPrefix is the shortest fingerprint prefix that binds an acceptance.
const minReviewedPrefix = 8

// errChangedSinceReview is returned when what a server serves now is not what the
// person reviewed.
var errChangedSinceReview = errors.New("changed again since it was reviewed")

// AcceptPins pins the reviewed definitions of a server's changed tools, and its
// reviewed instructions, then reclassifies. Each must still be what was reviewed:
// when the server changed a tool (or its instructions) again since, nothing at all is
// pinned and the error wraps errChangedSinceReview. A reviewed tool that is no longer
// changed is skipped. It returns what was accepted, as sentences.
func (m *Manager) AcceptPins(serverName string, r model.Reviewed) ([]string, error) {
	s, ok := m.servers[serverName]
	if !ok {
		return nil, fmt.Errorf("no server %q", serverName)
	}
	for name, fp := range r.Tools {
		if len(fp) < minReviewedPrefix {
			return nil, fmt.Errorf("%s__%s: give at least %d hex digits of the fingerprint you reviewed", serverName, name, minReviewedPrefix)
		}
	}
	if r.Instructions != "" && len(r.Instructions) < minReviewedPrefix {
		return nil, fmt.Errorf("%s: give at least %d hex digits of the instructions' fingerprint", serverName, minReviewedPrefix)
	}
	s.mu.Lock()
	if s.status != model.StatusReady {
		s.mu.Unlock()
		return nil, fmt.Errorf("server %s is not connected (%v)", serverName, s.status)
	}
	defs := map[string]json.RawMessage{}
	var accepted []string
	listed := map[string]bool{}
	var problem error
	for _, t := range s.tools {
		name := t.wire.Name
		listed[name] = true
		want, ok := r.Tools[name]
		if seen, _ := s.pins.Tool(name); !ok || seen.State != trust.PinChanged {
			continue
		}
		if !strings.HasPrefix(t.fingerprint, strings.ToLower(want)) {
			problem = fmt.Errorf("%s__%s %w: it is now sha256 %s, not the %s you reviewed; nothing was pinned", serverName, name, errChangedSinceReview, short(t.fingerprint), want)
			break
		}
		defs[name] = t.raw
		accepted = append(accepted, serverName+"__"+name+": new definition pinned (sha256 "+short(t.fingerprint)+")")
	}
	var instr *string
	if problem == nil && r.Instructions != "" && s.pins.InstructionsChanged {
		if fp := trust.InstructionsFingerprint(s.instructions); !strings.HasPrefix(fp, strings.ToLower(r.Instructions)) {
			problem = fmt.Errorf("%s: instructions %w: they are now sha256 %s, not the %s you reviewed; nothing was pinned", serverName, errChangedSinceReview, short(fp), r.Instructions)
		} else {
			v := s.instructions
			instr = &v
			accepted = append(accepted, serverName+": new instructions pinned")
		}
	}
	tools, notices, gen := s.tools, s.listNotices, s.gen
	s.mu.Unlock()
	if problem != nil {
		return nil, problem
	}
	for name := range r.Tools {
		if !listed[name] {
			return nil, fmt.Errorf("server %s lists no tool %q", serverName, name)
		}
	}
	if len(defs) == 0 && instr == nil {
		return nil, nil
	}
	if err := m.pins.Accept(s.identity(), serverName, instr, defs, m.opts.Now()); err != nil {
		return nil, err
	}
	s.setTools(gen, tools, notices)
	sort.Strings(accepted)
	return accepted, nil
}

// short is the first 12 digits of a fingerprint, as shown to a person.
func short(fp string) string { return fp[:min(12, len(fp))] }

// identity is the pin key of this server: in-process servers are keyed by name, as
// there is no command or URL to tell them apart.
func (s *server) identity() string {
	if _, ok := s.m.opts.InProcess[s.cfg.Name]; ok {
		return "inprocess:" + s.cfg.Name
	}
	return pins.Identity(s.cfg)
}

// PinnedDefinition returns what is pinned for one of a server's tools: the "before"
// side of the diff a person reviews when the tool changed since pinned (the "after"
// side is the tool's Raw in the Snapshot). It is false when nothing is pinned for it.
func (m *Manager) PinnedDefinition(serverName, tool string) (pins.Record, bool) {
	s, ok := m.servers[serverName]
	if !ok {
		return pins.Record{}, false
	}
	return m.pins.Pinned(s.identity(), tool)
}

// pinsListed is a listing as the pins store compares it.
func pinsListed(tools []listedTool) []pins.Listed {
	out := make([]pins.Listed, len(tools))
	for i := range tools {
		out[i] = pins.Listed{Name: tools[i].wire.Name, Raw: tools[i].raw, Fingerprint: tools[i].fingerprint}
	}
	return out
}

// shortList names up to n items and counts the rest.
func shortList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s (+%d more)", strings.Join(items[:n], ", "), len(items)-n)
}
