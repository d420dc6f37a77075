package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/record"
	"github.com/airlock-mcp/airlock/trust"
)

// recordCatalog encodes a catalog for a snapshot: sorted, so that it does not depend
// on the server's order.
func recordCatalog(c catalog) (res, prompts json.RawMessage) {
	if c.offersResources {
		r := model.RecordedResources{Subscribe: c.subscribe, List: slices.Clone(c.resources), Templates: slices.Clone(c.templates)}
		slices.SortStableFunc(r.List, func(a, b model.ResourceInfo) int { return strings.Compare(a.URI, b.URI) })
		slices.SortStableFunc(r.Templates, func(a, b model.ResourceTemplateInfo) int { return strings.Compare(a.URITemplate, b.URITemplate) })
		if r.List == nil {
			r.List = []model.ResourceInfo{}
		}
		if r.Templates == nil {
			r.Templates = []model.ResourceTemplateInfo{}
		}
		res, _ = json.Marshal(r)
	}
	if c.offersPrompts {
		p := model.RecordedPrompts{List: slices.Clone(c.prompts)}
		slices.SortStableFunc(p.List, func(a, b model.PromptInfo) int { return strings.Compare(a.Name, b.Name) })
		if p.List == nil {
			p.List = []model.PromptInfo{}
		}
		prompts, _ = json.Marshal(p)
	}
	return res, prompts
}

// recordedCatalog decodes what recordCatalog wrote; a key that cannot be read is a
// notice, and the rest of the server still counts.
func recordedCatalog(rs *model.RecordedServer) (catalog, []string) {
	var c catalog
	var notices []string
	isNull := func(b json.RawMessage) bool {
		return len(bytes.TrimSpace(b)) == 0 || string(bytes.TrimSpace(b)) == "null"
	}
	if !isNull(rs.Resources) {
		var r model.RecordedResources
		if err := json.Unmarshal(rs.Resources, &r); err != nil {
			notices = append(notices, "the snapshot's resources of this server cannot be read: "+err.Error())
		} else {
			c.offersResources, c.subscribe, c.resources, c.templates = true, r.Subscribe, r.List, r.Templates
		}
	}
	if !isNull(rs.Prompts) {
		var p model.RecordedPrompts
		if err := json.Unmarshal(rs.Prompts, &p); err != nil {
			notices = append(notices, "the snapshot's prompts of this server cannot be read: "+err.Error())
		} else {
			c.offersPrompts, c.prompts = true, p.List
		}
	}
	return c, notices
}

// Record returns the current listing of every server as a Recording. Call it after
// Wait: a server still connecting is recorded as failed.
func (m *Manager) Record() *model.Recording {
	rec := &model.Recording{SchemaVersion: model.RecordingSchemaVersion, Servers: make([]model.RecordedServer, 0, len(m.order))}
	for _, name := range m.order {
		s := m.servers[name]
		s.mu.Lock()
		rs := model.RecordedServer{Name: name, Status: s.status.String(), Tools: []model.RecordedTool{}, Sandbox: record.Sandbox(s.fence)}
		switch s.status {
		case model.StatusReady:
			rs.Protocol = s.protocol
			rs.ServerInfo = s.impl
			rs.Instructions = s.instructions
			rs.InstructionsSHA256 = trust.InstructionsFingerprint(s.instructions)
			rs.Notices = slices.Clone(s.listNotices)
			rs.Resources, rs.Prompts = recordCatalog(s.catalog)
			for _, t := range s.tools {
				def := json.RawMessage(t.raw)
				if c, err := trust.Canonical(t.raw); err == nil {
					def = c
				}
				rs.Tools = append(rs.Tools, model.RecordedTool{Name: t.wire.Name, SHA256: t.fingerprint, Definition: def})
			}
		case model.StatusFailed:
			if s.err != nil {
				rs.Error = s.err.Error()
			}
		default:
			rs.Status, rs.Error = model.StatusFailed.String(), "still connecting when the snapshot was taken"
		}
		s.mu.Unlock()
		slices.SortStableFunc(rs.Tools, func(a, b model.RecordedTool) int { return strings.Compare(a.Name, b.Name) })
		rec.Servers = append(rec.Servers, rs)
	}
	return rec
}

// NewOffline builds a Manager for cfg whose servers are filled from a recording
// instead of being connected: `airlock check --snapshot`. Nothing is started and
// nothing is written (pins are in memory, so every tool is new); the config supplies
// trust, labels and policies, and classification and hazards go through exactly the
// path a live session uses. A server the config blocks fails as it would live; one
// the recording lacks, or that failed when it was recorded, fails with that reason.
// The returned notes name recorded servers the config no longer has.
func NewOffline(cfg *config.Config, rec *model.Recording, opts Options) (*Manager, []string) {
	opts.Pins = nil
	opts.InProcess = nil
	m := New(cfg, opts)
	byName := make(map[string]*model.RecordedServer, len(rec.Servers))
	for i := range rec.Servers {
		byName[rec.Servers[i].Name] = &rec.Servers[i]
	}
	var notes []string
	for _, rs := range rec.Servers {
		if _, ok := m.servers[rs.Name]; !ok {
			notes = append(notes, fmt.Sprintf("snapshot server %q is not in the config and is left out", rs.Name))
		}
	}
	for _, name := range m.order {
		s := m.servers[name]
		s.mu.Lock()
		s.gen = 1
		s.mu.Unlock()
		rs := byName[name]
		var rec *model.RecordedSandbox
		if rs != nil {
			rec = rs.Sandbox
		}
		if f := record.OfflineFence(configFence(s.cfg), rec); f.Requested {
			s.setFence(f)
		}
		switch {
		case m.serverTrust(s) == trust.BlockedServer:
			s.fail(1, errors.New("server is blocked in the config: airlock does not connect to it"))
		case rs == nil:
			s.fail(1, errors.New("not in the snapshot: take it again with `airlock snapshot`"))
		case rs.Status != model.StatusReady.String():
			s.fail(1, fmt.Errorf("failed when the snapshot was taken: %s", rs.Error))
		default:
			raws := make([]json.RawMessage, len(rs.Tools))
			for i, t := range rs.Tools {
				raws[i] = t.Definition
			}
			tools, notices := parseListing(raws)
			cat, catNotices := recordedCatalog(rs)
			notices = append(notices, catNotices...)
			s.mu.Lock()
			s.protocol, s.instructions, s.impl = rs.Protocol, rs.Instructions, rs.ServerInfo
			s.catalog = cat
			s.mu.Unlock()
			all := slices.Clone(rs.Notices)
			for _, n := range notices {
				if !slices.Contains(all, n) {
					all = append(all, n)
				}
			}
			s.setTools(1, tools, all)
		}
	}
	return m, notes
}
