// Package conn is airlock's connections to MCP servers, below the Manager: the
// transports (a stdio server's process in its own process group or Job Object, the
// HTTP client bound to the configured origin), the capture of tools/list results,
// the bounded writes to a stdio server's stdin, the stderr [Ring], and the walks of a
// server's listings ([ListTools], [ListResources], [ListResourceTemplates],
// [ListPrompts]), each with its page and entry caps said in notices.
//
// Invariants:
//   - tools are classified and pinned from the raw bytes of tools/list that a
//     [Capture] keeps, never from go-sdk's decoded structs (they lose "absent vs
//     false" and drop tools go-sdk finds invalid);
//   - a stdio server's pages are split before go-sdk reads them, and anything the
//     split does not fully understand passes byte for byte;
//   - one message is at most [MaxMessageBytes]; the configured headers go only to
//     the configured origin, and redirects to another origin are refused;
//   - closing a connection ([Close]) ends within a bounded time whatever the server
//     or go-sdk does, and ends every process the server started.
//
// conn does not import its parent session: what it needs of the server's owner
// comes in a [Dial] (the stderr sink, the fence report, the OAuth handler).
package conn
