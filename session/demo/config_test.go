package demo

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

func TestConfig(t *testing.T) {
	c := Config()
	if c.Policy != trust.DefaultPolicy() {
		t.Errorf("Policy = %+v, want %+v", c.Policy, trust.DefaultPolicy())
	}
	if c.ApprovalTimeout != 2*time.Minute {
		t.Errorf("ApprovalTimeout = %v, want 2m", c.ApprovalTimeout)
	}
	if c.Gateway != nil || c.Path != "" {
		t.Errorf("Gateway = %v, Path = %q; want nil and empty", c.Gateway, c.Path)
	}
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Name)
		if s.Transport != config.TransportStdio || s.Command != "airlock" || !slices.Equal(s.Args, []string{"demo-server", s.Name}) {
			t.Errorf("server %s starts as %s %q %q, want stdio airlock demo-server %s", s.Name, s.Transport, s.Command, s.Args, s.Name)
		}
		if s.ConnectTimeout != config.DefaultConnectTimeout || s.CallTimeout != config.DefaultCallTimeout {
			t.Errorf("server %s timeouts = %v, %v", s.Name, s.ConnectTimeout, s.CallTimeout)
		}
	}
	if !slices.Equal(names, Names()) {
		t.Errorf("servers = %q, want %q in that order", names, Names())
	}
	// The demo's point: three trusted servers, one untrusted liar, private notes.
	want := map[string]string{
		"docs":  "trusted []",
		"mail":  "untrusted []",
		"notes": "trusted [private-data]",
		"web":   "trusted []",
	}
	for _, s := range c.Servers {
		if got := fmt.Sprintf("%s %s", s.Trust, s.Labels); got != want[s.Name] {
			t.Errorf("server %s trust and labels = %s, want %s", s.Name, got, want[s.Name])
		}
	}
	if Config() == c || &Config().Servers[0] == &c.Servers[0] {
		t.Error("Config() shares memory between calls")
	}
}

// designKeys are the keys the config schema defines, by table; "*" stands for any
// name, and a nil entry means the table's own keys are free (env, headers). [limits]
// and servers.*.elicitation are defined in docs/approval-core.md; servers.*.tools.*.rules
// and rules_file in docs/rules.md; servers.*.roots in docs/sampling-and-roots.md;
// servers.*.sandbox in docs/fencing.md;
// audit.sync_before_forward and audit.segment_bytes in docs/audit-durability.md;
// gateway.name_budget in docs/gateway-names.md; limits.calls_per_minute,
// limits.rate_action and the rate and rate_action of servers.* and servers.*.tools.*
// in docs/design.md ("Rate limits"); notify.command in docs/approval.md.
var designKeys = map[string][]string{
	"":                  {"policy", "gateway", "audit", "servers", "limits", "rules_file", "notify"},
	"notify":            {"command"},
	"limits":            {"max_args_bytes", "max_waiting_per_context", "max_waiting_bytes", "taint_prune_after_days", "calls_per_minute", "rate_action"},
	"policy":            {"read", "write", "destructive", "approval_timeout"},
	"gateway":           {"listen", "allow_remote", "name_budget"},
	"audit":             {"path", "sync_before_forward", "segment_bytes"},
	"servers":           {"*"},
	"servers.*":         {"command", "args", "env", "inherit_env", "trust", "labels", "tools", "url", "transport", "headers", "protocol", "connect_timeout", "call_timeout", "oauth", "elicitation", "roots", "sandbox", "rate", "rate_action"},
	"servers.*.sandbox": {"read", "write", "network", "required", "memory", "cpu_seconds", "processes"},
	"servers.*.oauth":   {"client_id", "client_secret", "client_metadata_url", "issuer", "scopes", "redirect_port"},
	"servers.*.env":     nil,
	"servers.*.headers": nil,
	"servers.*.tools":   {"*"},
	"servers.*.tools.*": {"policy", "read_only", "destructive", "idempotent", "open_world", "labels", "rules", "rate", "rate_action"},
}

// checkKeys reports every key under m (at path, in designKeys' pattern form) that
// the config schema does not define.
func checkKeys(t *testing.T, what string, m map[string]any, pattern, path string) {
	t.Helper()
	allowed, known := designKeys[pattern]
	if !known {
		t.Errorf("%s: table %s is not in the config schema", what, path)
		return
	}
	if allowed == nil {
		return
	}
	for k, v := range m {
		childPattern, childPath := k, k
		if pattern != "" {
			childPath = path + "." + k
		}
		switch {
		case slices.Contains(allowed, "*"):
			childPattern = pattern + ".*"
		case slices.Contains(allowed, k):
			if pattern != "" {
				childPattern = pattern + "." + k
			}
		default:
			t.Errorf("%s: key %s is not in the config schema", what, childPath)
			continue
		}
		if sub, ok := v.(map[string]any); ok {
			checkKeys(t, what, sub, childPattern, childPath)
		}
	}
}

func TestConfigExample(t *testing.T) {
	data, err := os.ReadFile("../../config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]any
	if _, err := toml.Decode(string(data), &file); err != nil {
		t.Fatalf("config.example.toml: %v", err)
	}
	checkKeys(t, "config.example.toml", file, "", "")

	// The commented-out examples must be valid too once uncommented.
	uncommented := regexp.MustCompile(`(?m)^# ?(\[[a-z0-9._-]+\]|[a-z_]+ = .*)$`).ReplaceAll(data, []byte("$1"))
	var all map[string]any
	if _, err := toml.Decode(string(uncommented), &all); err != nil {
		t.Fatalf("config.example.toml with its examples uncommented: %v", err)
	}
	checkKeys(t, "config.example.toml uncommented", all, "", "")
	for _, table := range []string{"gateway", "audit"} {
		if _, ok := all[table]; !ok {
			t.Errorf("config.example.toml has no commented-out [%s] example", table)
		}
	}

	policy := file["policy"].(map[string]any)
	c := Config()
	wantPolicy := map[string]any{
		"read":             c.Policy.Read.String(),
		"write":            c.Policy.Write.String(),
		"destructive":      c.Policy.Destructive.String(),
		"approval_timeout": "2m",
	}
	for k, v := range wantPolicy {
		if policy[k] != v {
			t.Errorf("policy.%s = %v, want %v as in Config()", k, policy[k], v)
		}
	}

	servers := file["servers"].(map[string]any)
	if len(servers) != len(c.Servers) {
		t.Errorf("config.example.toml has %d servers, Config() %d", len(servers), len(c.Servers))
	}
	for _, s := range c.Servers {
		raw, ok := servers[s.Name].(map[string]any)
		if !ok {
			t.Errorf("config.example.toml has no [servers.%s]", s.Name)
			continue
		}
		trustWord, _ := raw["trust"].(string)
		if trustWord == "" {
			trustWord = trust.Untrusted.String()
		}
		got := fmt.Sprintf("%v %v %s %v", raw["command"], raw["args"], trustWord, raw["labels"])
		want := fmt.Sprintf("%s %v %s %v", s.Command, toAny(s.Args), s.Trust, labelsOrNil(s.Labels))
		if got != want {
			t.Errorf("[servers.%s] = %s, Config() says %s", s.Name, got, want)
		}
		tools, _ := raw["tools"].(map[string]any)
		if len(tools) != len(s.Tools) {
			t.Errorf("[servers.%s] has %d tool tables, Config() %d", s.Name, len(tools), len(s.Tools))
		}
		for name, tool := range s.Tools {
			rt, _ := tools[name].(map[string]any)
			if rt["policy"] != tool.Policy.String() {
				t.Errorf("servers.%s.tools.%s.policy = %v, Config() says %s", s.Name, name, rt["policy"], tool.Policy)
			}
		}
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// labelsOrNil prints like a decoded TOML labels array, or like an absent key.
func labelsOrNil(ls []trust.Leg) any {
	if len(ls) == 0 {
		return nil
	}
	out := make([]any, len(ls))
	for i, l := range ls {
		out[i] = string(l)
	}
	return out
}
