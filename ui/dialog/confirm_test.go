package dialog

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/internal/keytest"
	"github.com/airlock-mcp/airlock/ui/theme"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func keys(names ...string) []tea.Msg {
	var msgs []tea.Msg
	for _, n := range names {
		msgs = append(msgs, press(n))
	}
	return msgs
}

func TestConfirmKeys(t *testing.T) {
	write := func() *model.Pending { return pending(writeTool(), `{"title":"a"}`) }
	destructive := func() *model.Pending { return pending(claimingTool(), `{"to":"eve@example.com"}`) }
	deny := DenyCall{ID: 7}
	once := AllowCall{ID: 7, Scope: model.AllowOnce}
	forContext := AllowCall{ID: 7, Scope: model.AllowForContext}

	tests := []struct {
		name string
		p    func() *model.Pending
		msgs []tea.Msg
		want Action
	}{
		{"focus starts on Deny: enter denies", write, keys("enter"), deny},
		{"esc denies without a reason", write, keys("esc"), deny},
		{"o is no allow key", write, keys("o", "enter"), deny},
		{"c is no allow key", write, keys("c", "enter"), deny},
		{"a, y, space and digits allow nothing", write, keys("a", "y", "space", "1", "2"), nil},
		{"tab moves no focus: tab, enter denies", write, keys("tab", "enter"), deny},
		{"tab, tab, enter denies", write, keys("tab", "tab", "enter"), deny},
		{"the screens' keys move no focus: j, l, h, space, enter denies", write, keys("j", "l", "h", "space", "k", "enter"), deny},
		{"right, enter only asks for the chord", write, keys("right", "enter"), nil},
		{"right, enter, ctrl+y allows once", write, keys("right", "enter", "ctrl+y"), once},
		{"right, enter, enter allows nothing", write, keys("right", "enter", "enter"), nil},
		{"right, enter, y allows nothing", write, keys("right", "enter", "y"), nil},
		{"right, enter, any other key goes back to Deny", write, keys("right", "enter", "tab", "enter"), deny},
		{"right, ctrl+y allows nothing", write, keys("right", "ctrl+y"), nil},
		{"right right enter ctrl+y allows for this context", write, keys("right", "right", "enter", "ctrl+y"), forContext},
		{"right right enter only asks for the chord", write, keys("right", "right", "enter"), nil},
		{"right stops at the last button, Always deny…, which only opens its rule", write, keys("right", "right", "right", "right", "right", "right", "enter"), nil},
		{"shift+tab from Deny stays on Deny", write, keys("shift+tab", "enter"), deny},
		{"left from Deny stays on Deny", write, keys("left", "enter"), deny},
		{"right then left is back on Deny", write, keys("right", "left", "enter"), deny},
		{"y alone allows nothing", write, keys("y"), nil},
		{"scrolling decides nothing", write, keys("up", "down", "pgup", "pgdown", "home", "end"), nil},
		{"d opens the reason field and decides nothing", write, keys("d"), nil},
		{"d, reason, enter denies with the reason", write,
			append(append(keys("d"), typeText("too risky")...), press("enter")),
			DenyCall{ID: 7, Reason: "too risky"}},
		{"d, enter denies with no reason", write, keys("d", "enter"), deny},
		{"in the reason field tab and letters are text, not allow keys", write,
			keys("d", "o", "c", "tab", "enter"), DenyCall{ID: 7, Reason: "oc"}},
		{"d then esc goes back without deciding", write, keys("d", "esc"), nil},
		{"d, esc, right, enter, ctrl+y allows once", write, keys("d", "x", "esc", "right", "enter", "ctrl+y"), once},
		{"d, esc, enter denies without the abandoned reason", write, keys("d", "x", "esc", "enter"), deny},

		{"destructive: tab, enter denies", destructive, keys("tab", "enter"), deny},
		{"destructive: →, enter only asks for the chord", destructive, keys("right", "enter"), nil},
		{"destructive: →, enter, ctrl+y allows once", destructive, keys("right", "enter", "ctrl+y"), once},
		{"destructive: → → is Always deny…: enter, ctrl+y allows nothing", destructive, keys("right", "right", "enter", "ctrl+y"), nil},
		{"destructive: y is not the chord", destructive, keys("right", "enter", "y"), nil},
		{"destructive: capital Y is not the chord", destructive, keys("right", "enter", "Y"), nil},
		{"destructive: enter is not the chord", destructive, keys("right", "enter", "enter"), nil},
		{"destructive: any other key goes back to Deny", destructive, keys("right", "enter", "n", "enter"), deny},
		{"destructive: n, then ctrl+y allows nothing", destructive, keys("right", "enter", "n", "ctrl+y"), nil},
		{"destructive: esc only goes back", destructive, keys("right", "enter", "esc"), nil},
		{"destructive: esc, esc denies", destructive, keys("right", "enter", "esc", "esc"), deny},
		{"destructive: ctrl+y without an allow does nothing", destructive, keys("ctrl+y"), nil},
		{"destructive: enter on Deny still denies at once", destructive, keys("enter"), deny},
		{"destructive: d and a reason deny at once", destructive,
			append(keys("d"), append(typeText("no"), press("enter"))...), DenyCall{ID: 7, Reason: "no"}},
		{"tainted destructive call: →, enter only asks for the chord", tainted, keys("right", "enter"), nil},
		{"tainted destructive call: →, enter, ctrl+y allows once", tainted, keys("right", "enter", "ctrl+y"), once},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewConfirm(tt.p(), plain(), testRules)
			_, got := run(c, tt.msgs...)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("action (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfirmID(t *testing.T) {
	c := NewConfirm(pending(writeTool(), `{}`), plain(), testRules)
	if c.ID() != 7 {
		t.Errorf("ID() = %d, want 7", c.ID())
	}
}

func TestConfirmResponse(t *testing.T) {
	tests := []struct {
		a    Action
		want model.Response
	}{
		{AllowCall{ID: 3, Scope: model.AllowOnce}, model.Response{Answer: model.AllowOnce}},
		{AllowCall{ID: 3, Scope: model.AllowForContext}, model.Response{Answer: model.AllowForContext}},
		{DenyCall{ID: 3, Reason: "no"}, model.Response{Answer: model.Deny, Reason: "no"}},
	}
	for _, tt := range tests {
		id, got, ok := Response(tt.a)
		if !ok || id != 3 {
			t.Errorf("Response(%#v) id=%d ok=%v, want 3 true", tt.a, id, ok)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Response(%#v) (-want +got):\n%s", tt.a, diff)
		}
	}
	if _, _, ok := Response(nil); ok {
		t.Error("Response(nil) ok = true, want false")
	}
}

func TestConfirmArmedSaysSo(t *testing.T) {
	const msg = "This call is DESTRUCTIVE. Press ctrl+y to allow it; any other key goes back."
	c := NewConfirm(pending(claimingTool(), `{}`), plain(), testRules)
	if strings.Contains(flat(c.View()), msg) {
		t.Fatalf("the dialog is armed before any key:\n%s", text(c.View()))
	}
	c, _ = run(c, press("right"), press("enter"))
	if !c.Armed() || !strings.Contains(flat(c.View()), msg) {
		t.Fatalf("after →, enter the view does not say %q:\n%s", msg, text(c.View()))
	}
	if got := helpKeys(c); !strings.Contains(got, "ctrl+y allow this destructive call") || strings.Contains(got, "tab") {
		t.Errorf("armed help = %q, want only y and the cancel hint", got)
	}
	c, _ = run(c, press("n"))
	if c.Armed() || strings.Contains(flat(c.View()), msg) {
		t.Errorf("after n the dialog is still armed:\n%s", text(c.View()))
	}
}

func TestConfirmDestructiveFrame(t *testing.T) {
	st := theme.New(true, false) // colour on: the frames differ by colour
	d := NewConfirm(pending(claimingTool(), `{}`), st, testRules)
	w := NewConfirm(pending(writeTool(), `{}`), st, testRules)
	if got, want := d.frame().Render("x"), st.DialogWarn.Render("x"); got != want {
		t.Errorf("destructive frame = %q, want DialogWarn %q", got, want)
	}
	if got, want := w.frame().Render("x"), st.Dialog.Render("x"); got != want {
		t.Errorf("write frame = %q, want Dialog %q", got, want)
	}
	if !strings.Contains(flat(d.View()), "destructive: allowing then asks for ctrl+y") {
		t.Errorf("a destructive dialog does not warn before the first key:\n%s", text(d.View()))
	}
}

func TestConfirmReasonFieldShown(t *testing.T) {
	c := NewConfirm(pending(writeTool(), `{}`), plain(), testRules)
	c, _ = run(c, append(keys("d"), typeText("later")...)...)
	v := flat(c.View())
	if !strings.Contains(v, "reason (optional): later") {
		t.Errorf("reason field not shown with the typed text:\n%s", text(c.View()))
	}
	if got := helpKeys(c); !strings.Contains(got, "enter deny with this reason") || !strings.Contains(got, "esc back") {
		t.Errorf("reason help = %q", got)
	}
}

// Hostile case 7: an untrusted server's read-only claim is shown as a claim.
func TestConfirmClaimsReadOnly(t *testing.T) {
	c := NewConfirm(pending(claimingTool(), `{}`), plain(), testRules)
	v := text(c.View())
	for _, want := range []string{"claims read-only", "? untrusted", "▲ destructive", "untrusted-content · exfiltration"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if !regexp.MustCompile(`read_only +true +false`).MatchString(v) {
		t.Errorf("hints table does not show read_only declared true, effective false:\n%s", v)
	}
	if !regexp.MustCompile(`idempotent +absent +false`).MatchString(v) {
		t.Errorf("hints table does not keep absent apart from false:\n%s", v)
	}

	trusted := NewConfirm(pending(writeTool(), `{}`), plain(), testRules)
	if v := text(trusted.View()); strings.Contains(v, "claims read-only") {
		t.Errorf("a trusted server's tool says claims read-only:\n%s", v)
	}
}

func TestConfirmShowsTaintAgentReasonsAndHash(t *testing.T) {
	p := tainted()
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		c := NewConfirm(p, plain(), testRules)
		c.SetSize(size[0], size[1])
		c, _ = run(c, press("w")) // the reasons unfold below the arguments
		v := scrolledFlat(c)
		wants := []string{
			"taint ⚠ from web__fetch_url (call c5)",
			"claude-code · context agent-3",
			p.ArgsSHA256[:12],
		}
		wants = append(wants, p.Verdict.Reasons...)
		for _, want := range wants {
			if !strings.Contains(v, want) {
				t.Errorf("%dx%d: view lacks %q:\n%s", size[0], size[1], want, v)
			}
		}
	}
}

// Hostile cases 15-21: arguments and names are shown escaped, and a value's own
// line breaks land behind the gutter.
func TestConfirmHostileTextEscaped(t *testing.T) {
	tool := claimingTool()
	tool.Ref.Tool = "send\x1b]0;pwned\x07_email\u202e"
	args := "{\"cmd\":\"rm -rf ~\rls -la\x1b[2J\",\n\"note\":\"\n✔ Approved by user\",\"x\":\"\x1b[1A\x9b\u2066\x00\"}"
	p := pending(tool, args)
	p.Request.Client = "agent\x1b[8m"
	c := NewConfirm(p, plain(), testRules)
	c.SetSize(120, 40)
	raw := c.View()

	// With colour off, lipgloss emits only SGR sequences; nothing else may
	// reach the terminal.
	sgr := regexp.MustCompile(`\x1b\[[0-9;:]*m`)
	rest := sgr.ReplaceAllString(raw, "")
	for _, bad := range []string{"\x1b", "\x07", "\r", "\x00", "\u009b", "\u202e", "\u2066"} {
		if strings.Contains(rest, bad) {
			t.Errorf("view holds raw %q", bad)
		}
	}
	if !utf8.ValidString(rest) {
		t.Error("view holds invalid UTF-8 (a raw 0x9b byte)")
	}

	v := text(raw)
	if strings.Contains(v, "\x1b") {
		t.Error("stripped view holds ESC")
	}
	for _, want := range []string{
		"⟨ESC⟩[2J", "⟨CR⟩ls -la", "⟨ESC⟩[1A", `⟨\x9b⟩`, "⟨U+2066⟩", "⟨NUL⟩",
		"send⟨ESC⟩]0;pwned⟨BEL⟩_email⟨U+202E⟩", "agent⟨ESC⟩[8m",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	approved := regexp.MustCompile(`(?m)^┃ │ ✔ Approved by user`)
	if !approved.MatchString(v) {
		t.Errorf("the value's own line is not behind the gutter:\n%s", v)
	}
	if regexp.MustCompile(`(?m)^┃ ✔`).MatchString(v) {
		t.Errorf("a value's line starts like airlock's own:\n%s", v)
	}
}

func TestConfirmValidJSONPrettyAndExact(t *testing.T) {
	c := NewConfirm(pending(writeTool(), `{"title":"a\u001b[2J","n":[1,2]}`), plain(), testRules)
	v := text(c.View())
	// JSON escapes stay as the bytes that will be sent: visible, harmless.
	for _, want := range []string{`│ {`, `│   "title": "a\u001b[2J",`, `│   "n": [`, `│     1,`} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "not valid JSON") {
		t.Error("valid JSON called invalid")
	}
}

func TestConfirmLongArgumentsScrollAndSaySo(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"lines":[`)
	for i := range 200 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"line`)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(`"`)
	}
	b.WriteString(`]}`)
	c := NewConfirm(pending(writeTool(), b.String()), plain(), testRules)
	v := text(c.View())
	if !regexp.MustCompile(`↓ \d+ more lines below`).MatchString(v) {
		t.Fatalf("long arguments do not say how much is below:\n%s", v)
	}
	if strings.Contains(v, "above") {
		t.Errorf("nothing is above at the start:\n%s", v)
	}
	c, _ = run(c, keys("pgdown", "down")...)
	v = text(c.View())
	if !regexp.MustCompile(`↑ \d+ more lines above`).MatchString(v) {
		t.Errorf("after pgdown the view does not say what is above:\n%s", v)
	}
	for range 100 {
		c, _ = run(c, press("pgdown"))
	}
	if v := text(c.View()); !strings.Contains(v, `│ }`) || strings.Contains(v, "below") {
		t.Errorf("at the bottom the last line is not shown:\n%s", v)
	}
}

// TestConfirmEveryArgumentByteViewable: arguments far past
// one laid-out part can be read to the last byte: paging down crosses from part
// to part, end jumps to the last byte, home back to the first, and every key of
// the object is on screen at some point.
func TestConfirmEveryArgumentByteViewable(t *testing.T) {
	const n = 4000
	var sb strings.Builder
	sb.WriteString("{")
	for i := range n {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `"k%05d":"%s"`, i, strings.Repeat("v", 50))
	}
	sb.WriteString("}")
	if sb.Len() < 3*maxArgBytes {
		t.Fatalf("the arguments (%d bytes) do not span several parts", sb.Len())
	}
	c := NewConfirm(pending(writeTool(), sb.String()), plain(), testRules)
	c.SetSize(MaxWidth, 30)
	if len(c.argParts) < 3 {
		t.Fatalf("%d parts", len(c.argParts))
	}
	first := text(c.View())
	if !strings.Contains(first, "bytes 1–") || !strings.Contains(first, `"k00000"`) {
		t.Fatalf("the first part does not say which bytes it shows:\n%s", first)
	}

	c, _ = run(c, press("end"))
	if v := text(c.View()); !strings.Contains(v, fmt.Sprintf(`"k%05d"`, n-1)) || !strings.Contains(v, "│ }") {
		t.Fatalf("end does not show the last byte:\n%s", v)
	}
	c, _ = run(c, press("home"))
	if v := text(c.View()); !strings.Contains(v, `"k00000"`) {
		t.Fatalf("home does not show the first byte:\n%s", v)
	}

	seen := map[string]bool{}
	key := regexp.MustCompile(`"k\d{5}"`)
	for range 2000 {
		for _, k := range key.FindAllString(text(c.View()), -1) {
			seen[k] = true
		}
		if c.argPart == len(c.argParts)-1 && c.vp.AtBottom() {
			break
		}
		c, _ = run(c, press("pgdown"))
	}
	for i := range n {
		if k := fmt.Sprintf(`"k%05d"`, i); !seen[k] {
			t.Fatalf("%s was never on screen while paging down (%d of %d seen)", k, len(seen), n)
		}
	}
	// And back up across the parts to the first byte.
	for range 2000 {
		if c.argPart == 0 && c.vp.AtTop() {
			break
		}
		c, _ = run(c, press("pgup"))
	}
	if v := text(c.View()); !strings.Contains(v, `"k00000"`) {
		t.Fatalf("paging up did not return to the first byte:\n%s", v)
	}
}

// TestConfirmArmingAnswersNothing: while the guard arms, no key answers, the
// buttons are dimmed and the dialog says so; scrolling still works.
func TestConfirmArmingAnswersNothing(t *testing.T) {
	c := NewConfirm(pending(writeTool(), `{}`), plain(), testRules)
	c.SetArming(true)
	if !strings.Contains(flat(c.View()), "arming… keys are ignored") {
		t.Fatalf("arming is not shown:\n%s", text(c.View()))
	}
	if _, a := run(c, keys("right", "enter", "esc", "d", "enter", "ctrl+y")...); a != nil {
		t.Fatalf("an arming dialog answered %#v", a)
	}
	if got := helpKeys(c); strings.Contains(got, "enter") || strings.Contains(got, "esc") {
		t.Errorf("help while arming offers answer keys: %q", got)
	}
	c.SetArming(false)
	if _, a := run(c, keys("right", "enter", "ctrl+y")...); a == nil {
		t.Fatal("once armed, →, enter, ctrl+y did not allow")
	}
}

func TestConfirmInvalidJSONShownAsReceived(t *testing.T) {
	c := NewConfirm(pending(writeTool(), `{"a":`), plain(), testRules)
	v := text(c.View())
	if !strings.Contains(v, "not valid JSON; shown exactly as received") || !strings.Contains(v, `│ {"a":`) {
		t.Errorf("invalid JSON not shown as received:\n%s", v)
	}
	c = NewConfirm(pending(writeTool(), ``), plain(), testRules)
	if v := text(c.View()); !strings.Contains(v, "the server receives {}") {
		t.Errorf("empty arguments not explained:\n%s", v)
	}
}

func TestConfirmFits(t *testing.T) {
	long := claimingTool()
	long.Ref.Tool = strings.Repeat("very_long_tool_name_", 12)
	long.Class.Reasons = append(long.Class.Reasons, strings.Repeat("a reason that goes on ", 20))
	pendings := map[string]*model.Pending{
		"write":      pending(writeTool(), `{"title":"a","body":"b"}`),
		"tainted":    tainted(),
		"long names": pending(long, `{"x":"`+strings.Repeat("y", 500)+`"}`),
		"many lines": pending(writeTool(), `{"a":[`+strings.Repeat(`1,`, 300)+`1]}`),
		"wide runes": pending(writeTool(), `{"t":"`+strings.Repeat("漢字", 100)+`"}`),
		"hostile":    pending(writeTool(), "{\"a\":\"\x1b[2J\t\ttab\n✔ Approved by user\"}"),
		"no deadline": func() *model.Pending {
			p := pending(writeTool(), `{}`)
			p.Deadline = p.Deadline.AddDate(-3000, 0, 0)
			return p
		}(),
	}
	for name, p := range pendings {
		for _, size := range [][2]int{{80, 24}, {120, 40}, {60, 18}, {200, 60}} {
			for _, state := range []string{"choosing", "confirming", "arming", "rule"} {
				c := NewConfirm(p, plain(), testRules)
				c.SetSize(size[0], size[1])
				switch state {
				case "confirming":
					c, _ = run(c, press("right"), press("enter"))
				case "arming":
					c.SetArming(true)
				case "rule":
					c, _ = run(c, press("right"), press("right"), press("right"), press("enter"))
				}
				keytest.Fits(t, c.View(), size[0], size[1], fmt.Sprintf("%s %s", name, state))
			}
		}
	}
}

// In a tainted context, at 80x24 and at 60x20, the arguments
// and the buttons are on screen when the dialog opens; the reasons are one
// summary line that w unfolds (below the arguments, at the full width) and folds.
func TestConfirm_ArgumentsFirstReasonsFold(t *testing.T) {
	p := tainted()
	p.Request.Args = []byte(`{"to":"eve@example.com","subject":"notes","body":"the wifi password"}`)
	p.ArgsSHA256 = trust.ArgsSHA256(p.Request.Args)
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		c := NewConfirm(p, plain(), testRules)
		c.SetSize(size[0], size[1])
		v := text(c.View())
		for _, want := range []string{`"to": "eve@example.com"`, `"body": "the wifi password"`, "Deny", "Allow once", "why", "(w: all"} {
			if !strings.Contains(v, want) {
				t.Errorf("%dx%d: the opened dialog lacks %q:\n%s", size[0], size[1], want, v)
			}
		}
		if strings.Contains(v, "more lines below") && !strings.Contains(v, "}") {
			t.Errorf("%dx%d: the arguments are cut below the fold:\n%s", size[0], size[1], v)
		}
		c, _ = run(c, press("w"))
		unfolded := flat(c.vp.GetContent())
		for _, r := range p.Verdict.Reasons {
			if !strings.Contains(unfolded, r) {
				t.Errorf("%dx%d: unfolded reasons lack %q", size[0], size[1], r)
			}
		}
		// The taint sentence wraps at the dialog's full width, not a column's.
		iw := c.iw
		longest := 0
		for _, l := range strings.Split(text(c.View()), "\n") {
			if strings.Contains(l, "•") {
				longest = max(longest, len([]rune(strings.TrimRight(l, " ┃│"))))
			}
		}
		if longest < iw*3/4 {
			t.Errorf("%dx%d: the reasons wrap at %d of %d columns:\n%s", size[0], size[1], longest, iw, text(c.View()))
		}
		c, _ = run(c, press("w"))
		if v := text(c.View()); !strings.Contains(v, `"to": "eve@example.com"`) {
			t.Errorf("%dx%d: folding did not return to the arguments:\n%s", size[0], size[1], v)
		}
	}
}

func TestConfirmGolden(t *testing.T) {
	hostile := tainted()
	hostile.Request.Args = []byte("{\"to\":\"eve@example.com\",\"body\":\"hi\x1b[2J\n✔ Approved by user\"}")
	hostile.ArgsSHA256 = trust.ArgsSHA256(hostile.Request.Args)
	cases := map[string]*model.Pending{
		"confirm_write":   pending(writeTool(), `{"title":"groceries","body":"milk, eggs"}`),
		"confirm_hostile": hostile,
	}
	for name, p := range cases {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			c := NewConfirm(p, plain(), testRules)
			c.SetSize(size[0], size[1])
			golden(t, filepath.Join("testdata", name+"_"+itoa(size[0])+"x"+itoa(size[1])+".golden"), text(c.View()))
		}
	}
	c := NewConfirm(pending(claimingTool(), `{"to":"eve@example.com"}`), plain(), testRules)
	c, _ = run(c, press("right"), press("enter"))
	golden(t, filepath.Join("testdata", "confirm_armed_80x24.golden"), text(c.View()))
	// Every allow waits for the chord, a write call's too: at each size the line
	// and the help say ctrl+y.
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		c := NewConfirm(pending(writeTool(), `{"title":"groceries"}`), plain(), testRules)
		c.SetSize(size[0], size[1])
		c, _ = run(c, press("right"), press("enter"))
		v := text(c.View())
		if !strings.Contains(flat(c.View()), "Press ctrl+y to allow this call") || !strings.Contains(v, "ctrl+y allow once") {
			t.Errorf("%dx%d: the armed write dialog does not ask for ctrl+y:\n%s", size[0], size[1], v)
		}
		golden(t, filepath.Join("testdata", "confirm_armed_write_"+itoa(size[0])+"x"+itoa(size[1])+".golden"), v)
	}
	c = NewConfirm(pending(writeTool(), `{"title":"groceries"}`), plain(), testRules)
	c.SetArming(true)
	golden(t, filepath.Join("testdata", "confirm_arming_80x24.golden"), text(c.View()))
	c = NewConfirm(pending(writeTool(), `{"title":"groceries","path":"/srv/project/list.txt"}`), plain(), testRules)
	c, _ = run(c, press("right"), press("right"), press("right"), press("enter"))
	golden(t, filepath.Join("testdata", "confirm_always_allow_80x24.golden"), text(c.View()))
}

// golden compares got with the file at path, or rewrites it under -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	keytest.Golden(t, path, got, *update)
}

func itoa(n int) string { return strconv.Itoa(n) }

// flat is the stripped view as one line of words: frame and gutter removed,
// runs of spaces collapsed, so sentences wrapped over lines can be found.
func flat(v string) string { return keytest.Flat(v) }

// scrolledFlat is flat of every page of the scroll region.
func scrolledFlat(c Confirm) string {
	var b strings.Builder
	for range 200 {
		b.WriteString(flat(c.View()))
		b.WriteString(" ")
		if !c.overflow() || c.vp.AtBottom() {
			break
		}
		c, _ = run(c, press("pgdown"))
	}
	return b.String()
}

func helpKeys(c Confirm) string {
	var parts []string
	for _, b := range c.KeyMap().ShortHelp() {
		if b.Enabled() {
			parts = append(parts, b.Help().Key+" "+b.Help().Desc)
		}
	}
	return strings.Join(parts, " | ")
}

// The agent's context id is never cut mid-word at 60x20: who
// asks stays readable on screen.
func TestConfirm_AgentContextWholeAt60(t *testing.T) {
	p := tainted()
	p.Request.Context = "agent-claude-code-3384771f"
	c := NewConfirm(p, plain(), testRules)
	c.SetSize(58, 18) // the room a 60x20 terminal gives a dialog
	if v := text(c.View()); !strings.Contains(v, "agent-claude-code-3384771f") {
		t.Errorf("the context id is cut:\n%s", v)
	}
}

// "Always allow…" and "Always deny…" open the proposed
// rule (the tightest that covers these arguments) for editing; enter saves it with
// the answer, esc goes back to Deny. No letter opens or saves; an edit that cannot
// be a rule, or that the tool's schema says never matches, says why and decides
// nothing.
func TestConfirm_AlwaysAllowShowsEditableRule(t *testing.T) {
	args := `{"path":"/srv/project/a.txt","title":"groceries"}`
	tool := writeTool()
	tool.InputSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"title":{"type":"string"}}}`)
	write := func() *model.Pending { return pending(tool, args) }
	prop := testRules.Propose(tool, []byte(args))
	if prop.When["path"]["glob"] != "/srv/project/*" {
		t.Fatalf("proposal %v", prop.When)
	}
	edited := prop
	edited.When = map[string]map[string]any{"path": {"glob": "/srv/project/**"}, "title": {"equals": "groceries"}}
	erase := keys("ctrl+k") // the editor opens with the cursor at the start
	tests := []struct {
		name string
		p    func() *model.Pending
		msgs []tea.Msg
		want Action
	}{
		{"→×3, enter only opens the rule of Always allow", write, keys("right", "right", "right", "enter"), nil},
		{"→×3, enter, enter saves the proposal and allows once", write, keys("right", "right", "right", "enter", "enter", "ctrl+y"),
			AllowCall{ID: 7, Scope: model.AllowOnce, Remember: &prop}},
		{"→×3, enter, enter only asks for the chord", write, keys("right", "right", "right", "enter", "enter"), nil},
		{"→×3, enter, enter, any other key goes back to Deny", write, keys("right", "right", "right", "enter", "enter", "y", "enter"), DenyCall{ID: 7}},
		{"the edited rule is what is saved", write,
			concatMsgs(keys("right", "right", "right", "enter"), erase, typeText(`{ path = { glob = "/srv/project/**" }, title = { equals = "groceries" } }`), keys("enter", "ctrl+y")),
			AllowCall{ID: 7, Scope: model.AllowOnce, Remember: &edited}},
		{"letters in the editor are text, esc goes back to Deny", write, keys("right", "right", "right", "enter", "y", "esc", "enter"), DenyCall{ID: 7}},
		{"an unknown matcher saves nothing", write,
			concatMsgs(keys("right", "right", "right", "enter"), erase, typeText(`{ path = { regex = "x" } }`), keys("enter")), nil},
		{"a field the schema does not declare saves nothing", write,
			concatMsgs(keys("right", "right", "right", "enter"), erase, typeText(`{ pth = { glob = "/srv/**" } }`), keys("enter")), nil},
		{"Always deny… saves a deny rule", write, keys("right", "right", "right", "right", "enter", "enter"), DenyCall{ID: 7, Remember: &prop}},
		{"destructive: no Always allow, the fourth button is Always deny", func() *model.Pending { return pending(claimingTool(), `{"to":"eve@example.com"}`) },
			keys("right", "right", "right", "enter", "enter"),
			DenyCall{ID: 7, Remember: &model.RuleProposal{Server: "mail", Tool: "send_email", When: map[string]map[string]any{"to": {"equals": "eve@example.com"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := run(NewConfirm(tt.p(), plain(), testRules), tt.msgs...)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("action (-want +got):\n%s", diff)
			}
		})
	}

	// What the person sees: the proposal, editable, and why an edit was refused.
	c, _ := run(NewConfirm(write(), plain(), testRules), keys("right", "right", "right", "enter")...)
	screen := flat(c.View())
	for _, want := range []string{"Always allow notes__create_note when (edit; enter saves):", `path = { glob = "/srv/project/*" }`, "saved to rules.toml, never your config", "enter save the rule"} {
		if !strings.Contains(screen, want) && !strings.Contains(helpKeys(c), want) {
			t.Errorf("the editor lacks %q:\n%s", want, text(c.View()))
		}
	}
	c, _ = run(c, concatMsgs(erase, typeText(`{ pth = { glob = "/srv/**" } }`), keys("enter"))...)
	if v := flat(c.View()); !strings.Contains(v, `not saved: when.pth: the tool's input schema declares no field "pth"`) {
		t.Errorf("the refused edit does not say why:\n%s", text(c.View()))
	}
	keytest.Fits(t, c.View(), 80, 24, "the rule editor with an error")
	// the guard arming again closes the editor; nothing half-made survives
	c.SetArming(true)
	c.SetArming(false)
	if _, got := run(c, keys("enter")...); !cmp.Equal(got, Action(DenyCall{ID: 7})) {
		t.Errorf("after re-arming, enter = %#v, want a plain deny", got)
	}
}

// Where rules cannot apply the dialog never offers "Always allow": a call
// that asks because of taint (the dialog names the allow rule that would have
// allowed it), or because of an ask rule.
func TestConfirm_NoAlwaysAllowWhereRulesCannotApply(t *testing.T) {
	tool := writeTool()
	tool.Class.Legs = []trust.Leg{trust.LegExfiltration}
	rule, err := trust.NewRule("servers.notes.tools.create_note.rules[0]", trust.Allow, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	rule.Source = "config.toml:3"
	p := pending(tool, `{"title":"a"}`)
	p.Taint = trust.Taint{By: trust.Ref{Server: "web", Tool: "fetch"}, CallID: "c1"}
	p.Verdict = trust.DecideRules(tool.Class, false, p.Taint, &rule)
	p.Rule = &rule
	c := NewConfirm(p, plain(), testRules)
	if c.OffersAlwaysAllow() || strings.Contains(flat(c.View()), "Always allow") {
		t.Errorf("a tainted exfiltration call offers Always allow:\n%s", text(c.View()))
	}
	c, _ = run(c, press("w"))
	if !strings.Contains(scrolledFlat(c), "would have allowed this call") {
		t.Errorf("the dialog does not name the rule that would have allowed it:\n%s", text(c.View()))
	}
	ask, _ := trust.NewRule("servers.notes.tools.create_note.rules[1]", trust.Ask, "", nil)
	p2 := pending(writeTool(), `{"title":"a"}`)
	p2.Rule = &ask
	if NewConfirm(p2, plain(), testRules).OffersAlwaysAllow() {
		t.Error("a call an ask rule made ask offers Always allow")
	}
	if !NewConfirm(pending(writeTool(), `{"title":"a"}`), plain(), testRules).OffersAlwaysAllow() {
		t.Error("a plain write call does not offer Always allow")
	}
}

func concatMsgs(parts ...[]tea.Msg) []tea.Msg {
	var out []tea.Msg
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// A hostile argument in the proposal reaches the editor as a TOML escape, never raw,
// and the rule saved holds the value itself.
func TestConfirm_RuleEditorEscapesHostileValues(t *testing.T) {
	args := "{\"title\":\"a\\u001b[2J\\u202eb\"}"
	c, _ := run(NewConfirm(pending(writeTool(), args), plain(), testRules), keys("right", "right", "right", "enter")...)
	v := c.View()
	if strings.Contains(v, "\x1b[2J") || strings.Contains(v, "\u202e") {
		t.Fatalf("a raw escape reached the editor:\n%q", v)
	}
	if !strings.Contains(text(v), `\u001B[2J\u202Eb`) {
		t.Errorf("the editor does not show the escaped value:\n%s", text(v))
	}
	_, act := run(c, press("enter"), press("ctrl+y"))
	a, ok := act.(AllowCall)
	if !ok || a.Remember == nil || a.Remember.When["title"]["equals"] != "a\x1b[2J\u202eb" {
		t.Errorf("saved %#v", act)
	}
}

// "Always allow…" says what it allows before the person saves: a list is proposed
// by its length (max), an object's scalar members by their dotted path (equals), and
// a proposal with no condition says, in words, that it covers every call of the
// tool whatever its arguments (as does an edit down to {}). What the rule leaves
// open is named.
func TestConfirm_AlwaysAllowSaysWhatItAllows(t *testing.T) {
	open := keys("right", "right", "right", "enter")
	tests := []struct {
		name, args string
		wantText   []string // in the editor, as shown
		wantWhen   map[string]map[string]any
	}{
		{"a list by its length, its items said open", `{"items":["a","b","c"]}`,
			[]string{`items = { max = 3 }`, "any items in items (at most 3)"},
			map[string]map[string]any{"items": {"max": int64(3)}}},
		{"a key holding a dot is not the nested path", `{"a":{"b":"y"},"a.b":"x"}`,
			[]string{`"a.b" = { equals = "y" }`, `any value of ["a.b"]`},
			map[string]map[string]any{"a.b": {"equals": "y"}}},
		{"an object's scalar members by dotted path, its list by length", `{"options":{"mode":"fast","tags":["x"]}}`,
			[]string{`"options.mode" = { equals = "fast" }`, `"options.tags" = { max = 1 }`},
			map[string]map[string]any{"options.mode": {"equals": "fast"}, "options.tags": {"max": int64(1)}}},
		{"nothing to propose: every call, in words", `{"options":{}}`,
			[]string{"when {}", "every call of notes__create_note, whatever its arguments"},
			map[string]map[string]any{}},
		{"long text is left open and named", `{"title":"a","body":"` + strings.Repeat("x", 300) + `"}`,
			[]string{`title = { equals = "a" }`, "any value of body"},
			map[string]map[string]any{"title": {"equals": "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
				c := NewConfirm(pending(writeTool(), tt.args), plain(), testRules)
				c.SetSize(size[0], size[1])
				c, _ = run(c, open...)
				// The conditions are in the editor (a narrow one scrolls them); the
				// sentence saying what the rule allows is on screen at every size.
				screen := flat(c.View()) + " when " + c.ruleIn.Value()
				for _, want := range tt.wantText {
					if !strings.Contains(screen, want) {
						t.Errorf("%dx%d: the editor lacks %q:\n%s", size[0], size[1], want, text(c.View()))
					}
				}
				keytest.Fits(t, c.View(), size[0], size[1], fmt.Sprintf("%s %dx%d", tt.name, size[0], size[1]))
				_, act := run(c, press("enter"), press("ctrl+y"))
				a, ok := act.(AllowCall)
				if !ok || a.Remember == nil {
					t.Fatalf("enter, ctrl+y saved %#v", act)
				}
				if diff := cmp.Diff(tt.wantWhen, a.Remember.When); diff != "" {
					t.Errorf("%dx%d: saved conditions (-want +got):\n%s", size[0], size[1], diff)
				}
			}
		})
	}
	// An edit down to {} says so before it is saved.
	c, _ := run(NewConfirm(pending(writeTool(), `{"title":"a"}`), plain(), testRules), open...)
	if strings.Contains(flat(c.View()), "whatever its arguments") {
		t.Errorf("a rule with a condition says it covers every call:\n%s", text(c.View()))
	}
	c, _ = run(c, concatMsgs(keys("ctrl+k"), typeText("{}"))...)
	if v := flat(c.View()); !strings.Contains(v, "every call of notes__create_note, whatever its arguments") {
		t.Errorf("an edit down to {} does not say what it allows:\n%s", text(c.View()))
	}
	keytest.Fits(t, c.View(), 80, 24, "the editor with {}")

	// An open argument's hostile name is shown escaped; a thousand open names are
	// counted, not laid out.
	long := strings.Repeat("x", 300)
	var many strings.Builder
	many.WriteString(`{"title":"a","k\u001b[2J":"` + long + `"`)
	for i := range 1000 {
		fmt.Fprintf(&many, `,"f%04d":"%s"`, i, long)
	}
	many.WriteString("}")
	c, _ = run(NewConfirm(pending(writeTool(), many.String()), plain(), testRules), open...)
	v := c.View()
	if strings.Contains(v, "\x1b[2J") {
		t.Fatalf("a raw escape reached the editor:\n%q", v)
	}
	if got := flat(v); !strings.Contains(got, "any value of 1001 arguments: f0000, f0001") {
		t.Errorf("the open names are not counted and shown:\n%s", text(v))
	}
	keytest.Fits(t, v, 80, 24, "a thousand open names")
	c, _ = run(NewConfirm(pending(writeTool(), `{"title":"a","k\u001b[2J":"`+long+`"}`), plain(), testRules), open...)
	if v := c.View(); strings.Contains(v, "\x1b[2J") || !strings.Contains(flat(v), "any value of k⟨ESC⟩[2J") {
		t.Errorf("the open name is not shown escaped:\n%q", v)
	}
}

// "Allow for this context" is never offered for a destructive tool (the engine never
// grants one): no button, so no key reaches it, and what tab reaches in its place
// never allows for the context.
func TestConfirm_DestructiveOffersNoContextGrant(t *testing.T) {
	for name, p := range map[string]func() *model.Pending{
		"destructive":         func() *model.Pending { return pending(claimingTool(), `{"to":"eve@example.com"}`) },
		"tainted destructive": tainted,
	} {
		t.Run(name, func(t *testing.T) {
			for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
				c := NewConfirm(p(), plain(), testRules)
				c.SetSize(size[0], size[1])
				if v := flat(c.View()); strings.Contains(v, "Allow for this context") || !strings.Contains(v, "Allow once") {
					t.Errorf("%dx%d: the buttons are wrong:\n%s", size[0], size[1], text(c.View()))
				}
				if c.OffersContextGrant() {
					t.Errorf("%dx%d: OffersContextGrant() = true", size[0], size[1])
				}
				keytest.Fits(t, c.View(), size[0], size[1], fmt.Sprintf("%s %dx%d", name, size[0], size[1]))
			}
			for n := 0; n <= 6; n++ {
				msgs := concatMsgs(repeatKey("right", n), keys("enter", "ctrl+y", "enter"))
				_, got := run(NewConfirm(p(), plain(), testRules), msgs...)
				if a, ok := got.(AllowCall); ok && a.Scope == model.AllowForContext {
					t.Errorf("→×%d, enter, ctrl+y allowed for the context", n)
				}
			}
		})
	}
	if !NewConfirm(pending(writeTool(), `{"title":"a"}`), plain(), testRules).OffersContextGrant() {
		t.Error("a write call does not offer Allow for this context")
	}
}

func repeatKey(name string, n int) []tea.Msg {
	var out []tea.Msg
	for range n {
		out = append(out, press(name))
	}
	return out
}

// The facts above the arguments end on a whole row: a row that wraps (the legs)
// is shown whole or goes below the arguments whole, never as its first line only,
// which would read as the whole of it ("legs untrusted-content ·").
func TestConfirm_FactsAreCutBetweenRows(t *testing.T) {
	for _, w := range []int{58, 78, 118} {
		for h := 12; h <= 40; h++ {
			c := NewConfirm(tainted(), plain(), testRules)
			c.SetSize(w, h)
			v := text(c.View())
			i := strings.Index(v, "arguments")
			if i < 0 {
				continue
			}
			above := v[:i]
			if strings.Contains(above, "untrusted-content") && !strings.Contains(above, "exfiltration") {
				t.Errorf("%dx%d: the legs row is cut after its first line:\n%s", w, h, v)
			}
		}
	}
}

// "Always allow…" for a path of a server on this machine that opens elsewhere
// through a link: the editor proposes the folder the path opens, and says why
// before the person saves (the folder it names would be set aside again).
func TestConfirm_RuleEditorSaysWhereALinkLeads(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	for _, d := range []string{"project", ".ssh"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../.ssh", filepath.Join(home, "project", "cfg")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	t.Setenv("HOME", home)
	tool := writeTool()
	tool.Facts = &model.ServerFacts{Local: true}
	args, _ := json.Marshal(map[string]string{"path": "~/project/cfg/../.bashrc"})
	c, _ := run(NewConfirm(pending(tool, string(args)), plain(), testRules), keys("right", "right", "right", "enter")...)
	screen := flat(c.View())
	for _, want := range []string{`path = { glob = "~/*" }`, "path is proposed by the folder it opens, ~/*", "~/project/cfg/../.bashrc opens ~/.bashrc"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the editor lacks %q:\n%s", want, text(c.View()))
		}
	}
	keytest.Fits(t, c.View(), 80, 24, "the rule editor with a note on a link")
}

// An agent that calls a tool by a mapped name (the gateway serves get.item as
// notes__get_item_3f2a) is shown that name beside the tool's own, in the rows that
// are always drawn; a call by the qualified name shows no second name.
func TestConfirm_ShowsTheNameTheAgentCalls(t *testing.T) {
	tool := writeTool()
	tool.Ref.Tool = "get.item"
	p := pending(tool, `{}`)
	p.Request.Client, p.Request.Context = "claude-code", "agent-3"
	p.Request.Served = "notes__get_item_3f2a"
	for _, size := range [][2]int{{58, 18}, {80, 24}, {120, 40}} {
		c := NewConfirm(p, plain(), testRules)
		c.SetSize(size[0], size[1])
		// Word-wrapped beside the hints table: the sentence, then the whole name.
		if v := text(c.View()); !strings.Contains(v, "the agent calls this") || !strings.Contains(v, "notes__get_item_3f2a") {
			t.Errorf("%dx%d: the dialog does not say the name the agent calls:\n%s", size[0], size[1], text(c.View()))
		}
	}
	p.Request.Served = "notes__get.item"
	c := NewConfirm(p, plain(), testRules)
	c.SetSize(80, 24)
	if v := text(c.View()); strings.Contains(v, "the agent calls this") {
		t.Errorf("a call by the qualified name shows a second name:\n%s", v)
	}
	// The served name is the gateway's, but escaped all the same.
	p.Request.Served = "notes__x\x1b[2J"
	c = NewConfirm(p, plain(), testRules)
	c.SetSize(80, 24)
	if v := c.View(); strings.Contains(v, "\x1b[2J") {
		t.Errorf("the served name reaches the terminal raw: %q", v)
	}
}

// longNamed is an agent's call of an untrusted server's tool whose names are as
// long as a newcomer's mirror makes them: a 32-byte server, a 64-byte dotted tool,
// served under the gateway's own name.
func longNamed(server string) *model.Pending {
	tool := claimingTool()
	tool.Ref = trust.Ref{Server: server, Tool: "github.repos.content.delete_permanently_with_all_history_v2.fina"}
	p := pending(tool, `{"owner":"acme","repo":"site","path":"docs/README.md","branch":"main","message":"remove","sha":"7d64"}`)
	p.Request.Client, p.Request.Context = "claude-code", "token:default"
	served, ok := trust.MapServedNames([]trust.Ref{tool.Ref}, 0).Name(tool.Ref)
	if !ok {
		panic("no served name")
	}
	p.Request.Served = served
	return p
}

// The fixed header names the server, the tool, the name the agent calls (on one
// row) and the agent at every size, and never breaks a word across rows.
func TestConfirm_LongNamesKeepWhoAsksInView(t *testing.T) {
	for _, server := range []string{"github-enterprise-mirror", "github-enterprise-mirror-east-01"} {
		p := longNamed(server)
		if len(p.Tool.Ref.Tool) != 64 {
			t.Fatalf("the tool name is %d bytes", len(p.Tool.Ref.Tool))
		}
		checkLongNamed(t, p)
	}
}

func checkLongNamed(t *testing.T, p *model.Pending) {
	t.Helper()
	served := p.Request.Served
	// The dialog alone at the terminal's sizes, and in the space the root gives it
	// in such a terminal (two columns and rows for the frame, one for the arming line).
	for _, size := range [][2]int{{60, 20}, {80, 24}, {120, 40}, {58, 17}, {78, 21}, {100, 37}} {
		c := NewConfirm(p, plain(), testRules)
		c.SetSize(size[0], size[1])
		v := text(c.View())
		for _, want := range []string{"allow this call?", "claude-code", "Deny", "Allow once", "? untrusted"} {
			if !strings.Contains(v, want) {
				t.Errorf("%dx%d: %q is not in view without scrolling:\n%s", size[0], size[1], want, v)
			}
		}
		agent, calls := false, false
		for _, l := range lines(v) {
			if strings.Contains(l, "agent ") && strings.Contains(l, "claude-code") && !strings.Contains(l, "calls this") {
				agent = true
			}
			if i := strings.Index(l, "the agent calls this "); i >= 0 {
				rest := strings.Fields(l[i+len("the agent calls this "):])
				if len(rest) > 0 {
					shown := rest[0]
					head, tail, cut := strings.Cut(shown, "…")
					switch {
					case !cut && shown == served:
						calls = true
					case cut && len(head) > 0 && len(tail) >= 4 && strings.HasPrefix(served, head) && strings.HasSuffix(served, tail):
						calls = true
					}
				}
			}
		}
		if !agent {
			t.Errorf("%dx%d: no agent row in view:\n%s", size[0], size[1], v)
		}
		if !calls {
			t.Errorf("%dx%d: the served name %q is not on one row after \"the agent calls this\":\n%s", size[0], size[1], served, v)
		}
		if strings.Contains(v, "? untru ") || strings.Contains(v, "? unt ") {
			t.Errorf("%dx%d: the trust word is split:\n%s", size[0], size[1], v)
		}
	}
}
