package approval

import (
	"bytes"
	"reflect"
	"slices"
	"strings"

	"github.com/airlock-mcp/airlock/internal/model"

	"github.com/airlock-mcp/airlock/trust"
)

// ToolChanges lists, as short phrases, what changed between the tool as a person saw
// it (shown) and the tool now: its tier, its server's trust, its policy, the legs it
// fills and whether it writes to a persistent store, and its definition
// (description, title, schemas, annotations). An approval or a grant covers
// exactly the tool as shown; any phrase here ends it. Empty means nothing changed.
func ToolChanges(shown, now model.ToolInfo) []string {
	var out []string
	if shown.Class.Tier != now.Class.Tier {
		out = append(out, "tier "+shown.Class.Tier.String()+" → "+now.Class.Tier.String())
	}
	if shown.ServerTrust != now.ServerTrust {
		out = append(out, "server trust "+shown.ServerTrust.String()+" → "+now.ServerTrust.String())
	}
	switch {
	case shown.Policy != now.Policy:
		out = append(out, "the tool's policy changed from "+policyWord(shown.Policy)+" to "+policyWord(now.Policy))
	case shown.Class.Action != now.Class.Action && shown.Class.Tier == now.Class.Tier:
		out = append(out, "the tier's policy changed from "+shown.Class.Action.String()+" to "+now.Class.Action.String())
	}
	if !slices.Equal(shown.Class.Legs, now.Class.Legs) {
		// Labels and the server's trust move them, not only the definition: what
		// the question showed (or the grant was given for) filled other legs.
		out = append(out, "the legs it fills changed from "+legWords(shown.Class.Legs)+" to "+legWords(now.Class.Legs))
	}
	if shown.Class.Persistent != now.Class.Persistent {
		if now.Class.Persistent {
			out = append(out, "it now writes to a persistent store")
		} else {
			out = append(out, "it no longer writes to a persistent store")
		}
	}
	if shown.Fingerprint != now.Fingerprint || !bytes.Equal(shown.Raw, now.Raw) && shown.Fingerprint == "" {
		var what []string
		if shown.Description != now.Description {
			what = append(what, "description changed")
		}
		if shown.Title != now.Title {
			what = append(what, "title changed")
		}
		if !bytes.Equal(shown.InputSchema, now.InputSchema) {
			what = append(what, "input schema changed")
		}
		if !bytes.Equal(shown.OutputSchema, now.OutputSchema) {
			what = append(what, "output schema changed")
		}
		if !reflect.DeepEqual(shown.Declared, now.Declared) {
			what = append(what, "annotations changed")
		}
		if len(what) == 0 {
			what = append(what, "definition changed")
		}
		out = append(out, what...)
	}
	if shown.Disabled != now.Disabled && now.Disabled {
		out = append(out, "turned off")
	}
	return out
}

// CanonicalArgs checks a call's arguments and returns the canonical bytes that are
// shown, hashed, audited and sent (see trust.CanonicalArgs); the size limit is
// applied by Manager.Call from [limits]. The form's raw-JSON mode and `airlock call`
// use it to refuse bad arguments before anything is asked.
func CanonicalArgs(raw []byte) ([]byte, error) { return trust.CanonicalArgs(raw, 0) }

// ChangedSentence is the denial sentence for a tool that changed under a decision.
func ChangedSentence(ref trust.Ref, while string, changes []string) string {
	return ref.Qualified() + " changed while " + while + ": " + strings.Join(changes, "; ")
}

// ChangedBy is the decider of a denial because the tool changed: pin when its
// definition changed, else policy (tier, trust or policy moved).
func ChangedBy(shown, now model.ToolInfo) trust.DecidedBy {
	if shown.Fingerprint != now.Fingerprint {
		return trust.DecidedByPin
	}
	if now.Disabled {
		return trust.DecidedByDisabled
	}
	return trust.DecidedByPolicy
}

func policyWord(a trust.Action) string {
	if a == trust.ActionUnset {
		return "the tier's default"
	}
	return a.String()
}

// legWords is a tool's legs as ToolChanges says them: "private-data, exfiltration",
// "none".
func legWords(legs []trust.Leg) string {
	if len(legs) == 0 {
		return "none"
	}
	w := make([]string, len(legs))
	for i, l := range legs {
		w[i] = string(l)
	}
	return strings.Join(w, ", ")
}
