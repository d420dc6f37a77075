package trust

import (
	"slices"
	"strings"
)

// LegCause says why a tool fills one leg, for the places a hazard is shown.
type LegCause struct {
	// Text is one sentence; it names the server and hints, so escape it like any
	// server-controlled text.
	Text string
	// Assumed is true when the leg comes from the spec defaults applied to a server
	// that is not trusted, rather than from a label, an assertion or a trusted
	// declaration: the surprising case ("an untrusted server is assumed to read
	// untrusted content"), which trusting the server or asserting the hint changes.
	Assumed bool
}

// effective computes each hint's effective value and where it came from, by the
// same rule as Classify (assertion, else a trusted server's declaration, else the
// spec default).
func effective(t Tool) (eff [hintCount]bool, src [hintCount]source) {
	asserted := t.Asserted.array()
	declared := t.Declared.Hints.array()
	trusted := t.ServerTrust == Trusted
	for i := range hintCount {
		switch {
		case asserted[i] != nil:
			eff[i], src[i] = *asserted[i], fromAsserted
		case trusted && declared[i] != nil:
			eff[i], src[i] = *declared[i], fromServer
		default:
			eff[i], src[i] = specDefault(i), fromDefault
		}
	}
	return eff, src
}

// ExplainLeg says why t, classified by Classify, fills leg l; ok is false when it
// does not fill it. Labels are named first (they decide whatever the hints say).
func ExplainLeg(t Tool, l Leg) (LegCause, bool) {
	eff, src := effective(t)
	openWorld, readOnly := eff[hintOpenWorld], eff[hintReadOnly]
	if slices.Contains(t.ToolLabels, l) {
		return LegCause{Text: "you labelled this tool " + string(l)}, true
	}
	if slices.Contains(t.ServerLabels, l) {
		return LegCause{Text: "server " + t.Server + " is labelled " + string(l)}, true
	}
	declared := t.Declared.Hints.array()
	ignored := func(hints ...int) string {
		var parts []string
		for _, i := range hints {
			if src[i] == fromDefault && declared[i] != nil && *declared[i] != specDefault(i) {
				parts = append(parts, hintWire(i)+"="+boolWord(*declared[i]))
			}
		}
		if len(parts) == 0 {
			return ""
		}
		verb := " is"
		if len(parts) > 1 {
			verb = " are"
		}
		return " (its " + strings.Join(parts, ", ") + verb + " not believed)"
	}
	switch l {
	case LegUntrustedContent:
		if !openWorld || t.Fence.NoNetwork() && t.ServerTrust == Trusted {
			return LegCause{}, false
		}
		switch src[hintOpenWorld] {
		case fromAsserted:
			return LegCause{Text: "you asserted open_world=true for this tool"}, true
		case fromServer:
			return LegCause{Text: "server " + t.Server + " is trusted and declares openWorldHint=true"}, true
		}
		if t.ServerTrust != Trusted {
			fenced := ""
			if t.Fence.NoNetwork() {
				fenced = "; fenced with no network, but what it returns and the files it reads are not believed"
			}
			return LegCause{Assumed: true, Text: "server " + t.Server + " is " + t.ServerTrust.String() +
				", so it is assumed to read untrusted content" + ignored(hintOpenWorld) + fenced}, true
		}
		return LegCause{Assumed: true, Text: "server " + t.Server + " declares no openWorldHint, so the spec default (open world) applies"}, true
	case LegExfiltration:
		if !openWorld || readOnly || t.Fence.NoNetwork() {
			return LegCause{}, false
		}
		if src[hintOpenWorld] != fromDefault && src[hintReadOnly] != fromDefault {
			return LegCause{Text: "it is open world and not read-only: " + whose(src[hintOpenWorld], t.Server) + " so"}, true
		}
		if t.ServerTrust != Trusted {
			return LegCause{Assumed: true, Text: "server " + t.Server + " is " + t.ServerTrust.String() +
				", so it is assumed able to send data out" + ignored(hintReadOnly, hintOpenWorld)}, true
		}
		return LegCause{Assumed: true, Text: "server " + t.Server + " leaves openWorldHint or readOnlyHint undeclared, so the spec defaults (open world, not read-only) apply"}, true
	}
	return LegCause{}, false
}

// NowBelieved lists the claims of t's server that trust would make airlock believe:
// each declared hint (not overridden by an assertion) whose value differs from the
// spec default, as short phrases ("claims read-only"). It reads t as if its server
// were trusted, whatever t.ServerTrust says.
func NowBelieved(t Tool) []string {
	t.ServerTrust = Trusted
	_, src := effective(t)
	declared := t.Declared.Hints.array()
	var out []string
	for i := range hintCount {
		if src[i] != fromServer || declared[i] == nil || *declared[i] == specDefault(i) {
			continue
		}
		switch i {
		case hintReadOnly:
			out = append(out, "claims read-only")
		case hintDestructive:
			out = append(out, "claims not destructive")
		case hintIdempotent:
			out = append(out, "claims idempotent")
		case hintOpenWorld:
			out = append(out, "claims a closed world")
		}
	}
	return out
}

func whose(s source, server string) string {
	if s == fromAsserted {
		return "you asserted"
	}
	return "trusted server " + server + " declares"
}

func boolWord(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
