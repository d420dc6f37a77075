package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/trust"
)

// TestHistory_OpenViewSave: H opens the protocol history of the server in view (here
// from its info), the handshake is in it both ways; enter shows the first message's
// bytes, s writes exactly them to a new 0600 file named by airlock in the save
// folder; esc goes back to the list, then to the info view; the help lists H.
func TestHistory_OpenViewSave(t *testing.T) {
	h := exploreHarnessTrust(t, 80, 24, trust.Trusted)
	h.keys("tab", "j", "i")
	if h.m.screen != screenInfo {
		t.Fatalf("i did not open the server info:\n%s", h.plain())
	}
	h.keys("H")
	if h.m.screen != screenHistory || h.m.history.H.Server != "lib" {
		t.Fatalf("H did not open lib's history:\n%s", h.plain())
	}
	screenHas(t, h.plain(), "History · lib", "→ req   initialize #1", "← resp  initialize #1", "tools/list")
	h.keys("home", "enter")
	raw := h.m.history.Raw
	if raw == nil || raw.Method != "initialize" || !raw.Out {
		t.Fatalf("enter on the first message: %+v\n%s", raw, h.plain())
	}
	screenHas(t, h.plain(), "request initialize #1 · sent by airlock", `"method": "initialize"`)
	h.keys("s")
	h.waitFor("the saved message", func(m Model) bool { return len(m.history.Saved) == 1 })
	p := h.m.history.Saved[raw.Seq]
	if filepath.Dir(p) != h.m.opts.SaveDir || !strings.HasPrefix(filepath.Base(p), "airlock-lib-initialize-") || filepath.Ext(p) != ".json" {
		t.Errorf("saved to %s", p)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the saved file: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(p); string(b) != string(raw.Raw) {
		t.Errorf("the file holds %q, want the message's bytes %q", b, raw.Raw)
	}
	screenHas(t, h.plain(), "saved to")
	h.keys("esc")
	if h.m.screen != screenHistory || h.m.history.Raw != nil {
		t.Fatalf("esc from the bytes did not return to the list")
	}
	h.keys("esc")
	if h.m.screen != screenInfo {
		t.Fatalf("esc from the history did not return to the info view")
	}
	h.keys("?")
	screenHas(t, h.plain(), "history: the protocol messages of a server or agent session")
}

// TestServerInfo_PingAndLogLevel: in a server's info, P pings it and shows the
// latency (the status line and the info view); L asks for log messages from the next
// level up (debug first), sent as logging/setLevel and shown in the history.
func TestServerInfo_PingAndLogLevel(t *testing.T) {
	h := exploreHarnessTrust(t, 80, 24, trust.Trusted)
	h.keys("tab", "j", "i")
	h.keys("P")
	h.waitFor("the ping's answer", func(m Model) bool { return strings.Contains(m.info.Ping, "answered in") })
	screenHas(t, h.plain(), "ping", "✓ answered in", "answered ping in")
	h.keys("L")
	h.waitFor("the log level", func(m Model) bool { return m.info.LogLevel == "debug" })
	screenHas(t, h.plain(), "log level", "debug and more severe")
	h.keys("L")
	h.waitFor("the next log level", func(m Model) bool { return m.info.LogLevel == "info" })
	h.keys("H")
	hist := h.m.history.H
	var pings, levels int
	for _, e := range hist.Messages {
		switch e.Method {
		case "ping":
			pings++
		case "logging/setLevel":
			levels++
		}
	}
	if pings != 2 || levels != 4 {
		t.Errorf("history: %d ping messages, %d logging/setLevel messages; want 2 and 4", pings, levels)
	}
}

// TestHistory_TabToAgentSession: in the history, tab steps from the servers to the
// agent sessions at the gateway: the agent's own exchange, named as the dialog names
// an agent, both ways with methods; tab past the last source returns to the first
// server; the help line names tab.
func TestHistory_TabToAgentSession(t *testing.T) {
	h := exploreHarnessTrust(t, 80, 24, trust.Trusted)
	cs := gatewayAgent(t, h.m.sess)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	h.keys("H")
	if h.m.screen != screenHistory {
		t.Fatalf("H did not open the history:\n%s", h.plain())
	}
	screenHas(t, h.plain(), "tab source")
	for range len(h.m.snap.Servers) {
		h.keys("tab")
	}
	if h.m.history.H.Agent == "" {
		t.Fatalf("tab past every server did not show the agent session:\n%s", h.plain())
	}
	screenHas(t, h.plain(), "History · agent session 1 · gw-agent · token:default", "← req   initialize", "→ resp  initialize", "← req   tools/list", "→ resp  tools/list")
	h.keys("tab")
	if h.m.history.H.Agent != "" || h.m.history.H.Server != h.m.snap.Servers[0].Name {
		t.Errorf("tab past the agent session: agent %q, server %q", h.m.history.H.Agent, h.m.history.H.Server)
	}
}
