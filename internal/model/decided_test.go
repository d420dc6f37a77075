package model

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/trust"
)

// decidedByValues reads every constant of type trust.DecidedBy from trust's
// source, so that a value added there without a sentence here fails the test.
func decidedByValues(t *testing.T) []trust.DecidedBy {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "../../trust/decide.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []trust.DecidedBy
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "DecidedBy" {
				continue
			}
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok {
					continue
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, trust.DecidedBy(s))
			}
		}
	}
	if len(out) < 15 {
		t.Fatalf("read %d DecidedBy values from trust/decide.go: %v", len(out), out)
	}
	return out
}

// Every decider has a sentence for each way a call ends, and none of them is
// the value itself: people read the sentence, the log keeps the value.
func TestDecidedSentence_EveryValue(t *testing.T) {
	want := map[trust.DecidedBy][2]string{ // allow, deny
		trust.DecidedByPolicy:          {"allowed by policy", "denied by policy"},
		trust.DecidedByRule:            {"allowed by an argument rule", "denied by an argument rule"},
		trust.DecidedByGrant:           {"allowed by your allow for this context; nobody saw this call", "denied, though your allow for this context covered it"},
		trust.DecidedByPerson:          {"you allowed it", "you denied it"},
		trust.DecidedByTaintThenPerson: {"asked because of taint; you allowed it", "asked because of taint; you denied it"},
		trust.DecidedByFlag:            {"allowed with --yes on the command line; nobody was asked", "denied, though --yes on the command line allowed it"},
		trust.DecidedByTaintThenFlag:   {"asked because of taint; allowed with --yes on the command line, nobody was asked", "asked because of taint; denied, though --yes on the command line allowed it"},
		trust.DecidedByTimeout:         {"nobody answered in time", "denied: nobody answered in time"},
		trust.DecidedByAgentCancelled:  {"the caller withdrew it while it waited", "withdrawn by its caller while it waited"},
		trust.DecidedByAgentGone:       {"its agent disconnected before it ran", "withdrawn: its agent disconnected before it ran"},
		trust.DecidedByPin:             {"the tool's definition changed", "denied: the tool's definition changed since it was pinned"},
		trust.DecidedByDisabled:        {"the tool is turned off", "denied: the tool is turned off"},
		trust.DecidedByUnknownTool:     {"the server lists no such tool", "refused: the server lists no such tool"},
		trust.DecidedByTaint:           {"asks because of taint", "refused because this context is tainted"},
		trust.DecidedBySecret:          {"asks because its arguments hold a secret", "denied because its arguments hold a secret"},
	}
	for _, by := range decidedByValues(t) {
		w, ok := want[by]
		if !ok {
			t.Errorf("decided_by %q has no sentence in this table", by)
			continue
		}
		for i, a := range []trust.Action{trust.Allow, trust.Deny} {
			got := DecidedSentence(a, by)
			if got != w[i] {
				t.Errorf("DecidedSentence(%s, %q) = %q, want %q", a, by, got, w[i])
			}
			if strings.Contains(got, string(by)) && strings.Contains(string(by), "-") {
				t.Errorf("DecidedSentence(%s, %q) = %q shows the value", a, by, got)
			}
		}
		if DecidedSentence(trust.Ask, by) == "" {
			t.Errorf("DecidedSentence(ask, %q) is empty", by)
		}
	}
	if got := DecidedSentence(trust.Deny, "robot"); got != `denied by "robot"` {
		t.Errorf("an unknown value reads %q", got)
	}
	if got := DecidedSentence(trust.ActionUnset, ""); got != "not decided" {
		t.Errorf("no decision reads %q", got)
	}
}

// The documentation lists every value written to the audit log.
func TestDecidedBy_EveryValueDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/approval-core.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, by := range decidedByValues(t) {
		if !strings.Contains(string(doc), "| `"+string(by)+"` |") {
			t.Errorf("docs/approval-core.md's table of decided_by values has no row for %q", by)
		}
	}
}
