package record

import (
	"slices"
	"strings"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

// Sandbox is f as a snapshot records it; nil when no sandbox was asked for.
func Sandbox(f trust.Fence) *model.RecordedSandbox {
	if !f.Requested {
		return nil
	}
	return &model.RecordedSandbox{Requested: true, Applied: f.Applied, Network: f.Network, Read: slices.Clone(f.Read), Write: slices.Clone(f.Write)}
}

// OfflineFence is the fence `check --snapshot` counts for a server whose config
// asks for want and whose snapshot recorded rec: the recorded one only while the
// config still asks for exactly that sandbox. A config that asks for another (or
// one the snapshot lacks) is unfenced until the snapshot is taken again, and a
// recorded sandbox the config no longer asks for is not counted: a pull request
// that drops the sandbox from the config is judged without it.
func OfflineFence(want trust.Fence, rec *model.RecordedSandbox) trust.Fence {
	if !want.Requested {
		return trust.Fence{}
	}
	f := trust.Fence{Requested: true, Network: want.Network, Read: want.Read, Write: want.Write}
	switch {
	case rec == nil || !rec.Requested:
		f.Detail = "the snapshot records no sandbox for this server: take it again with `airlock snapshot`"
	case !rec.SameRequest(want):
		f.Detail = "the snapshot recorded another sandbox than the config asks for: take it again with `airlock snapshot`"
	case !rec.Applied:
		f.Detail = "not applied where the snapshot was taken"
	default:
		f.Applied, f.Detail = true, "applied where the snapshot was taken"
	}
	return f
}

// sandboxLoosened says how cur loosens old ("" when it does not).
func sandboxLoosened(old, cur *model.RecordedSandbox) string {
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
