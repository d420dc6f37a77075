package hazards

import (
	"slices"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// hazardTitle is the banner's word for a hazard kind.
func hazardTitle(k trust.HazardKind) string {
	switch k {
	case trust.HazardLethalTrifecta:
		return "LETHAL TRIFECTA"
	case trust.HazardOpenWorldExfiltration:
		return "OPEN-WORLD EXFILTRATION"
	case trust.HazardUntrustedDestructive:
		return "UNTRUSTED → DESTRUCTIVE"
	case trust.HazardUntrustedPersistence:
		return "UNTRUSTED → PERSISTENT"
	case trust.HazardShadowing:
		return "SHADOWING"
	case trust.HazardUntrustedServer:
		return "UNTRUSTED SERVER"
	}
	return strings.ToUpper(string(k))
}

// hazardLegs lists a hazard's legs in the order the banner shows them, joined by an
// arrow: where untrusted content comes from, what it reaches, where it goes.
func hazardLegs(k trust.HazardKind) []string {
	switch k {
	case trust.HazardLethalTrifecta:
		return []string{string(trust.LegUntrustedContent), string(trust.LegPrivateData), string(trust.LegExfiltration)}
	case trust.HazardOpenWorldExfiltration:
		return []string{string(trust.LegUntrustedContent), string(trust.LegExfiltration)}
	case trust.HazardUntrustedDestructive:
		return []string{string(trust.LegUntrustedContent), trust.HazardLegDestructive}
	case trust.HazardUntrustedPersistence:
		return []string{string(trust.LegUntrustedContent), trust.HazardLegPersistent}
	case trust.HazardShadowing:
		return []string{trust.HazardLegShadowing, trust.HazardLegShadowed}
	case trust.HazardUntrustedServer:
		return []string{string(trust.LegUntrustedContent)}
	}
	return nil
}

// legText names the tools of one leg briefly: the tool itself, "server__*" when they
// all come from one server, else one example (one that runs unasked, of unasked,
// when the leg has one). With counts it says how many: "(3)",
// "(+2)". The example is the first tool that fills no other leg of the hazard, so
// that "web__fetch_url → notes__* → mail__send_email" names three different tools
// where it can (others returns the names in the hazard's other legs; it is called
// only then). A channel reads "SERVER resources" (trust.LegName). Names are
// server-controlled and escaped.
func legText(st *theme.Styles, names, unasked []string, others func() map[string]bool, counts bool) string {
	switch len(names) {
	case 0:
		return "-"
	case 1:
		return common.Inline(st, trust.LegName(names[0]), 48)
	}
	server, _, _ := strings.Cut(names[0], "__")
	same := true
	for _, n := range names[1:] {
		if s, _, _ := strings.Cut(n, "__"); s != server {
			same = false
			break
		}
	}
	if same {
		s := common.Inline(st, server, 32) + "__*"
		if counts {
			s += " (" + strconv.Itoa(len(names)) + ")"
		}
		return s
	}
	example := names[0]
	inOthers := others()
	for _, n := range names {
		if !inOthers[n] {
			example = n
			break
		}
	}
	// A member that runs unasked is what makes the hazard unguarded: the example
	// is one, exclusive to this leg where one is.
	if _, ok := slices.BinarySearch(unasked, example); !ok && len(unasked) > 0 {
		first := ""
		for _, n := range names {
			if _, ok := slices.BinarySearch(unasked, n); !ok {
				continue
			}
			if first == "" {
				first = n
			}
			if !inOthers[n] {
				first = n
				break
			}
		}
		if first != "" {
			example = first
		}
	}
	s := common.Inline(st, trust.LegName(example), 48)
	if counts {
		s += " (+" + strconv.Itoa(len(names)-1) + ")"
	}
	return s
}

// HazardLine is one banner line, e.g.
// "‼ LETHAL TRIFECTA: web__fetch_url (+1) → notes__* (3) → mail__send_email — guarded".
// When that does not fit the width it drops the counts, then cuts the line.
func HazardLine(st *theme.Styles, h trust.Hazard, width int) string {
	style := st.Banner
	if h.Severity == trust.SeverityCritical {
		style = st.BannerCrit
	}
	legs := hazardLegs(h.Kind)
	sep := " → "
	if h.Kind == trust.HazardShadowing {
		sep = " names "
	}
	guard := st.OKText.Render("guarded")
	if h.Unguarded {
		guard = st.ErrorText.Render("UNGUARDED")
	}
	title := theme.SeverityGlyph(h.Severity) + " " + hazardTitle(h.Kind)
	head := style.Render(title + ":")
	var line, legsText string
	// The names in a leg's other legs, built only for a leg whose names come from
	// several servers (legText picks its example from them), once for both tries:
	// at 10,000 tools each set is thousands of names.
	othersOf := make([]map[string]bool, len(legs))
	for _, counts := range []bool{true, false} {
		parts := make([]string, 0, len(legs))
		for i, l := range legs {
			others := func() map[string]bool {
				if othersOf[i] == nil {
					othersOf[i] = map[string]bool{}
					for j, o := range legs {
						if j != i {
							for _, n := range h.Legs[o] {
								othersOf[i][n] = true
							}
						}
					}
				}
				return othersOf[i]
			}
			parts = append(parts, legText(st, h.Legs[l], h.Unasked, others, counts))
		}
		legsText = strings.Join(parts, sep)
		line = head + " " + legsText + " — " + guard
		if counts && width >= 110 {
			if h.Unguarded {
				line += st.Muted.Render(" (every leg has a tool that runs without asking)")
			} else {
				line += st.Muted.Render(" (at least one leg asks a person before it runs)")
			}
		}
		if lipgloss.Width(line) <= width {
			return line
		}
	}
	// Narrow: the guard goes first, so that only tool names can be cut.
	return common.Fit(style.Render(title)+" "+guard+style.Render(":")+" "+legsText, width)
}

// BannerLines renders the risk banner in exactly n lines: a line per hazard, most
// severe first, the last line summarising what did not fit. With no hazard it says
// so, so that the first screen always states the session's risk.
func BannerLines(st *theme.Styles, hazards []trust.Hazard, connecting bool, n, width int) []string {
	if len(hazards) == 0 {
		msg := "✓ no toolset hazards"
		if connecting {
			msg += " so far (servers are still connecting)"
		}
		return []string{common.Fit(st.OKText.Render(msg), width)}
	}
	lines := make([]string, 0, n)
	shown := len(hazards)
	if shown > n {
		shown = n - 1
	}
	for _, h := range hazards[:shown] {
		lines = append(lines, HazardLine(st, h, width))
	}
	if rest := hazards[shown:]; len(rest) > 0 {
		var kinds []string
		sev := trust.SeverityHigh
		for _, h := range rest {
			kinds = append(kinds, string(h.Kind))
			if h.Severity == trust.SeverityCritical {
				sev = h.Severity
			}
		}
		style := st.Banner
		if sev == trust.SeverityCritical {
			style = st.BannerCrit
		}
		more := style.Render(theme.SeverityGlyph(sev)+" +"+strconv.Itoa(len(rest))+" more:") + " " + strings.Join(compactKinds(kinds), ", ")
		lines = append(lines, common.Fit(more, width))
	}
	return lines
}

// compactKinds counts repeated kinds: "shadowing ×3".
func compactKinds(kinds []string) []string {
	var out []string
	for i := 0; i < len(kinds); {
		j := i
		for j < len(kinds) && kinds[j] == kinds[i] {
			j++
		}
		if j-i > 1 {
			out = append(out, kinds[i]+" ×"+strconv.Itoa(j-i))
		} else {
			out = append(out, kinds[i])
		}
		i = j
	}
	return out
}
