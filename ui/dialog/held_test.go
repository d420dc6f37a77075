package dialog

import (
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

// heldSource is where the policy of these tests holds the tool.
const heldSource = "policy: /etc/airlock/policy.toml:12"

// held is a write call the team policy holds at ask: the engine refuses a grant
// or an "always" for it, so the dialog must not offer one.
func held() *model.Pending {
	tool := writeTool()
	tool.Managed = &model.PolicyHold{Action: trust.Ask, Source: heldSource}
	tool.Class.Reasons = append(tool.Class.Reasons, "the team policy asks before this tool's calls ("+heldSource+")")
	p := pending(tool, `{"title":"groceries","path":"/srv/project/list.txt"}`)
	p.Held = tool.Managed.PolicyHeld()
	return p
}

// A held call's dialog offers Allow once and Deny only, says why in its "why" row,
// and no sequence of keys, typed early or late, answers more than this one call.
func TestConfirm_HeldOffersOnlyOnce(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}} {
		c := NewConfirm(held(), plain(), testRules)
		c.SetSize(size[0], size[1])
		v := flat(c.View())
		for _, no := range []string{"Allow for this context", "Always allow", "Always deny"} {
			if strings.Contains(v, no) {
				t.Errorf("%dx%d: a held call's dialog offers %q:\n%s", size[0], size[1], no, text(c.View()))
			}
		}
		if c.OffersContextGrant() || c.OffersAlwaysAllow() {
			t.Errorf("%dx%d: offers context %v, always %v", size[0], size[1], c.OffersContextGrant(), c.OffersAlwaysAllow())
		}
		if !strings.Contains(v, "why policy: /etc/airlock/policy.toml:12") {
			t.Errorf("%dx%d: the why row does not say the policy holds it:\n%s", size[0], size[1], text(c.View()))
		}
		c, _ = run(c, press("w"))
		if v := flat(c.View()); size[0] >= 80 && !strings.Contains(v, "it cannot be allowed for the context or always") {
			t.Errorf("%dx%d: the unfolded reasons do not say what the policy holds:\n%s", size[0], size[1], text(c.View()))
		}
	}
	// Every key a person might press, in runs: whatever it decides is this call's
	// yes or a no, and never a grant or a rule.
	keys := []string{"right", "right", "right", "right", "right", "enter", "ctrl+y", "enter", "esc"}
	for start := range keys {
		c := NewConfirm(held(), plain(), testRules)
		var msgs []tea.Msg
		for _, k := range keys[start:] {
			msgs = append(msgs, press(k))
		}
		for _, k := range []string{"1", "2", "3", "4", "a", "A", "y"} {
			msgs = append([]tea.Msg{press(k)}, msgs...)
		}
		_, act := run(c, msgs...)
		switch a := act.(type) {
		case AllowCall:
			if a.Scope != model.AllowOnce || a.Remember != nil {
				t.Errorf("keys %v: allowed %v, rule %+v", keys[start:], a.Scope, a.Remember)
			}
		case DenyCall:
			if a.Remember != nil {
				t.Errorf("keys %v: denied with a rule %+v", keys[start:], a.Remember)
			}
		}
	}
}

// The engine-facing paths are inert for a held call even when reached directly:
// arming a grant or opening the rule editor says why and decides nothing.
func TestConfirm_HeldRefusesBroaderAnswers(t *testing.T) {
	c := NewConfirm(held(), plain(), testRules)
	c2, act, _ := c.allow(model.AllowForContext, nil)
	if act != nil || c2.Armed() {
		t.Fatalf("a context grant armed for a held call (action %v)", act)
	}
	if v := flat(c2.View()); !strings.Contains(v, "cannot be allowed for the context or always") {
		t.Errorf("no message on the refused grant:\n%s", text(c2.View()))
	}
	c3, _, _ := c.openRule(trust.Allow)
	if c3.TypingReason() {
		t.Errorf("the rule editor opened for a held call")
	}
	c4, _, _ := c.allow(model.AllowOnce, &model.RuleProposal{})
	if c4.Armed() {
		t.Errorf("an always-allow armed for a held call")
	}
}

func TestConfirmHeldGolden(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}} {
		c := NewConfirm(held(), plain(), testRules)
		c.SetSize(size[0], size[1])
		golden(t, filepath.Join("testdata", "confirm_held_"+itoa(size[0])+"x"+itoa(size[1])+".golden"), text(c.View()))
	}
}

// A call a rule of the policy's made ask: the "why" row names the rule's file and
// line, and the call is held as well.
func TestConfirm_HeldByPolicyRuleNamesFileLine(t *testing.T) {
	p := pending(writeTool(), `{"title":"a","path":"/tmp/x"}`)
	r, err := trust.NewRule("servers.notes.tools.create_note.rules[0]", trust.Ask, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Source = "policy /etc/airlock/policy.toml:7"
	p.Rule = &r
	p.Held = "the team policy's rule " + r.Label() + " decides this call: it cannot be allowed for the context or always"
	c := NewConfirm(p, plain(), testRules)
	c.SetSize(60, 20)
	if v := flat(c.View()); !strings.Contains(v, "why policy: /etc/airlock/policy.toml:7") {
		t.Errorf("the why row does not name the policy's rule:\n%s", text(c.View()))
	}
}
