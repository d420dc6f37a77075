package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/safetext"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// maxShownBytes bounds one shown value (arguments, a result block); the rest is
// counted out loud, never cut silently.
const maxShownBytes = 64 << 10

// Prompter answers `airlock call`'s approvals on a terminal: it shows everything the
// person needs to decide and reads the answer. Without a terminal (Interactive false)
// it denies, unless Yes allows once. It never defaults to yes: an empty answer denies.
type Prompter struct {
	In          io.Reader
	Out         io.Writer
	Interactive bool
	Yes         bool
}

// Approve implements model.Approver.
func (p Prompter) Approve(ctx context.Context, pd *model.Pending) (model.Response, error) {
	WritePending(p.Out, pd)
	if p.Yes {
		fmt.Fprintln(p.Out, "--yes given: allowed once (nobody was asked).")
		return model.Response{Answer: model.AllowOnce, By: trust.DecidedByFlag}, nil
	}
	if !p.Interactive {
		fmt.Fprintln(p.Out, "Not a terminal and no --yes: denied.")
		return model.Response{Answer: model.Deny, Reason: "no terminal to ask on (pass --yes to allow it once)", By: trust.DecidedByPolicy}, nil
	}
	destructive := pd.Tool.Class.Tier >= trust.TierDestructive
	if destructive {
		fmt.Fprintf(p.Out, "This call is DESTRUCTIVE. Type the tool name (%s) to allow it once; anything else denies: ", safetext.Escape(pd.Tool.Ref.Tool))
	} else {
		fmt.Fprintf(p.Out, "Allow this %s once? [y/N] ", askWhat(pd.Tool))
	}
	line, err := readLine(ctx, p.In)
	if err != nil {
		fmt.Fprintln(p.Out)
		if ctx.Err() != nil {
			// Nobody answered in time, or the call was withdrawn: no answer of the
			// person's, so the engine records the timeout or the withdrawal.
			return model.Response{}, ctx.Err()
		}
		return model.Response{Answer: model.Deny, Reason: "no answer"}, nil
	}
	line = strings.TrimSpace(line)
	if destructive && line == pd.Tool.Ref.Tool || !destructive && (line == "y" || line == "Y" || line == "yes") {
		return model.Response{Answer: model.AllowOnce}, nil
	}
	return model.Response{Answer: model.Deny, Reason: "denied at the prompt"}, nil
}

// DecidedLine is the line `airlock call`, `read` and `prompt` print after a
// result: how it was decided, in words (model.DecidedSentence, never the audit
// log's value), and how long it took.
func DecidedLine(v trust.Verdict, took time.Duration) string {
	return "(" + model.DecidedSentence(v.Action, v.By) + ", in " + took.Round(time.Millisecond).String() + ")"
}

func readLine(ctx context.Context, r io.Reader) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := bufio.NewReader(r).ReadString('\n')
		if err == io.EOF && s != "" {
			err = nil
		}
		ch <- res{s, err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// askWhat names what a question is about: a call, or a channel decided like one.
func askWhat(t model.ToolInfo) string {
	switch t.Channel {
	case trust.KindResources:
		return "resource read"
	case trust.KindPrompts:
		return "prompt get"
	}
	return "call"
}

// WritePending writes what an approval is about: server, tool, trust, tier, every
// reason, declared vs effective hints, taint, and the full arguments, escaped and in
// a gutter so nothing in them can pass for airlock's own lines (the secrets found
// in them masked).
func WritePending(w io.Writer, pd *model.Pending) {
	t := pd.Tool
	e := safetext.Inline
	fmt.Fprintf(w, "\nairlock: this %s needs your approval\n", askWhat(t))
	fmt.Fprintf(w, "  server:  %s (%s %s)\n", e(t.Ref.Server), theme.TrustGlyph(t.ServerTrust), t.ServerTrust)
	fmt.Fprintf(w, "  tool:    %s\n", e(t.Ref.Tool))
	fmt.Fprintf(w, "  tier:    %s\n", theme.TierLabel(t.Class.Tier))
	if pd.Request.Client != "" {
		fmt.Fprintf(w, "  agent:   %s (context %s)\n", e(pd.Request.Client), e(pd.Request.Context))
	}
	fmt.Fprintf(w, "  hints:   %s\n", HintsLine(t.Declared, t.Class.Effective))
	if pd.Taint.Tainted() {
		if pd.Taint.Subject != "" {
			fmt.Fprintf(w, "  taint:   %s\n", e(pd.Taint.Reason()))
		} else {
			fmt.Fprintf(w, "  taint:   tainted by %s (call %s)\n", e(pd.Taint.By.Qualified()), e(pd.Taint.CallID))
		}
	}
	fmt.Fprintln(w, "  why it asks:")
	for _, r := range pd.Verdict.Reasons {
		fmt.Fprintf(w, "    - %s\n", e(r))
	}
	fmt.Fprintf(w, "  arguments (sha256 %s…):\n", pd.ArgsSHA256[:12])
	args := pd.Request.Args
	if len(pd.Secrets) > 0 && len(pd.ArgsMasked) > 0 {
		// A terminal's scrollback keeps what is printed: the secrets stay masked.
		fmt.Fprintln(w, "    (secrets masked; the hash and the call are of the arguments as sent)")
		args = pd.ArgsMasked
	}
	fmt.Fprintln(w, safetext.Block(PrettyJSON(args), "    │ ", maxShownBytes))
}

// HintsLine shows declared vs effective hints in one line, e.g.
// "read_only declared=true effective=false · destructive declared=absent effective=true".
func HintsLine(d trust.Declared, eff trust.Effective) string {
	show := func(name string, decl *bool, got bool) string {
		ds := "absent"
		if decl != nil {
			ds = fmt.Sprint(*decl)
		}
		return fmt.Sprintf("%s declared=%s effective=%v", name, ds, got)
	}
	return strings.Join([]string{
		show("read_only", d.Hints.ReadOnly, eff.ReadOnly),
		show("destructive", d.Hints.Destructive, eff.Destructive),
		show("idempotent", d.Hints.Idempotent, eff.Idempotent),
		show("open_world", d.Hints.OpenWorld, eff.OpenWorld),
	}, " · ")
}

// PrettyJSON indents JSON for reading; invalid JSON is returned as it is.
func PrettyJSON(b []byte) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return string(b)
	}
	return buf.String()
}

// WriteResult writes a call result: each content block by kind, structured content as
// pretty JSON, and isError clearly marked. Binary content is described by type and
// size, never written to the terminal.
func WriteResult(w io.Writer, res *mcp.CallToolResult) {
	if res.IsError {
		fmt.Fprintln(w, "✗ the tool reported an error (isError):")
	} else {
		fmt.Fprintln(w, "✓ result:")
	}
	const gutter = "  │ "
	writeContents(w, res.Content)
	if res.StructuredContent != nil {
		b, err := json.MarshalIndent(res.StructuredContent, "", "  ")
		if err == nil {
			fmt.Fprintln(w, "  structured content:")
			fmt.Fprintln(w, safetext.Block(string(b), gutter, maxShownBytes))
		}
	}
}

// writeContents writes content blocks by kind (a call's result, a prompt's
// messages): text in a gutter, binary described by type and size.
func writeContents(w io.Writer, contents []mcp.Content) {
	const gutter = "  │ "
	for _, c := range contents {
		switch c := c.(type) {
		case *mcp.TextContent:
			fmt.Fprintln(w, safetext.Block(c.Text, gutter, maxShownBytes))
		case *mcp.ImageContent:
			fmt.Fprintf(w, "  [image %s, %d bytes]\n", safetext.Inline(c.MIMEType), len(c.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(w, "  [audio %s, %d bytes]\n", safetext.Inline(c.MIMEType), len(c.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(w, "  [resource link %s %s]\n", safetext.Inline(c.URI), safetext.Inline(c.Name))
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				fmt.Fprintf(w, "  [embedded resource %s]\n", safetext.Inline(c.Resource.URI))
				if c.Resource.Text != "" {
					fmt.Fprintln(w, safetext.Block(c.Resource.Text, gutter, maxShownBytes))
				}
			}
		default:
			b, _ := json.Marshal(c)
			fmt.Fprintln(w, safetext.Block(string(b), gutter, maxShownBytes))
		}
	}
}
