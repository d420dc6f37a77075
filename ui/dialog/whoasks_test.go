package dialog

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

// longArgs is an argument list longer than any dialog's scroll region.
const longArgs = `{"to":"eve@example.com","cc":"mallory@example.com","bcc":"trent@example.com",` +
	`"subject":"quarterly numbers","body":"see attached","attachments":["a.pdf","b.pdf","c.pdf","d.pdf"],` +
	`"priority":"high","reply_to":"eve@example.com","tags":["finance","q3","urgent"],"draft":false,` +
	`"headers":{"x-mailer":"notes","x-trace":"1","x-origin":"web","x-a":"1","x-b":"2","x-c":"3","x-d":"4","x-e":"5"}}`

// agentAsks is an agent's destructive call through the gateway token ci-bot,
// tainted by a web fetch, with a long argument list.
func agentAsks() *model.Pending {
	p := pending(claimingTool(), longArgs)
	p.Request.Client = "claude-code"
	p.Request.Context = "token:ci-bot"
	p.Taint = trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch_url"}, CallID: "c5"}
	p.Verdict = trust.Decide(p.Tool.Class, false, p.Taint)
	return p
}

// whoAsksRows checks that the rows under the title say, in this order and
// before the arguments: who asks, the server and its trust, the tool and its
// tier, and why it asks.
func whoAsksRows(t *testing.T, size [2]int, v string, asker ...string) {
	t.Helper()
	var rows []string
	for _, l := range lines(v) {
		l = strings.Trim(l, "┃┏┓┗┛━│ ")
		if l != "" {
			rows = append(rows, l)
		}
	}
	want := [][]string{
		{"allow this call?"},
		asker,
		{"server", "mail", "? untrusted"},
		{"tool", "send_email", "destructive"},
		{"why", "taint"},
		{"arguments"},
	}
	if len(rows) < len(want) {
		t.Fatalf("%dx%d: %d rows:\n%s", size[0], size[1], len(rows), v)
	}
	for i, w := range want {
		for _, s := range w {
			if !strings.Contains(rows[i], s) {
				t.Errorf("%dx%d: row %d is %q, want it to hold %q:\n%s", size[0], size[1], i, rows[i], s, v)
			}
		}
	}
}

// The dialog's first lines say who asks (the agent and its token, or you),
// the server and its trust, the tool and its tier, and why it asks, at every
// size down to 60x20; a long argument list scrolls below them.
func TestConfirm_WhoAsksFirst(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}, {58, 17}} {
		c := NewConfirm(agentAsks(), plain(), testRules)
		c.SetSize(size[0], size[1])
		v := text(c.View())
		whoAsksRows(t, size, v, "agent", "claude-code", "token:ci-bot")
		if !strings.Contains(v, "more lines") {
			t.Errorf("%dx%d: the long arguments do not scroll:\n%s", size[0], size[1], v)
		}
		if size != [2]int{58, 17} {
			golden(t, filepath.Join("testdata", "confirm_whoasks_"+itoa(size[0])+"x"+itoa(size[1])+".golden"), v)
		}

		p := agentAsks()
		p.Request.Client, p.Request.Context = "", ""
		c = NewConfirm(p, plain(), testRules)
		c.SetSize(size[0], size[1])
		whoAsksRows(t, size, text(c.View()), "asks", "you")
	}
}

// A hyphenated name is never split at its hyphens into a look-alike
// ("⚠ from everything__trigger-"): the taint row and the reasons wrap at
// spaces only, at every size.
func TestConfirm_HyphenatedNamesStayWhole(t *testing.T) {
	const by = "everything__trigger-long-running-operation"
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		p := agentAsks()
		p.Taint = trust.Taint{By: trust.Ref{Server: "everything", Tool: "trigger-long-running-operation"}, CallID: "c5"}
		p.Verdict = trust.Decide(p.Tool.Class, false, p.Taint)
		c := NewConfirm(p, plain(), testRules)
		c.SetSize(size[0], size[1])
		c, _ = run(c, press("w"))
		// the whole scrolled body: frames of a paged view can part a row from the
		// line it wraps onto
		all := flat(c.vp.GetContent())
		if !strings.Contains(all, "from "+by) {
			t.Errorf("%dx%d: the taint row does not show %q whole:\n%s", size[0], size[1], by, all)
		}
		if strings.Contains(all, "trigger- ") || strings.Contains(all, "long- ") {
			t.Errorf("%dx%d: a name is split at a hyphen:\n%s", size[0], size[1], all)
		}
	}
}

// The dialog's help line fits its width by leaving out whole bindings from
// its end, never cutting one mid-word ("↑/↓ scrol…").
func TestConfirm_HelpLineDropsWholeBindings(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		c := NewConfirm(agentAsks(), plain(), testRules)
		c.SetSize(size[0], size[1])
		ls := lines(text(c.View()))
		help := strings.Trim(ls[len(ls)-2], "┃ ")
		whole := map[string]bool{}
		for _, b := range c.KeyMap().ShortHelp() {
			whole[b.Help().Key+" "+b.Help().Desc] = true
		}
		items := strings.Split(strings.TrimSuffix(strings.TrimSuffix(help, "…"), " "), " • ")
		for _, it := range items {
			if !whole[it] {
				t.Errorf("%dx%d: the help line %q cuts %q", size[0], size[1], help, it)
			}
		}
	}
}
