package demo

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// doc is one page of the docs server's built-in corpus.
type doc struct {
	ID, Title, Body string
}

// corpus is the docs server's whole library, sorted by ID. It is written to be worth
// reading during the demo: each page explains a part of what airlock shows.
var corpus = []doc{
	{
		ID:    "agent-gateway",
		Title: "Connecting an agent through airlock",
		Body:  `airlock can serve every tool that is not blocked to an AI agent over streamable HTTP at http://127.0.0.1:7878/mcp, naming each tool SERVER__TOOL (for example notes__list_notes). The agent needs the bearer token that airlock keeps in its state directory; "airlock gateway snippet claude" prints a ready configuration block. Every call the agent makes goes through the same approval engine as your own calls, and a call nobody answers is denied after the approval timeout.`,
	},
	{
		ID:    "lethal-trifecta",
		Title: "The lethal trifecta",
		Body:  `An agent is at risk when the tools it can call together give it three things: access to private data, exposure to untrusted content, and a way to send data out. Untrusted content can carry instructions, private data is what an attacker wants, and an exfiltration tool is how it leaves. airlock fills these three legs from annotations and labels and warns when one session holds all three, naming the tools in each leg.`,
	},
	{
		ID:    "mcp-overview",
		Title: "What the Model Context Protocol is",
		Body:  `The Model Context Protocol (MCP) connects AI applications to servers that offer tools, resources and prompts. A client starts a server over stdio or reaches it over streamable HTTP, lists its tools, and calls them with JSON arguments that match each tool's input schema. Servers can tell clients that their tool list changed with notifications/tools/list_changed.`,
	},
	{
		ID:    "prompt-injection",
		Title: "Prompt injection in tool results",
		Body:  `Text that a tool returns is data, not instructions, but a language model cannot always tell the difference. A web page, an email or a file may say "ignore previous instructions" and ask the agent to call other tools. Terminal escape sequences can also hide such text from a person reading it in a terminal. airlock shows every server-controlled string with escapes made visible and taints the context once an untrusted-content tool has returned.`,
	},
	{
		ID:    "rug-pull",
		Title: "Rug pulls and pinned tool definitions",
		Body:  `A server can change a tool's description or annotations after you have approved it: a rug pull. airlock fingerprints every tool definition and the server's instructions the first time it sees them (trust on first use). A later change blocks the tool until you review the difference and accept it in the TUI or with "airlock pins accept SERVER TOOL".`,
	},
	{
		ID:    "tool-annotations",
		Title: "Tool annotations and their defaults",
		Body:  `MCP tools may declare four hints: readOnlyHint (default false), destructiveHint (default true), idempotentHint (default false) and openWorldHint (default true). The specification says clients must treat annotations as untrusted unless they come from a trusted server. airlock therefore uses a server's declared hints only when you marked the server trusted; for any other server it assumes the worst-case defaults, whatever the server claims.`,
	},
	{
		ID:    "trust-tiers",
		Title: "How airlock sorts tools into tiers",
		Body:  `Every tool lands in one of four tiers: read (effectively read-only), write (changes things but is not destructive), destructive (the default for anything unknown) and blocked (never called). The policy decides what each tier does: by default reads run, writes and destructive calls ask you first. Each classification carries reasons you can read in the approval dialog.`,
	},
}

// searchDocsInput is the input of search_docs.
type searchDocsInput struct {
	Query string `json:"query" jsonschema:"Words to look for in the titles and texts of the docs, case-insensitive; every word must match. An empty query lists every doc."`
}

// docHit is one search result.
type docHit struct {
	ID    string `json:"id" jsonschema:"The doc's id, to pass to get_doc."`
	Title string `json:"title" jsonschema:"The doc's title."`
}

// searchDocsOutput is the structured result of search_docs.
type searchDocsOutput struct {
	Results []docHit `json:"results" jsonschema:"The matching docs, best match first."`
}

// getDocInput is the input of get_doc.
type getDocInput struct {
	ID string `json:"id" jsonschema:"The id of the doc to read, as search_docs returns it."`
}

// newDocs builds the docs server: a closed-world, read-only library.
func newDocs() *mcp.Server {
	s := mcp.NewServer(implementation("docs", "airlock demo: docs"), &mcp.ServerOptions{
		Instructions: "A small offline library about MCP and airlock. Use search_docs to find pages and get_doc to read one.",
	})
	closedRead := &mcp.ToolAnnotations{
		ReadOnlyHint:   true,
		IdempotentHint: true,
		OpenWorldHint:  ptr(false),
	}
	mcp.AddTool(s, &mcp.Tool{
		Name:        "search_docs",
		Title:       "Search docs",
		Description: "Search the built-in library of pages about MCP and airlock. Returns the id and title of every page that contains all the words of the query, best match first.",
		Annotations: closedRead,
	}, searchDocs)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "get_doc",
		Title:       "Read a doc",
		Description: "Return the full text of one page of the built-in library by its id (see search_docs).",
		Annotations: closedRead,
	}, getDoc)
	return s
}

func searchDocs(_ context.Context, _ *mcp.CallToolRequest, in searchDocsInput) (*mcp.CallToolResult, searchDocsOutput, error) {
	hits := matchDocs(in.Query)
	var b strings.Builder
	if len(hits) == 0 {
		fmt.Fprintf(&b, "no docs match %q", in.Query)
	} else {
		fmt.Fprintf(&b, "%d matching docs:", len(hits))
		for _, h := range hits {
			fmt.Fprintf(&b, "\n%s  %s", h.ID, h.Title)
		}
	}
	return textResult(b.String()), searchDocsOutput{Results: hits}, nil
}

// matchDocs returns the docs containing every word of query, those with more words
// in the title first, then by id. An empty query matches every doc.
func matchDocs(query string) []docHit {
	words := strings.Fields(strings.ToLower(query))
	type scored struct {
		hit   docHit
		score int
	}
	var found []scored
	for _, d := range corpus {
		title := strings.ToLower(d.ID + " " + d.Title)
		body := strings.ToLower(d.Body)
		score, ok := 0, true
		for _, w := range words {
			switch {
			case strings.Contains(title, w):
				score += 2
			case strings.Contains(body, w):
				score++
			default:
				ok = false
			}
		}
		if ok {
			found = append(found, scored{docHit{d.ID, d.Title}, score})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return b.score - a.score })
	hits := make([]docHit, len(found))
	for i, f := range found {
		hits[i] = f.hit
	}
	return hits
}

func getDoc(_ context.Context, _ *mcp.CallToolRequest, in getDocInput) (*mcp.CallToolResult, any, error) {
	for _, d := range corpus {
		if d.ID == in.ID {
			return textResult("# " + d.Title + "\n\n" + d.Body), nil, nil
		}
	}
	ids := make([]string, len(corpus))
	for i, d := range corpus {
		ids[i] = d.ID
	}
	return nil, nil, fmt.Errorf("no doc with id %q; the docs are: %s", in.ID, strings.Join(ids, ", "))
}
