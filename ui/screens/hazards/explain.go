package hazards

// Explanations of surprising recomputations: why a tool fills a leg when
// the leg is an assumption, and which claims trusting a server makes airlock
// believe. The sentences come from the pure trust functions, run on exactly what
// the session classified each tool from, so the screen and the classifier cannot
// disagree.

import (
	"strings"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

// legNote says why the tool qualified fills leg, when that comes from an
// assumption about a server that is not trusted; "" otherwise. The text holds
// server-controlled names: escape it.
func legNote(snap *model.Snapshot, qualified, leg string) string {
	l, ok := trust.ParseLeg(leg)
	if !ok {
		return ""
	}
	server, tool, _ := strings.Cut(qualified, "__")
	t, ok := snap.Tool(server, tool)
	if !ok {
		return ""
	}
	c, ok := trust.ExplainLeg(t.Input(), l)
	if !ok || !c.Assumed {
		return ""
	}
	return c.Text
}

// BelievedNote names, for a trust change to next, the claims of the server's tools
// that airlock will now believe ("send_email claims read-only, a closed world"); ""
// when next is not trusted or nothing changes. Raw: escape before display.
func BelievedNote(snap *model.Snapshot, server string, next trust.ServerTrust) string {
	if next != trust.Trusted || snap == nil {
		return ""
	}
	var parts []string
	for _, t := range snap.Tools {
		if t.Ref.Server != server {
			continue
		}
		claims := trust.NowBelieved(t.Input())
		if len(claims) == 0 {
			continue
		}
		for i := range claims {
			if i > 0 {
				claims[i] = strings.TrimPrefix(claims[i], "claims ")
			}
		}
		parts = append(parts, t.Ref.Tool+" "+strings.Join(claims, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return "now believed: " + strings.Join(parts, "; ")
}

// RemainsNote says why a hazard survived a live change when it survived only by an
// assumption: every tool of its untrusted-content leg fills it because its server is
// not trusted ("lethal-trifecta remains: server mail is untrusted, so it is assumed
// to read untrusted content"). "" when no hazard of before is left that way. Raw:
// escape before display.
func RemainsNote(before, after *model.Snapshot) string {
	if before == nil || after == nil {
		return ""
	}
	had := map[string]bool{}
	for _, h := range before.Hazards {
		had[trust.HazardKey(h)] = true
	}
	for _, h := range after.Hazards {
		names := h.Legs[string(trust.LegUntrustedContent)]
		if !had[trust.HazardKey(h)] || len(names) == 0 {
			continue
		}
		first := ""
		for _, q := range names {
			note := legNote(after, q, string(trust.LegUntrustedContent))
			if note == "" {
				first = ""
				break
			}
			if first == "" {
				first = note
			}
		}
		if first != "" {
			return string(h.Kind) + " remains: " + first
		}
	}
	return ""
}
