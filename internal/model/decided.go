package model

import (
	"strconv"

	"github.com/airlock-mcp/airlock/trust"
)

// DecidedSentence is how a call was decided, as the one sentence every screen and
// command shows in place of the audit log's decided_by value: a is how the call
// ended (Allow, Deny, or Ask for a call that still waits) and by who or what
// decided it. "asked because of taint; you allowed it" is
// (Allow, DecidedByTaintThenPerson); "allowed with --yes on the command line;
// nobody was asked" is (Allow, DecidedByFlag). A value it does not know (from a
// newer airlock's log) is shown quoted, after the verb.
func DecidedSentence(a trust.Action, by trust.DecidedBy) string {
	if a == trust.Ask {
		switch by {
		case trust.DecidedByPolicy:
			return "the policy asks"
		case trust.DecidedByRule:
			return "an argument rule asks"
		case trust.DecidedByTaint:
			return "asks because of taint"
		case trust.DecidedBySecret:
			return "asks because its arguments hold a secret"
		}
		return "asks"
	}
	allow := a == trust.Allow
	pick := func(allowed, denied string) string {
		if allow {
			return allowed
		}
		return denied
	}
	switch by {
	case trust.DecidedByPolicy:
		return pick("allowed by policy", "denied by policy")
	case trust.DecidedByRule:
		return pick("allowed by an argument rule", "denied by an argument rule")
	case trust.DecidedByGrant:
		return pick("allowed by your allow for this context; nobody saw this call", "denied, though your allow for this context covered it")
	case trust.DecidedByPerson:
		return pick("you allowed it", "you denied it")
	case trust.DecidedByTaintThenPerson:
		return "asked because of taint; " + pick("you allowed it", "you denied it")
	case trust.DecidedByFlag:
		return pick("allowed with --yes on the command line; nobody was asked", "denied, though --yes on the command line allowed it")
	case trust.DecidedByTaintThenFlag:
		return "asked because of taint; " + pick("allowed with --yes on the command line, nobody was asked", "denied, though --yes on the command line allowed it")
	case trust.DecidedByTimeout:
		return pick("nobody answered in time", "denied: nobody answered in time")
	case trust.DecidedByAgentCancelled:
		return pick("the caller withdrew it while it waited", "withdrawn by its caller while it waited")
	case trust.DecidedByAgentGone:
		return pick("its agent disconnected before it ran", "withdrawn: its agent disconnected before it ran")
	case trust.DecidedByPin:
		return pick("the tool's definition changed", "denied: the tool's definition changed since it was pinned")
	case trust.DecidedByDisabled:
		return pick("the tool is turned off", "denied: the tool is turned off")
	case trust.DecidedByUnknownTool:
		return pick("the server lists no such tool", "refused: the server lists no such tool")
	case trust.DecidedByTaint:
		return pick("asks because of taint", "refused because this context is tainted")
	case trust.DecidedBySecret:
		return pick("asks because its arguments hold a secret", "denied because its arguments hold a secret")
	case "":
		if a == trust.ActionUnset {
			return "not decided"
		}
		return pick("allowed", "denied")
	}
	if a == trust.ActionUnset {
		return "decided by " + strconv.Quote(string(by))
	}
	return pick("allowed", "denied") + " by " + strconv.Quote(string(by))
}

// DecisionSentence is DecidedSentence of a CallFinished's words: decision is
// "allow", "deny" or "" (not decided), by a decided_by value.
func DecisionSentence(decision, by string) string {
	a, _ := trust.ParseAction(decision)
	return DecidedSentence(a, trust.DecidedBy(by))
}
