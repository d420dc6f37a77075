// Package approval is the approval engine: every call airlock forwards, from the
// person or from an agent, is decided here (allow, deny, or ask a person), against
// the tool's tier and trust, its argument rules (the config's and the remembered
// ones of rules.toml), the grants a person gave for a context, the context's
// taint (taint.json) and the rate limits on calls (rates.json).
//
// Invariants:
//   - An [Engine] never allows a call that no person, rule, grant or policy allowed;
//     a question that times out, is withdrawn ([Engine.WithdrawChanged]) or whose
//     agent went away denies its call ([Engine.Authorize]).
//   - A yes is bound to what the person saw: a grant ends, and a waiting question is
//     withdrawn, when the tool's definition or class changed ([ToolChanges]).
//   - A state file that cannot be read fails closed: while taint.json cannot be
//     read every context is treated as tainted, and while rules.toml cannot be
//     read every tool a remembered rule could decide asks ([Engine.RulesProblem],
//     [Engine.TaintStoreProblem]).
//   - A rate limit only tightens: a call beyond one is never run unasked (it asks,
//     or with rate_action "deny" is denied), a denial stays a denial, and each
//     forwarded call is counted once, when it is decided, so concurrent calls in
//     one process or in several sharing rates.json never share a last slot; while
//     rates.json cannot be read every call under a limit asks ([Engine.RatesProblem]).
//   - A path a rule compares is resolved as the operating system will open it for a
//     server on this machine, and a glob allows only when both the cleaned and the
//     resolved path are inside it.
//
// The engine imports no part of session: the Manager builds it with [New] and
// hands it the events and the audit log through [Options].
package approval
