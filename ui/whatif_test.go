package ui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/BurntSushi/toml"
	"github.com/charmbracelet/x/ansi"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/demo"
	"github.com/airlock-mcp/airlock/session/pins"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/question"
)

var (
	refSend   = trust.Ref{Server: "mail", Tool: "send_email"}
	refCreate = trust.Ref{Server: "notes", Tool: "create_note"}
)

// hasHazard reports whether the model's snapshot holds a hazard of kind k.
func hasHazard(m Model, k trust.HazardKind) bool {
	for _, h := range m.snap.Hazards {
		if h.Kind == k {
			return true
		}
	}
	return false
}

// bannerText is the banner as shown, without styling.
func bannerText(m Model) string { return ansi.Strip(strings.Join(m.banner, "\n")) }

// tierOf is a tool's tier in the model's snapshot.
func tierOf(t *testing.T, m Model, r trust.Ref) trust.Tier {
	t.Helper()
	tl, ok := m.snap.Tool(r.Server, r.Tool)
	if !ok {
		t.Fatalf("%s is not in the snapshot", r.Qualified())
	}
	return tl.Class.Tier
}

func TestServerTrustCycleRecomputesBannerAndTiers(t *testing.T) {
	h := newHarness(t, 80, 24, false)
	if !strings.Contains(bannerText(h.m), "LETHAL TRIFECTA") {
		t.Fatalf("the demo starts without the trifecta in the banner:\n%s", h.plain())
	}
	h.keys("tab", "down", "down") // the servers pane, on mail (untrusted in the config)
	if h.m.servers.Selected() != "mail" {
		t.Fatalf("selected server %q, want mail", h.m.servers.Selected())
	}

	h.keys("T") // untrusted → blocked
	h.waitFor("mail to be blocked", func(m Model) bool { s, _ := m.snap.Server("mail"); return s.Trust == trust.BlockedServer })
	if hasHazard(h.m, trust.HazardLethalTrifecta) || strings.Contains(bannerText(h.m), "LETHAL TRIFECTA") {
		t.Errorf("blocking mail left the trifecta in the banner:\n%s", h.plain())
	}
	if got := tierOf(t, h.m, refSend); got != trust.TierBlocked {
		t.Errorf("mail__send_email is %v with mail blocked", got)
	}
	screen := h.plain()
	screenHas(t, screen, "▸*✓ mail       ⊘ blocked", "⊘1", "▸*⊘ blocked     mail__send_email", "* 1 unsaved change")
	if !h.sess.Unsaved() {
		t.Error("the session has no unsaved change after T")
	}

	h.keys("T") // blocked → trusted: now mail's read-only claim is believed (it loosens: the chord)
	h.armQuestion()
	h.keys("right", "enter", "ctrl+y")
	h.waitFor("mail to be trusted", func(m Model) bool { s, _ := m.snap.Server("mail"); return s.Trust == trust.Trusted })
	if got := tierOf(t, h.m, refSend); got != trust.TierRead {
		t.Errorf("mail__send_email of a trusted mail is %v, want read (its claim is taken)", got)
	}

	h.keys("T") // trusted → untrusted, the config's value: no change left
	h.waitFor("mail back to untrusted", func(m Model) bool { s, _ := m.snap.Server("mail"); return s.Trust == trust.Untrusted })
	if h.sess.Unsaved() || strings.Contains(h.plain(), "unsaved") {
		t.Errorf("three presses did not return to the config:\n%s", h.plain())
	}
	if !strings.Contains(bannerText(h.m), "LETHAL TRIFECTA") || tierOf(t, h.m, refSend) != trust.TierDestructive {
		t.Errorf("the trifecta or the destructive tier did not come back:\n%s", h.plain())
	}
	if strings.Contains(h.plain(), "*✓ mail") {
		t.Error("mail is still marked changed")
	}
}

// A live change made elsewhere (the gateway's side, another view) arrives as
// OverridesChanged, and the root takes a new snapshot for every child.
func TestOverridesChangedRefreshesEveryChild(t *testing.T) {
	h := newHarness(t, 80, 24, true)
	if err := h.sess.SetDisabled(refSend, true); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the event to reach the tools pane", func(m Model) bool { return m.tools.Changed[refSend] })
	if hasHazard(h.m, trust.HazardLethalTrifecta) {
		t.Error("the snapshot kept the trifecta")
	}
	screenHas(t, h.plain(), " *⊘ blocked     mail__send_email", "* 1 unsaved change")
}

func TestHazardsViewListsLegsAndBreaksTheTrifecta(t *testing.T) {
	h := newHarness(t, 100, 40, false)
	h.keys("z")
	if h.m.screen != screenHazards {
		t.Fatalf("z opened screen %v, want the hazards view", h.m.screen)
	}
	screen := h.plain()
	screenHas(t, screen, "‼ critical · LETHAL TRIFECTA", "✓ guarded", "untrusted-content · 2 tools",
		"private-data · 3 tools", "exfiltration · 1 tool", "notes__list_notes", "web__fetch_url",
		"! high · OPEN-WORLD EXFILTRATION", "UNTRUSTED → DESTRUCTIVE")
	// The first tool row is web__fetch_url, the untrusted-content leg's first tool
	// (it runs unasked; mail__send_email asks).
	if ref, _ := h.m.hazards.Selected(); ref.Qualified() != "web__fetch_url" {
		t.Fatalf("cursor on %v, want web__fetch_url", ref)
	}
	h.keys("down")
	if ref, _ := h.m.hazards.Selected(); ref != refSend {
		t.Fatalf("down moved to %v, want mail__send_email", ref)
	}

	h.keys("x")
	h.waitFor("the trifecta to break", func(m Model) bool { return !hasHazard(m, trust.HazardLethalTrifecta) })
	screen = h.plain()
	if strings.Contains(screen, "LETHAL TRIFECTA") {
		t.Errorf("the trifecta is still on screen:\n%s", screen)
	}
	screenHas(t, screen, "* Changed in this session · 1 unsaved", "* mail__send_email", "* off for this session", "* 1 unsaved change")
	if ref, _ := h.m.hazards.Selected(); ref != refSend {
		t.Fatalf("after x the cursor is on %v, want mail__send_email in the changes", ref)
	}

	// p cycles the policy override: none → ask → deny → none.
	for _, want := range []trust.Action{trust.Ask, trust.Deny, trust.ActionUnset} {
		h.keys("p")
		h.waitFor("policy "+want.String(), func(m Model) bool { a := m.over.Policy[refSend]; return a == want })
	}
	screenHas(t, h.plain(), "* off for this session")

	h.keys("x") // back on, which loosens (the chord): the trifecta returns, the change is gone
	if !frontIs(h.m, question.KindChoice) {
		t.Fatalf("x turning mail__send_email back on did not ask:\n%s", h.plain())
	}
	h.armQuestion()
	h.keys("x", "enter") // stray keys keep it off
	h.settle()
	if !h.sess.Overrides().Disabled[refSend] {
		t.Fatal("a stray key turned mail__send_email back on")
	}
	h.keys("x")
	h.armQuestion()
	h.keys("right", "enter", "ctrl+y")
	h.waitFor("the trifecta to return", func(m Model) bool { return hasHazard(m, trust.HazardLethalTrifecta) })
	if h.sess.Unsaved() {
		t.Errorf("changes left: %+v", h.sess.Overrides())
	}

	h.keys("enter") // details of the tool under the cursor, and back
	if h.m.screen != screenDetail {
		t.Fatalf("enter opened %v", h.m.screen)
	}
	h.keys("esc")
	if h.m.screen != screenHazards {
		t.Errorf("esc from details opened from hazards went to %v", h.m.screen)
	}
	h.keys("esc")
	if h.m.screen != screenMain {
		t.Errorf("esc from hazards went to %v", h.m.screen)
	}
}

func TestExportWritesAFragmentThatParses(t *testing.T) {
	dir := t.TempDir()
	cfg := demo.Config()
	cfg.Path = filepath.Join(dir, "config.toml")
	set := demo.NewSet()
	inproc := map[string]*mcp.Server{}
	for _, n := range demo.Names() {
		inproc[n] = set.Server(n)
	}
	sess := startManager(t, cfg, inproc)
	h := newHarnessFor(t, sess, 80, 24, false, Options{Title: "test"})
	if h.m.keys.Export.Enabled() {
		t.Error("E is enabled with nothing to export")
	}
	h.keys("z", "down", "x") // mail__send_email off
	h.waitFor("the change", func(m Model) bool { return m.over.Disabled[refSend] })
	h.keys("esc", "tab", "down", "down", "down", "T") // notes: trusted → untrusted
	h.waitFor("notes untrusted", func(m Model) bool { s, _ := m.snap.Server("notes"); return s.Trust == trust.Untrusted })
	screenHas(t, h.plain(), "* 2 unsaved changes")

	h.keys("E")
	h.waitFor("the export view", func(m Model) bool { return m.screen == screenExport })
	path := filepath.Join(dir, "config.changes.toml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the fragment was not written next to the config: %v", err)
	}
	var frag struct {
		Servers map[string]struct {
			Trust string
			Tools map[string]struct{ Policy string }
		}
	}
	if _, err := toml.Decode(string(data), &frag); err != nil {
		t.Fatalf("the fragment is not TOML: %v\n%s", err, data)
	}
	if !strings.Contains(string(data), `# [servers.notes] is already in the config: set trust = "untrusted" there`) {
		t.Errorf("the fragment does not say to set notes' trust in its table:\n%s", data)
	}
	if got := frag.Servers["mail"].Tools["send_email"].Policy; got != "deny" {
		t.Errorf("send_email policy in the fragment = %q, want deny (turned off)", got)
	}
	if _, err := os.Stat(cfg.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the config file itself was touched: %v", err)
	}
	content := ansi.Strip(h.m.export.Content())
	screenHas(t, content, "✓ written to\n  "+path, "Your config was not modified", "Append this fragment", "by hand",
		`│ # [servers.notes] is already in the config: set trust = "untrusted"`, "│ [servers.mail.tools.send_email]", `│ policy = "deny"`)
	h.keys("esc")
	if h.m.screen != screenMain {
		t.Errorf("esc from the export went to %v", h.m.screen)
	}
}

func TestQueueListsPendingCallsOldestFirst(t *testing.T) {
	var tick atomic.Int64
	clock := func() time.Time { return fixedNow.Add(time.Duration(tick.Add(1)) * time.Second) }
	set := demo.NewSet()
	inproc := map[string]*mcp.Server{}
	for _, n := range demo.Names() {
		inproc[n] = set.Server(n)
	}
	pins, err := pins.Open("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess := startWithOptions(t, demo.Config(), session.Options{InProcess: inproc, Pins: pins, Now: clock})
	h := newHarnessFor(t, sess, 100, 30, true, Options{Title: "demo"})
	h.m.now = func() time.Time { return fixedNow.Add(10 * time.Minute) }

	first := agentCall(ctx, sess, "notes__create_note", `{"title":"first","body":""}`)
	h.waitFor("the first dialog", func(m Model) bool { return uiQueued(m) == 1 })
	second := agentCall(ctx, sess, "notes__delete_note", `{"id":"note-1"}`)
	h.waitFor("the second dialog", func(m Model) bool { return uiQueued(m) == 2 })
	h.armQuestion()
	screenHas(t, h.plain(), "⚑ 2 approvals waiting (a: queue)", "a queue")

	// a is text while a denial's reason is typed.
	h.keys("d", "a")
	if h.m.queue.Open {
		t.Fatal("a typed into the reason opened the queue")
	}
	h.keys("esc") // back to choosing, nothing decided
	if len(sess.Engine().Pending()) != 2 {
		t.Fatal("leaving the reason field decided a call")
	}

	h.keys("a")
	if !h.m.queue.Open {
		t.Fatal("a did not open the queue")
	}
	screen := h.plain()
	screenHas(t, screen, "Approval queue · 2 waiting · oldest first", "test-agent · agent-1", "denied in")
	create, del := strings.Index(screen, "notes__create_note"), strings.Index(screen, "notes__delete_note")
	if create < 0 || del < 0 || create > del {
		t.Fatalf("the queue is not oldest first (create_note at %d, delete_note at %d):\n%s", create, del, screen)
	}
	items := h.m.queueItems()
	if !items[0].Created.Before(items[1].Created) {
		t.Fatalf("the clock did not separate the calls: %v, %v", items[0].Created, items[1].Created)
	}

	// enter on the second brings its dialog to the front; it arms afresh.
	h.keys("down", "enter")
	if h.m.queue.Open || frontPending(h.m).Tool.Ref.Tool != "delete_note" {
		t.Fatalf("enter on delete_note: queue open %v, shown %s", h.m.queue.Open, frontPending(h.m).Tool.Ref.Qualified())
	}
	if h.m.q.Armed() {
		t.Fatal("the dialog brought to the front was armed at once")
	}
	h.armQuestion()
	h.keys("esc") // deny delete_note
	var denied *model.DeniedError
	if err := outcome(t, second); !errors.As(err, &denied) {
		t.Fatalf("delete_note: %v, want denied", err)
	}
	h.waitFor("one dialog left", func(m Model) bool { return uiQueued(m) == 1 })
	if frontPending(h.m).Tool.Ref.Tool != "create_note" {
		t.Errorf("left: %s", frontPending(h.m).Tool.Ref.Qualified())
	}
	h.armQuestion()
	h.keys("right", "enter", "ctrl+y")
	if err := outcome(t, first); err != nil {
		t.Errorf("create_note allowed once: %v", err)
	}
}

func TestGatewayURLInTitleAndHelp(t *testing.T) {
	sess, _ := newDemo(t)
	h := newHarnessFor(t, sess, 100, 30, false, Options{Title: "demo",
		GatewayURL: "http://127.0.0.1:7878/mcp", GatewayHint: "airlock gateway snippet claude"})
	screenHas(t, h.plain(), "⇄ gateway http://127.0.0.1:7878/mcp")
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	screenHas(t, strings.Split(h.plain(), "\n")[0], "gateway http://127.0.0.1:7878/mcp")
	h.keys("?")
	help := ansi.Strip(h.m.overlay.VP.GetContent())
	screenHas(t, help, "Connect an agent", "http://127.0.0.1:7878/mcp", "airlock gateway snippet claude",
		"Hazards view (z)", "Approval queue (a)", "export what-if changes")
	if i, j := strings.Index(help, "Connect an agent"), strings.Index(help, "Everywhere"); i < 0 || i > j {
		t.Error("the gateway section is not first")
	}
}

func TestTourStepsDriveTheRealUI(t *testing.T) {
	if tourPage != demo.InjectionURL {
		t.Fatalf("tourPage %q is not the demo's injection page %q", tourPage, demo.InjectionURL)
	}
	sess, set := newDemo(t)
	h := newHarnessFor(t, sess, 80, 24, true, Options{Title: "demo", Demo: set.Notes().RugPull, Tour: true})
	fits := func(step string) {
		t.Helper()
		lines := strings.Split(h.plain(), "\n")
		if len(lines) != 24 {
			t.Errorf("%s: %d lines", step, len(lines))
		}
		for i, l := range lines {
			// Under a modal the compositor trims trailing blanks.
			if w := ansi.StringWidth(l); w > 80 || (w != 80 && !h.m.modalOpen()) {
				t.Errorf("%s: line %d is %d wide: %q", step, i, w, l)
			}
		}
	}

	// 1: the trifecta, in the banner and the hazards view.
	if h.m.screen != screenHazards {
		t.Fatalf("the tour starts on %v, want the hazards view", h.m.screen)
	}
	screenHas(t, h.plain(), "Tour 1/4 · The lethal trifecta", "LETHAL TRIFECTA", "space/n next")
	fits("step 1")

	// 2: the server that lies about read-only.
	h.keys("n")
	if h.m.screen != screenDetail || h.m.detail.Tool.Ref != refSend {
		t.Fatalf("step 2 shows %v of %v, want mail__send_email's details", h.m.screen, h.m.detail.Tool.Ref)
	}
	if selected(h.m) != "mail__send_email" {
		t.Errorf("the tools pane selects %q", selected(h.m))
	}
	screenHas(t, h.plain(), "Tour 2/4", "⚠ claims read-only")
	fits("step 2")
	h.keys("b")
	if h.m.tour.step != 0 || h.m.screen != screenHazards {
		t.Fatalf("b went to step %d on %v", h.m.tour.step, h.m.screen)
	}
	h.keys("n")

	// 3: taint escalation: a real fetch, then a call whose policy allows it and
	// which asks only because of taint.
	h.keys("space")
	h.waitFor("the taint-escalated dialog", func(m Model) bool { return uiQueued(m) == 1 })
	h.armQuestion()
	p := frontPending(h.m)
	if p.Tool.Ref != refSend || p.Verdict.By != trust.DecidedByTaint {
		t.Fatalf("dialog for %v decided by %q, want mail__send_email by taint", p.Tool.Ref, p.Verdict.By)
	}
	if p.Tool.Class.Action != trust.Allow {
		t.Errorf("send_email's policy is %v: the ask is not caused by taint alone", p.Tool.Class.Action)
	}
	if len(p.Verdict.Reasons) == 0 || !strings.Contains(p.Verdict.Reasons[0], "web__fetch_url") {
		t.Errorf("the dialog's reasons do not name web__fetch_url: %q", p.Verdict.Reasons)
	}
	screen := h.plain()
	// Why it asks is its summary line, in view without scrolling, and the
	// Arguments are on screen.
	screenHas(t, screen, "allow this call?", "why     this context is tainted: web__fetch_url", `"to": "attacker@evil.example"`, "Tour 3/4")
	fits("step 3")
	if h.m.screen != screenResult || h.m.result.Res.Tool.Ref != tourFetch {
		t.Errorf("under the dialog: %v, want the fetched page", h.m.screen)
	}
	// One round trip to notes first, so that it has surely processed the client's
	// initialized notification before its tool list changes.
	if _, err := sess.Call(context.Background(), model.CallRequest{Server: "notes", Tool: "list_notes"}); err != nil {
		t.Fatal(err)
	}
	h.keys("n") // the tour moves on while the dialog waits for the presenter
	if h.m.tour.step != 3 {
		t.Fatalf("n over the dialog left the tour on step %d", h.m.tour.step+1)
	}
	if uiQueued(h.m) != 1 {
		t.Fatal("advancing the tour closed the dialog")
	}
	h.keys("esc") // the presenter denies
	h.waitFor("the denial", func(m Model) bool { return strings.Contains(m.status, "denied") })

	// 4: the rug pull blocks create_note, and its diff is shown.
	h.waitFor("create_note blocked", func(m Model) bool {
		tl, ok := m.snap.Tool("notes", "create_note")
		return ok && tl.Pin == trust.PinChanged
	})
	h.waitFor("its details", func(m Model) bool { return m.screen == screenDetail && m.detail.Tool.Ref == refCreate })
	screenHas(t, h.plain(), "Tour 4/4 · Rug pull", "Changed since pinned")
	fits("step 4")

	h.keys("n") // past the last step: the tour ends
	if h.m.tour.on || h.m.screen != screenMain || h.m.layout.captionH != 0 {
		t.Errorf("after the last step: tour %v, screen %v, caption %d rows", h.m.tour.on, h.m.screen, h.m.layout.captionH)
	}
	fits("after the tour")
}

func TestEscLeavesTheTour(t *testing.T) {
	sess, set := newDemo(t)
	h := newHarnessFor(t, sess, 80, 24, false, Options{Title: "demo", Demo: set.Notes().RugPull, Tour: true})
	h.keys("esc")
	if h.m.tour.on || h.m.screen != screenMain || strings.Contains(h.plain(), "Tour 1/4") {
		t.Errorf("esc did not leave the tour:\n%s", h.plain())
	}
	h.keys("n") // no tour: n does nothing special
	if h.m.tour.on {
		t.Error("n restarted the tour")
	}
	// Outside the tour, help lists no tour keys.
	h2 := newHarnessFor(t, sess, 80, 24, false, Options{})
	h2.keys("?")
	if strings.Contains(ansi.Strip(h2.m.overlay.VP.GetContent()), "Guided tour") {
		t.Error("help lists the tour outside it")
	}
}

// At every size each step's caption says how to go on (its keys are never the
// part that is dropped) and a caption cut to its rows ends in one ellipsis right
// after a word, not in "……" or padding then "…".
func TestTourCaptionKeepsItsKeysAtEverySize(t *testing.T) {
	for _, sz := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		sess, set := newDemo(t)
		h := newHarnessFor(t, sess, sz[0], sz[1], false, Options{Title: "demo", Demo: set.Notes().RugPull, Tour: true})
		for step := range len(tourSteps()) {
			h.m.tour.step = step
			lines := h.m.captionLines(sz[0])
			if len(lines) == 0 || !strings.Contains(ansi.Strip(lines[0]), "space/n next") {
				t.Errorf("%dx%d step %d: the caption's first line does not say how to go on: %q", sz[0], sz[1], step+1, ansi.Strip(strings.Join(lines, "\n")))
			}
			for _, l := range lines {
				l = strings.TrimRight(ansi.Strip(l), " ")
				if strings.HasSuffix(l, "……") || strings.HasSuffix(l, " …") {
					t.Errorf("%dx%d step %d: a cut caption line ends %q", sz[0], sz[1], step+1, l)
				}
			}
		}
	}
}

// A what-if that loosens takes the guarded chord: a stray T cannot raise a
// server's trust (blocked → trusted), a stray p cannot drop a deny override; only
// → enter ctrl+y makes the change. Tightening (untrusted → blocked, trusted →
// untrusted, ask → deny) stays one key.
func TestWhatIf_LooseningTakesTheChord(t *testing.T) {
	h := newHarness(t, 80, 24, false)
	h.keys("tab", "down", "down") // the servers pane, on mail (untrusted in the config)
	if h.m.servers.Selected() != "mail" {
		t.Fatalf("selected server %q, want mail", h.m.servers.Selected())
	}
	h.keys("T") // untrusted → blocked: tightens, one key
	h.waitFor("mail to be blocked", func(m Model) bool { s, _ := m.snap.Server("mail"); return s.Trust == trust.BlockedServer })
	if frontIs(h.m, question.KindChoice) {
		t.Fatalf("blocking mail asked:\n%s", h.plain())
	}

	h.keys("T") // blocked → trusted: loosens
	if !frontIs(h.m, question.KindChoice) {
		t.Fatalf("T on blocked mail did not ask:\n%s", h.plain())
	}
	screenHas(t, h.plain(), "Raise mail's trust to trusted?", "Keep it", "Raise it")
	h.keys("tab", "enter") // before it armed: ignored
	h.armQuestion()
	h.keys("T", "y", "t", "enter") // no letter raises it; enter on "Keep it" keeps
	h.settle()
	if s, _ := h.m.snap.Server("mail"); s.Trust != trust.BlockedServer || h.sess.Overrides().Trust["mail"] != trust.BlockedServer {
		t.Fatalf("stray keys changed mail's trust to %v", s.Trust)
	}
	screenHas(t, h.m.status, "kept mail blocked")
	h.keys("T")
	h.armQuestion()
	h.keys("right", "enter")
	h.settle()
	if s, _ := h.m.snap.Server("mail"); s.Trust != trust.BlockedServer {
		t.Fatal("right, enter raised mail's trust before the chord")
	}
	h.keys("ctrl+y")
	h.waitFor("mail trusted", func(m Model) bool { s, _ := m.snap.Server("mail"); return s.Trust == trust.Trusted })
	h.keys("T") // trusted → untrusted: tightens, one key (the config's value)
	h.waitFor("mail untrusted", func(m Model) bool { s, _ := m.snap.Server("mail"); return s.Trust == trust.Untrusted })
	if frontIs(h.m, question.KindChoice) {
		t.Fatalf("lowering mail's trust asked:\n%s", h.plain())
	}

	// p in the hazards view on mail__send_email: none → ask → deny at one key each,
	// deny → none (its tier's policy) asks.
	h.keys("esc", "z", "down") // web__fetch_url runs unasked: first; mail__send_email next
	if ref, _ := h.m.hazards.Selected(); ref != refSend {
		t.Fatalf("cursor on %v, want mail__send_email", ref)
	}
	for _, want := range []trust.Action{trust.Ask, trust.Deny} {
		h.keys("p")
		h.waitFor("policy "+want.String(), func(m Model) bool { return m.over.Policy[refSend] == want })
		if frontIs(h.m, question.KindChoice) {
			t.Fatalf("p to %v asked:\n%s", want, h.plain())
		}
	}
	h.keys("p")
	if !frontIs(h.m, question.KindChoice) {
		t.Fatalf("p on a deny override did not ask:\n%s", h.plain())
	}
	screenHas(t, h.plain(), "Loosen mail__send_email's policy?", "Loosen it")
	h.armQuestion()
	h.keys("p", "enter")
	h.settle()
	if h.sess.Overrides().Policy[refSend] != trust.Deny {
		t.Fatalf("stray keys dropped the deny override: %+v", h.sess.Overrides().Policy)
	}
	h.keys("p")
	h.armQuestion()
	h.keys("right", "enter", "ctrl+y")
	h.waitFor("the override dropped", func(m Model) bool { _, ok := m.over.Policy[refSend]; return !ok })
}

// settle feeds Update the messages that arrive within a short while, so that a
// change a key started (in a Cmd) has landed before the test looks.
func (h *harness) settle() {
	h.t.Helper()
	for {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-time.After(150 * time.Millisecond):
			return
		}
	}
}

// The question before raising a server's trust, armed, at 60x20, 80x24 and 120x40:
// it says what changes and that only the chord makes it.
func TestWhatIf_RaiseTrustQuestionGolden(t *testing.T) {
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		h := newHarness(t, size[0], size[1], false)
		h.keys("tab", "down", "down", "T")
		h.waitFor("mail to be blocked", func(m Model) bool { s, _ := m.snap.Server("mail"); return s.Trust == trust.BlockedServer })
		h.keys("T")
		h.armQuestion()
		h.keys("right", "enter")
		screen := h.plain()
		if !strings.Contains(screen, "ctrl+y") {
			t.Errorf("%dx%d: the question does not say ctrl+y:\n%s", size[0], size[1], screen)
		}
		golden(t, "raise_trust_"+itoa(size[0])+"x"+itoa(size[1])+".golden", screen)
	}
}
