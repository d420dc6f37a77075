package cli

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

// fencedSnapshot has three servers: fs fenced with no network, web without a
// sandbox, and mail whose sandbox was asked for and not applied (its detail holds
// an escape sequence, as an OS error may).
func fencedSnapshot() *model.Snapshot {
	return &model.Snapshot{Servers: []model.ServerInfo{
		{Name: "fs", Status: model.StatusReady, Fence: trust.Fence{Requested: true, Applied: true, Network: "none", Read: []string{"~/project"}, Write: []string{"~/project/out"}, Detail: "Landlock ABI 7, network namespace"}},
		{Name: "web", Status: model.StatusReady, Trust: trust.Trusted},
		{Name: "mail", Status: model.StatusReady, Fence: trust.Fence{Requested: true, Network: "none", Detail: "landlock_create_ruleset: \x1b[31mENOSYS"}},
		{Name: "box", Status: model.StatusReady, Fence: trust.Fence{Requested: true, Applied: true, Network: "all"}},
	}}
}

func TestCheckText_SandboxColumn(t *testing.T) {
	b := written(t, NewReport(fencedSnapshot()).WriteText)
	out := b.String()
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "SANDBOX") {
		t.Fatalf("header lacks SANDBOX:\n%s", out)
	}
	col := strings.Index(lines[0], "SANDBOX")
	for i, want := range []string{"fenced: no network", "—", "UNFENCED", "fenced"} {
		row := []rune(lines[i+1])
		head := []rune(lines[0])
		_ = head
		cell := strings.Fields(string(row[len([]rune(lines[0][:col])):]))
		if got := strings.Join(cell, " "); !strings.HasPrefix(got, want) {
			t.Errorf("row %d SANDBOX %q, want %q:\n%s", i, got, want, out)
		}
	}
	for _, want := range []string{
		"  fs: fenced: no network, reads ~/project, writes ~/project/out",
		"  mail: warning: unfenced: sandbox requested but not applied: landlock_create_ruleset: ⟨ESC⟩[31mENOSYS",
		"  box: fenced: network open",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("raw ESC in the text:\n%s", out)
	}
}

func TestCheckJSON_SandboxPerServer(t *testing.T) {
	b := written(t, NewReport(fencedSnapshot()).WriteJSON)
	var got struct {
		Servers []struct {
			Name    string         `json:"name"`
			Sandbox map[string]any `json:"sandbox"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{
		"fs":   {"requested": true, "applied": true, "network": "none", "read": []any{"~/project"}, "write": []any{"~/project/out"}, "detail": "Landlock ABI 7, network namespace"},
		"web":  {"requested": false, "applied": false, "network": "", "read": []any{}, "write": []any{}, "detail": ""},
		"mail": {"requested": true, "applied": false, "network": "none", "read": []any{}, "write": []any{}, "detail": "landlock_create_ruleset: \x1b[31mENOSYS"},
		"box":  {"requested": true, "applied": true, "network": "all", "read": []any{}, "write": []any{}, "detail": ""},
	}
	for _, s := range got.Servers {
		if d := cmp.Diff(want[s.Name], s.Sandbox); d != "" {
			t.Errorf("%s sandbox (-want +got):\n%s", s.Name, d)
		}
	}
	if bytes.Contains(b.Bytes(), []byte("\x1b")) {
		t.Error("raw ESC in the JSON")
	}
}

func TestFixHint_FenceServer(t *testing.T) {
	f := trust.Fix{Effect: trust.FixBreaks, Changes: []trust.Change{{Kind: trust.ChangeFenceServer, Server: "fs"}}}
	if got, want := fixText(f), `fence server fs with network = "none"`; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	if got, want := fixTOML(f), "[servers.fs.sandbox]\nnetwork = \"none\"\n"; got != want {
		t.Errorf("TOML %q, want %q", got, want)
	}
}

func TestCheckCIFormats_Sandbox(t *testing.T) {
	r := NewReport(fencedSnapshot())
	r.Drift = []model.DriftFinding{{Kind: model.DriftSandboxLoosened, Server: "fs", Detail: "network none in the snapshot, all now"}}
	sarif := written(t, sarifTo(r))
	if ruleIndex("drift-"+string(model.DriftSandboxLoosened)) < 0 {
		t.Error("SARIF has no rule for sandbox-loosened drift")
	}
	if err := sarifSchema(t).Validate(plainJSON(t, sarif.Bytes())); err != nil {
		t.Fatalf("SARIF invalid: %v", err)
	}
	var log sarifLog
	_ = json.Unmarshal(sarif.Bytes(), &log)
	unfenced := 0
	for _, res := range log.Runs[0].Results {
		if res.RuleID == sarifUnfencedID {
			unfenced++
			if res.Level != "warning" || !strings.Contains(res.Message.Text, "server mail: unfenced: sandbox requested but not applied: landlock_create_ruleset: ⟨ESC⟩[31mENOSYS") {
				t.Errorf("unfenced result %+v", res)
			}
		}
	}
	if unfenced != 1 {
		t.Errorf("%d unfenced results in SARIF, want 1 (mail)", unfenced)
	}
	junit := written(t, r.WriteJUnit)
	for _, want := range []string{`name="fs is fenced"`, `name="box is fenced"`, `name="mail is fenced"`, `<failure message="unfenced" type="unfenced-server">`} {
		if !strings.Contains(junit.String(), want) {
			t.Errorf("junit lacks %s:\n%s", want, junit.String())
		}
	}
	if strings.Count(junit.String(), `type="unfenced-server"`) != 1 || strings.Contains(junit.String(), `name="web is fenced"`) {
		t.Errorf("junit: want one unfenced failure and no case for web:\n%s", junit.String())
	}
	gh := written(t, r.WriteGitHub)
	if !strings.Contains(gh.String(), "::warning title=airlock%3A server mail unfenced::unfenced: sandbox requested but not applied: landlock_create_ruleset: ⟨ESC⟩[31mENOSYS\n") {
		t.Errorf("github lacks the unfenced warning:\n%s", gh.String())
	}
	mdown := written(t, r.WriteMarkdown)
	for _, want := range []string{"| server | status | trust | sandbox | tools | line |", "| fs | ready | ", " | fenced\\: no network, reads \\~/project, writes \\~/project/out | ", " | **unfenced\\: sandbox requested but not applied\\: landlock\\_create\\_ruleset\\: ⟨ESC⟩\\[31mENOSYS** | "} {
		if !strings.Contains(mdown.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, mdown.String())
		}
	}
}

// check --snapshot of the demo under the example config: mail is the trifecta's
// only exfiltration leg, and a stdio server, so fencing it is offered (on a system
// that fences), after the label drops and before untrusting or blocking.
func TestCheckReport_ProposesFencingTheExfiltrationLeg(t *testing.T) {
	r := offlineReport(t, Input{})
	tri := findHazard(t, r, trust.HazardLethalTrifecta)
	var texts []string
	for _, f := range tri.Fixes {
		texts = append(texts, f.Text)
	}
	at := -1
	for i, f := range tri.Fixes {
		if f.Text == `fence server mail with network = "none"` {
			at = i
			if f.TOML != "[servers.mail.sandbox]\nnetwork = \"none\"\n" || f.Effect != trust.FixBreaks {
				t.Errorf("fence hint %+v", f)
			}
		}
	}
	if runtime.GOOS == "windows" {
		if at >= 0 {
			t.Errorf("a fence is proposed on Windows: %q", texts)
		}
		return
	}
	if at < 0 {
		t.Fatalf("fixes %q lack the fence of mail", texts)
	}
	for _, f := range tri.Fixes[at+1:] {
		if k := f.Changes[0].Kind; k == trust.ChangeDenyTool && len(f.Changes) == 1 || k == trust.ChangeDropServerLabel || k == trust.ChangeDropToolLabel {
			t.Errorf("fixes %q: %s after the fence", texts, f.Text)
		}
	}
}
