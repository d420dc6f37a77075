// Package session is the part of airlock that talks to the outside: the [Manager]
// holds the connections to every configured MCP server (stdio subprocesses,
// streamable HTTP, SSE, in-process), lists and classifies their tools, and decides
// every call, the person's and every agent's, through [Manager.Call].
//
// The Manager owns the connections and publishes what it knows as immutable
// snapshots ([Manager.Snapshot], a [model.Snapshot]) and typed events
// ([Manager.Next]); it owns every goroutine it starts and never blocks on a slow
// reader. Its rooms do the rest and never import it: session/conn opens
// connections and walks listings, session/pins keeps the trust-on-first-use pins,
// session/approval decides, asks and remembers (grants, taint, rules),
// session/audit appends the decision record, session/record reads and compares CI
// snapshots, and session/gateway serves agents through the narrow host interface
// the Manager implements.
//
// Invariants: nothing is forwarded to a server that the approval engine did not
// allow for exactly the arguments and definition shown; a call's decision is on
// disk (when an audit log is configured) before the call is forwarded; state files
// that cannot be read make airlock ask or refuse, never read as empty. The package
// never imports the UI or bubbletea.
package session
