package trust

import "strings"

// What a fence does to the legs (docs/hazards.md). Only an applied fence with
// network = "none" (Fence.NoNetwork) counts; a fence asked for and not applied
// changes nothing and is said as "unfenced".
//
//   - exfiltration from the open-world hint is gone: the server cannot reach the
//     network itself. What it writes stays inside its write folders; that another
//     server may send a file from a folder both share is not modelled (label that
//     server exfiltration, as it is anyway).
//   - untrusted content from the open-world hint is gone for a trusted server (its
//     open world was the network); an untrusted server stays an untrusted-content
//     source, because what it returns is not believed whatever it can reach, and
//     the files it reads may be hostile. Its results still taint.
//   - labels are the person's word and stay, fenced or not.

// fenceReason is the reason sentence a tool's fence adds ("" when it adds none).
func fenceReason(f Fence, st ServerTrust) string {
	switch {
	case f.NoNetwork() && st == Trusted:
		return "fenced with no network: it cannot send data out or fetch from the web; files it reads may still be untrusted content (label the server untrusted-content if they can be)"
	case f.NoNetwork():
		return "fenced with no network: it cannot send data out or fetch from the web; what an untrusted server returns, files it reads included, is still untrusted content"
	case f.Requested && !f.Applied:
		why := ""
		if f.Detail != "" {
			why = " (" + f.Detail + ")"
		}
		return "unfenced: a sandbox was asked for but not applied" + why + "; its legs count as without one"
	}
	return ""
}

// FenceWords says in a few words what a fence is, for every screen and report:
// "fenced: no network, reads ~/project, writes ~/project/out", "fenced: network
// open", "unfenced: sandbox requested but not applied: WHY", or "" for a server
// with no fence asked for. The folders and the detail come from the config and the
// launcher: escape the result before display like any other text.
func FenceWords(f Fence) string {
	switch {
	case !f.Requested:
		return ""
	case !f.Applied:
		s := "unfenced: sandbox requested but not applied"
		if f.Detail != "" {
			s += ": " + f.Detail
		}
		return s
	}
	parts := []string{"network open"}
	if f.Network == "none" {
		parts[0] = "no network"
	}
	if len(f.Read) > 0 {
		parts = append(parts, "reads "+strings.Join(f.Read, ", "))
	}
	if len(f.Write) > 0 {
		parts = append(parts, "writes "+strings.Join(f.Write, ", "))
	}
	return "fenced: " + strings.Join(parts, ", ")
}

// FenceColumn is the short word of a server's sandbox for a table's SANDBOX column:
// "—" none asked for, "UNFENCED" asked for and not applied, "fenced: no network",
// or "fenced" (applied, network open).
func FenceColumn(f Fence) string {
	switch {
	case !f.Requested:
		return "—"
	case !f.Applied:
		return "UNFENCED"
	case f.Network == "none":
		return "fenced: no network"
	}
	return "fenced"
}
