package record

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

// Drift lists every difference between the recorded snapshot (old) and a live
// recording (cur): servers added, removed or whose status changed, changed
// instructions, a loosened sandbox, and tools added, removed or changed (by the fingerprint of the
// recorded definition; a changed tool's
// Detail names the top-level fields of its definition that differ). The findings are
// sorted by server, then tool, then kind; nil when nothing differs.
func Drift(old, cur *model.Recording) []model.DriftFinding {
	var out []model.DriftFinding
	oldBy := map[string]*model.RecordedServer{}
	for i := range old.Servers {
		oldBy[old.Servers[i].Name] = &old.Servers[i]
	}
	curBy := map[string]*model.RecordedServer{}
	for i := range cur.Servers {
		curBy[cur.Servers[i].Name] = &cur.Servers[i]
	}
	for name := range oldBy {
		if _, ok := curBy[name]; !ok {
			out = append(out, model.DriftFinding{Kind: model.DriftServerRemoved, Server: name, Detail: "in the snapshot, not in the live config"})
		}
	}
	for name, c := range curBy {
		o, ok := oldBy[name]
		if !ok {
			out = append(out, model.DriftFinding{Kind: model.DriftServerAdded, Server: name, Detail: "live, not in the snapshot"})
			continue
		}
		if d := sandboxLoosened(o.Sandbox, c.Sandbox); d != "" {
			out = append(out, model.DriftFinding{Kind: model.DriftSandboxLoosened, Server: name, Detail: d})
		}
		if o.Status != c.Status {
			d := o.Status + " in the snapshot, " + c.Status + " now"
			if c.Error != "" {
				d += ": " + c.Error
			}
			out = append(out, model.DriftFinding{Kind: model.DriftServerStatus, Server: name, Detail: d})
			continue // a failed side has no listing to compare
		}
		if c.Status != model.StatusReady.String() {
			continue
		}
		if o.InstructionsSHA256 != c.InstructionsSHA256 {
			out = append(out, model.DriftFinding{Kind: model.DriftInstructionsChanged, Server: name, Detail: "instructions changed (sha256 " + short(o.InstructionsSHA256) + " → " + short(c.InstructionsSHA256) + ")"})
		}
		oldTools := toolsByName(o.Tools)
		curTools := toolsByName(c.Tools)
		for tn := range oldTools {
			if _, ok := curTools[tn]; !ok {
				out = append(out, model.DriftFinding{Kind: model.DriftToolRemoved, Server: name, Tool: tn, Detail: "tool no longer listed"})
			}
		}
		for tn, ct := range curTools {
			ot, ok := oldTools[tn]
			if !ok {
				out = append(out, model.DriftFinding{Kind: model.DriftToolAdded, Server: name, Tool: tn, Detail: "new tool"})
				continue
			}
			ofp, cfp := definitionFingerprint(ot), definitionFingerprint(ct)
			if ofp != cfp || ofp == "" {
				fields := changedFields(ot.Definition, ct.Definition)
				if ofp == cfp && len(fields) == 0 {
					continue // neither can be fingerprinted, and they read the same
				}
				d := "definition changed"
				if len(fields) > 0 {
					d += ": " + strings.Join(fields, ", ")
				}
				out = append(out, model.DriftFinding{Kind: model.DriftToolChanged, Server: name, Tool: tn, Detail: d, Was: ot.Definition, Now: ct.Definition})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Server != b.Server {
			return a.Server < b.Server
		}
		if a.Tool != b.Tool {
			return a.Tool < b.Tool
		}
		return a.Kind < b.Kind
	})
	return out
}

// definitionFingerprint is the fingerprint of the recorded definition itself: a
// snapshot edited by hand is compared by what it says, not by a stale sha256.
func definitionFingerprint(t model.RecordedTool) string {
	if fp, err := trust.ToolFingerprint(t.Definition); err == nil {
		return fp
	}
	return t.SHA256
}

// toolsByName keeps the first tool of each name (a repeated name is blocked anyway).
func toolsByName(ts []model.RecordedTool) map[string]model.RecordedTool {
	m := make(map[string]model.RecordedTool, len(ts))
	for _, t := range ts {
		if _, dup := m[t.Name]; !dup {
			m[t.Name] = t
		}
	}
	return m
}

// changedFields names the top-level members of two tool definitions that differ
// (compared in canonical form), sorted.
func changedFields(a, b json.RawMessage) []string {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return nil
	}
	var out []string
	for k, va := range ma {
		vb, ok := mb[k]
		if !ok || !sameJSON(va, vb) {
			out = append(out, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func sameJSON(a, b json.RawMessage) bool {
	ca, err1 := trust.Canonical(a)
	cb, err2 := trust.Canonical(b)
	if err1 != nil || err2 != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca, cb)
}

// short is a fingerprint cut to its first 12 digits, as the findings show it.
func short(fp string) string { return fp[:min(12, len(fp))] }
