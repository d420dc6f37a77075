// Package gateway is airlock as one MCP server that AI agents connect to over
// streamable HTTP, on a loopback address unless remote access is allowed, with a
// bearer token. It serves every upstream tool that is not blocked, as SERVER__TOOL
// (or a shorter name where an agent could not take that one) with its effective
// annotations, and relays resources, templates and prompts under relay URIs and
// names ([RelayURI], [RelayPromptName]). Every call, read, prompt get, completion
// and subscription of an agent goes through the host's decision, in the context of
// the agent's token ([AgentContext]).
//
// [New] builds a [Gateway] over a [Host] with [Options]; [Gateway.Start] runs it,
// [Gateway.Close] stops it and [Gateway.Handler] is its HTTP handler. [Bridge]
// carries an agent that can only launch stdio servers to a running gateway. The
// tokens agents present are kept by [LoadOrCreateToken], [OpenToken] and
// [RotateToken], and the named ones by [AddToken], [ListTokens] and [RevokeToken].
//
// Invariants: the gateway reaches the Manager only through its [Host] interface,
// and none of Host's methods can allow a call, clear taint or drop a record; the
// gateway may only taint, move taint whole, end a context's grants, and ask. A
// session belongs to the token that opened it.
package gateway
