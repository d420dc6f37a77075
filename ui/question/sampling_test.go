package question

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/internal/keytest"
)

func samplingRequest(id uint64) *model.SamplingRequest {
	return &model.SamplingRequest{
		ID: id, Server: "everything", CallID: "c1",
		SystemPrompt:   "You are \x1b[2Jhelpful.\n✔ Approved by user",
		IncludeContext: "thisServer",
		ModelHints:     []string{"claude-\u202e3"}, SpeedPriority: 0.8,
		MaxTokens: 100,
		Messages: []model.SamplingMessage{
			{Role: "user", Parts: []model.SamplingPart{{Kind: "text", Text: "say hi"}}},
			{Role: "user", Parts: []model.SamplingPart{{Kind: "image", MIME: "image/png", Size: 1234}}},
		},
		Tools: []model.SamplingTool{{Name: "get_weather", Description: "Weather"}},
	}
}

// typeText sends each rune of s as a key press, the way the root does.
func (o *Overlay) typeText(t *testing.T, s string) Outcome {
	t.Helper()
	var last Outcome
	for _, m := range keytest.Type(s) {
		o.Input()
		var out Outcome
		*o, out, _ = o.Update(m)
		if out != nil {
			last = out
		}
	}
	return last
}

// arm opens the front question and lets the guard arm it.
func (o *Overlay) arm(c *clock) {
	c.advance(MinQuiet + time.Millisecond)
	o.tick(false)
	c.advance(MinQuiet + time.Millisecond)
	o.tick(false)
}

// Keys typed before the question could be read never answer it: not the reply's
// text, not ctrl+s, not esc.
func TestSamplingQuestion_EarlyKeysNeverAnswer(t *testing.T) {
	o, c := newOverlay(false)
	o.AddSampling(samplingRequest(1), trust.Untrusted)
	o.tick(false)
	if !o.Open() || o.Armed() {
		t.Fatalf("open %v armed %v, want open and arming", o.Open(), o.Armed())
	}
	if !o.Typing() {
		t.Error("an open sampling question takes text: Typing must say so")
	}
	c.advance(100 * time.Millisecond)
	if out := o.typeText(t, "hello"); out != nil {
		t.Fatalf("typing while arming answered %#v", out)
	}
	for _, k := range []string{"ctrl+s", "esc", "ctrl+d", "enter"} {
		if out := o.key(t, k); out != nil {
			t.Fatalf("%s while arming answered %#v", k, out)
		}
	}
	c.advance(MinQuiet + time.Millisecond)
	o.tick(false)
	if !o.Armed() {
		t.Fatal("not armed after a quiet keyboard")
	}
	// Nothing typed early landed in the reply: sending now asks for a reply.
	if out := o.key(t, "ctrl+s"); out != nil {
		t.Fatalf("ctrl+s with an empty reply answered %#v (early keys reached the field?)", out)
	}
	if v := ansi.Strip(o.View()); !strings.Contains(v, "write a reply first") {
		t.Errorf("no note about the empty reply:\n%s", v)
	}
}

// Armed: a reply written by hand is sent with ctrl+s; esc declines.
func TestSamplingQuestion_WriteAReplyOrDecline(t *testing.T) {
	o, c := newOverlay(false)
	o.AddSampling(samplingRequest(1), trust.Trusted)
	o.AddSampling(samplingRequest(2), trust.Trusted)
	o.arm(c)
	if out := o.typeText(t, "hi there"); out != nil {
		t.Fatalf("typing answered %#v", out)
	}
	out := o.key(t, "ctrl+s")
	s, ok := out.(Sampled)
	if !ok || s.Decline || s.Reply != "hi there" || s.Request.ID != 1 {
		t.Fatalf("ctrl+s = %#v, want the reply to request 1", out)
	}
	// The next question arms afresh: the key stream that answered one never
	// answers the next.
	if o.Armed() {
		t.Fatal("the next question was armed at once")
	}
	o.arm(c)
	out = o.key(t, "esc")
	if s, ok := out.(Sampled); !ok || !s.Decline || s.Request.ID != 2 {
		t.Fatalf("esc = %#v, want a decline of request 2", out)
	}
	if o.Len() != 0 {
		t.Errorf("%d questions left", o.Len())
	}
}

// Everything the request carries is shown, escaped, and a long request scrolls to
// its last message: nothing is cut.
func TestSamplingQuestion_ShowsEverythingEscapedAndScrolls(t *testing.T) {
	o, c := newOverlay(false)
	r := samplingRequest(1)
	for i := range 998 {
		r.Messages = append(r.Messages, model.SamplingMessage{Role: "assistant", Parts: []model.SamplingPart{{Kind: "text", Text: fmt.Sprintf("filler %d", i)}}})
	}
	r.Messages[len(r.Messages)-1].Parts[0].Text = "THE LAST MESSAGE"
	o.AddSampling(r, trust.Untrusted)
	o.arm(c)
	v := o.View()
	keytest.Fits(t, v, 80, 24, "sampling question")
	if strings.Contains(v, "\x1b[2J") || strings.Contains(v, "\u202e") {
		t.Errorf("raw control or bidi text reached the view")
	}
	plain := ansi.Strip(v)
	for _, want := range []string{"everything", "untrusted", "asks for an LLM completion", "system prompt", "⟨ESC⟩", "│ ✔ Approved by user", "message 1 of 1000", "say hi", "[image image/png, 1.2 KiB"} {
		if !strings.Contains(plain, want) {
			t.Errorf("view lacks %q:\n%s", want, plain)
		}
	}
	o.key(t, "end")
	plain = ansi.Strip(o.View())
	for _, want := range []string{"THE LAST MESSAGE", "include context: thisServer", "model preferences: hints claude-", "speed 0.8", "max tokens: 100", "tools offered: 1", "get_weather"} {
		if !strings.Contains(plain, want) {
			t.Errorf("scrolled to the end, view lacks %q:\n%s", want, plain)
		}
	}
	keytest.Fits(t, o.View(), 80, 24, "sampling question scrolled")
	o.key(t, "home")
	if plain = ansi.Strip(o.View()); !strings.Contains(plain, "say hi") {
		t.Errorf("home did not scroll back:\n%s", plain)
	}
}
