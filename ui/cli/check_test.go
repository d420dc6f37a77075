package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

func hostileReport() Report {
	return Report{
		Servers: []ServerReport{
			{Name: "evil", Status: model.StatusReady, Trust: trust.Untrusted, Protocol: "2025-11-25\x1b]0;pwned\x07",
				Notices: []string{"tools/list repeated a cursor\r\x1b[2K✔ all good"}},
			{Name: "gone", Status: model.StatusFailed, Error: errors.New("exit status 1; stderr: \x1b[31mboom\x1b[0m").Error(), Trust: trust.Trusted},
		},
		Tools: []ToolReport{
			{Server: "evil", Name: "delete\x1b[2J_repo", Qualified: "evil__delete\x1b[2J_repo", Tier: trust.TierDestructive, Policy: trust.Ask, Pin: trust.PinNew, Legs: []trust.Leg{}},
			{Server: "evil", Name: "tab\tname\nnext", Qualified: "evil__tab\tname\nnext", Tier: trust.TierBlocked, Policy: trust.Deny, Pin: trust.PinNew, Legs: []trust.Leg{}},
		},
		Hazards: []HazardReport{{Hazard: trust.Hazard{
			Kind: trust.HazardShadowing, Severity: trust.SeverityHigh, Unguarded: true,
			Legs:    map[string][]string{"shadowing": {"evil__x\u202e"}, "shadowed": {"mail__send_email"}},
			Summary: "evil__x\u202e's description names another server's tool mail__send_email",
		}, ID: "shadowing:0123456789ab", Fixes: []FixHint{}}},
	}
}

// Every server-controlled string in the text table is escaped: no raw ESC, CR, bidi
// control; names cannot break the table with tabs or newlines.
func TestWriteTextEscapes(t *testing.T) {
	b := written(t, hostileReport().WriteText)
	out := b.String()
	for _, bad := range []string{"\x1b", "\r", "\a", "\u202e", "name\nnext"} {
		if strings.Contains(out, bad) {
			t.Errorf("output contains raw %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{"⟨ESC⟩[2J", "⟨ESC⟩]0;pwned⟨BEL⟩", "⟨CR⟩⟨ESC⟩[2K✔ all good", "⟨U+202E⟩", "tab⟨TAB⟩name⟨LF⟩next",
		"▲ destructive", "⊘ blocked", "✗ failed", "UNGUARDED", "⟨ESC⟩[31mboom"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// check --json keeps the raw values (JSON escapes them) and the exact documented shape.
func TestWriteJSONShape(t *testing.T) {
	r := hostileReport()
	r.Tools[0].Declared = json.RawMessage(`{"readOnlyHint":true}`)
	r.Tools[1].Declared = json.RawMessage("null")
	b := written(t, r.WriteJSON)
	if strings.Contains(b.String(), "\x1b") {
		t.Error("raw ESC in JSON output")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &top); err != nil {
		t.Fatal(err)
	}
	got := map[string][]map[string]any{}
	for _, k := range []string{"servers", "tools", "hazards"} {
		var v []map[string]any
		if err := json.Unmarshal(top[k], &v); err != nil {
			t.Fatal(err)
		}
		got[k] = v
	}
	var topKeys []string
	for k := range top {
		topKeys = append(topKeys, k)
	}
	slices.Sort(topKeys)
	if k := strings.Join(topKeys, ","); k != "config,drift,hazards,schema_version,servers,source,tools,verdict" {
		t.Errorf("top keys = %s", k)
	}
	keys := func(m map[string]any) string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		slices.Sort(k)
		return strings.Join(k, ",")
	}
	if k := keys(got["servers"][1]); k != "error,instructions_changed,name,prompts,protocol,resource_templates,resources,sandbox,status,trust" {
		t.Errorf("server keys = %s", k)
	}
	if k := keys(got["tools"][0]); k != "declared,effective,legs,name,pin,policy,qualified,reasons,served_name,server,tier" {
		t.Errorf("tool keys = %s", k)
	}
	if k := keys(got["hazards"][0]); k != "baselined,fixes,id,kind,legs,severity,summary,unguarded" {
		t.Errorf("hazard keys = %s", k)
	}
	if got["tools"][1]["declared"] != nil {
		t.Errorf("absent annotations = %v, want null", got["tools"][1]["declared"])
	}
	if got["tools"][0]["name"] != "delete\x1b[2J_repo" {
		t.Errorf("JSON must carry the raw name, got %q", got["tools"][0]["name"])
	}
}

// TestCheckJSON_EscapesControlsBidiZeroWidth: check --json carries the raw values, but
// no C0/C1 control, DEL, bidi or zero-width character reaches the output as itself:
// each is a \u escape, so a terminal or a reviewer's editor shows what is there.
func TestCheckJSON_EscapesControlsBidiZeroWidth(t *testing.T) {
	hostile := "a\x7fb\u0085c\u009bd\u202ee\u2066f\u200bg\u200dh\ufeffi\u00adj\U000E0041k\u061cl\u2028m"
	r := hostileReport()
	r.Tools[0].Name = hostile
	r.Tools[0].Declared = json.RawMessage(`{"title":"` + hostile + `"}`)
	r.Servers[0].Error = hostile
	b := written(t, r.WriteJSON)
	out := b.String()
	for i, c := range out {
		if c < ' ' && c != '\n' || c == 0x7f || c >= 0x80 && c <= 0x9f || unicode.Is(unicode.Cf, c) || c == 0x2028 || c == 0x2029 {
			t.Fatalf("raw %U at byte %d of the JSON output", c, i)
		}
	}
	for _, want := range []string{`\u007f`, `\u0085`, `\u009b`, `\u202e`, `\u2066`, `\u200b`, `\ufeff`, `\udb40\udc41`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s", want)
		}
	}
	var got struct {
		Servers []struct {
			Error string `json:"error"`
		} `json:"servers"`
	}
	var decoded struct {
		Tools []struct {
			Name     string          `json:"name"`
			Declared json.RawMessage `json:"declared"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(b.Bytes(), &decoded)
	if decoded.Tools[0].Name != hostile || got.Servers[0].Error != hostile {
		t.Errorf("the escaped JSON does not decode to the raw values: %q", decoded.Tools[0].Name)
	}
	var title struct{ Title string }
	if err := json.Unmarshal(decoded.Tools[0].Declared, &title); err != nil || title.Title != hostile {
		t.Errorf("declared title = %q (%v), want the raw value", title.Title, err)
	}
}

// TestCheck_EnvNamesShown: check shows which variables a stdio server receives, by
// name, in the table and the JSON.
func TestCheck_EnvNamesShown(t *testing.T) {
	r := hostileReport()
	r.Servers[0].Env = []string{"HOME", "PATH", "API_\x1bKEY"}
	var text, js bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "evil: environment: HOME PATH API_⟨ESC⟩KEY") {
		t.Errorf("table lacks the environment names:\n%s", text.String())
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Servers []struct {
			Env []string `json:"env"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Servers[0].Env, r.Servers[0].Env) {
		t.Errorf("JSON env = %q", got.Servers[0].Env)
	}
}
