package question

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/dialog/wrap"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// SamplingKeyMap is the keys of a sampling request: the reply is written in a text
// field; ctrl+s sends it (no letter sends anything), ctrl+d or esc declines, and the
// request above the field scrolls with pgup/pgdn (and ↑/↓, home/end while the reply
// is empty).
type SamplingKeyMap struct {
	Send    key.Binding
	Decline key.Binding
	Scroll  key.Binding
}

// ShortHelp implements help.KeyMap.
func (k SamplingKeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Send, k.Decline, k.Scroll} }

// FullHelp implements help.KeyMap.
func (k SamplingKeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// DefaultSamplingKeyMap is the sampling question's keys.
func DefaultSamplingKeyMap() SamplingKeyMap {
	return SamplingKeyMap{
		Send:    key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "send your reply")),
		Decline: key.NewBinding(key.WithKeys("ctrl+d", "esc"), key.WithHelp("ctrl+d/esc", "decline")),
		Scroll:  key.NewBinding(key.WithKeys("pgup", "pgdown"), key.WithHelp("pgup/pgdn", "scroll the request")),
	}
}

// Sampled answers a server's sampling request: Decline, or Reply written by the
// person.
type Sampled struct {
	Request *model.SamplingRequest
	Decline bool
	Reply   string
}

func (Sampled) outcome() {}

// sampling is the question about one sampling request: the whole request, escaped,
// in a scrolling pane (nothing is cut: the request's size is bounded by the session,
// model.MaxSamplingMessages and model.MaxSamplingText), and the reply field.
type sampling struct {
	req   *model.SamplingRequest
	trust trust.ServerTrust
	keys  SamplingKeyMap
	reply textarea.Model
	// body is the request laid out at bodyW cells; off is the first line shown.
	body  []string
	bodyW int
	off   int
	// note is airlock's own message under the field (a reply is needed to send).
	note string
	w, h int
}

const replyRows = 3

func newSampling(r *model.SamplingRequest, t trust.ServerTrust) sampling {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = "› "
	ta.Placeholder = "write the reply the server gets as the model's answer"
	ta.CharLimit = 64 << 10
	ta.SetHeight(replyRows)
	ta.Focus()
	return sampling{req: r, trust: t, keys: DefaultSamplingKeyMap(), reply: ta, w: 80, h: 24}
}

func (s *sampling) setSize(w, h int) {
	s.w, s.h = w, h
}

// frameWidth is the dialog's width; inner the text width inside its frame.
func (s *sampling) widths(st theme.Styles) (frame, inner int) {
	frame = min(s.w, 100)
	inner = max(frame-st.Dialog.GetHorizontalFrameSize(), 10)
	return frame, inner
}

// layoutBody renders the request at width iw once per width.
func (s *sampling) layoutBody(st theme.Styles, iw int) {
	if s.body != nil && s.bodyW == iw {
		return
	}
	s.body, s.bodyW = samplingLines(st, s.req, iw), iw
	s.off = min(s.off, max(len(s.body)-1, 0))
}

// header is the fixed top of the question: who asks, and what airlock does.
func (s *sampling) header(st theme.Styles, iw int) []string {
	ts := st.WarnText
	switch s.trust {
	case trust.Trusted:
		ts = st.OKText
	case trust.BlockedServer:
		ts = st.ErrorText
	}
	who := st.Mark.Render(wrap.Inline(s.req.Server, nil)) + " " + ts.Render("("+theme.TrustGlyph(s.trust)+" "+s.trust.String()+")")
	out := wrap.HangChars(who+st.Title.Render(" asks for an LLM completion (sampling)"), iw, st.Title.Render("server "))
	out = append(out, wrap.Words(st.Muted.Render("airlock has no model and sends this to no agent. Decline, or write the reply yourself: the server gets it as the model's answer. Sampling is deprecated (spec 2026-07-28)."), iw)...)
	return out
}

// bodyRows is how many lines of the request fit.
func (s *sampling) bodyRows(st theme.Styles, iw int) int {
	fixed := len(s.header(st, iw)) + 1 /* position */ + 1 /* "your reply" */ + replyRows + 1 /* note or help */
	avail := s.h - st.Dialog.GetVerticalFrameSize() - fixed
	return max(avail, 3)
}

func (s *sampling) scroll(st theme.Styles, delta int) {
	_, iw := s.widths(st)
	s.layoutBody(st, iw)
	rows := s.bodyRows(st, iw)
	s.off = max(0, min(s.off+delta, len(s.body)-rows))
}

// update takes a key (only once the guard armed the question, except scrolling).
func (s sampling) update(st theme.Styles, msg tea.Msg, armed bool) (sampling, Outcome, tea.Cmd) {
	_, iw := s.widths(st)
	s.layoutBody(st, iw)
	rows := s.bodyRows(st, iw)
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case msg.String() == "pgup":
			s.scroll(st, -rows+1)
			return s, nil, nil
		case msg.String() == "pgdown":
			s.scroll(st, rows-1)
			return s, nil, nil
		case s.reply.Value() == "" || !armed:
			switch msg.String() {
			case "up":
				s.scroll(st, -1)
				return s, nil, nil
			case "down":
				s.scroll(st, 1)
				return s, nil, nil
			case "home":
				s.off = 0
				return s, nil, nil
			case "end":
				s.scroll(st, len(s.body))
				return s, nil, nil
			}
		}
		if !armed {
			return s, nil, nil
		}
		switch {
		case key.Matches(msg, s.keys.Decline):
			return s, Sampled{Request: s.req, Decline: true}, nil
		case key.Matches(msg, s.keys.Send):
			if strings.TrimSpace(s.reply.Value()) == "" {
				s.note = "write a reply first, or decline"
				return s, nil, nil
			}
			return s, Sampled{Request: s.req, Reply: s.reply.Value()}, nil
		}
		s.note = ""
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			s.scroll(st, -3)
		} else if msg.Button == tea.MouseWheelDown {
			s.scroll(st, 3)
		}
		return s, nil, nil
	case tea.PasteMsg:
		if !armed {
			return s, nil, nil
		}
	}
	s.reply.SetWidth(iw)
	var cmd tea.Cmd
	s.reply, cmd = s.reply.Update(msg)
	return s, nil, cmd
}

func (s sampling) view(st theme.Styles, h help.Model, arming bool) string {
	fw, iw := s.widths(st)
	s.layoutBody(st, iw)
	rows := s.bodyRows(st, iw)
	lines := s.header(st, iw)
	end := min(s.off+rows, len(s.body))
	lines = append(lines, s.body[s.off:end]...)
	lines = append(lines, ansi.Truncate(st.Muted.Render(fmt.Sprintf("lines %d–%d of %d · pgup/pgdn scroll", s.off+1, end, len(s.body))), iw, "…"))
	lines = append(lines, st.Title.Render("Your reply:"))
	s.reply.SetWidth(iw)
	lines = append(lines, strings.Split(s.reply.View(), "\n")...)
	switch {
	case arming:
		lines = append(lines, st.WarnText.Render(ArmingText))
	case s.note != "":
		lines = append(lines, st.WarnText.Render(s.note))
	default:
		lines = append(lines, common.HelpLine(h, s.keys.ShortHelp(), iw))
	}
	return st.Dialog.Width(fw).Render(strings.Join(lines, "\n"))
}

// samplingLines lays out everything a sampling request carries at width iw: every
// server string escaped, multi-line text behind a gutter, image and audio as a
// placeholder with their type and size.
func samplingLines(st theme.Styles, r *model.SamplingRequest, iw int) []string {
	mark := wrap.Mark(func(s string) string { return st.Mark.Render(s) })
	gutter := st.Gutter.Render("│ ")
	label := func(s string) string { return st.Key.Render(s) }
	var out []string
	field := func(name, value string) {
		out = append(out, wrap.HangChars(wrap.Inline(value, mark), iw, label(name+": "))...)
	}
	text := func(s string) {
		if s == "" {
			out = append(out, gutter+st.Muted.Render("(empty)"))
			return
		}
		out = append(out, wrap.GutterMarked(s, iw, gutter, mark)...)
	}
	if r.SystemPrompt != "" {
		out = append(out, label("system prompt:"))
		text(r.SystemPrompt)
	} else {
		out = append(out, label("system prompt: ")+st.Muted.Render("none"))
	}
	n := len(r.Messages)
	for i, m := range r.Messages {
		out = append(out, label(fmt.Sprintf("message %d of %d · ", i+1, n))+wrap.Inline(m.Role, mark))
		if len(m.Parts) == 0 {
			text("")
		}
		for _, p := range m.Parts {
			switch p.Kind {
			case "text":
				text(p.Text)
			case "image", "audio":
				out = append(out, wrap.HangChars(st.Muted.Render("["+p.Kind+" ")+wrap.Inline(p.MIME, mark)+st.Muted.Render(", "+byteSize(p.Size)+" — not shown]"), iw, gutter)...)
			default:
				out = append(out, gutter+wrap.Inline(p.Kind, mark)+":")
				text(p.Text)
			}
		}
	}
	ic := r.IncludeContext
	if ic == "" {
		ic = "none"
	}
	out = append(out, wrap.HangChars(wrap.Inline(ic, mark)+st.Muted.Render(" (airlock includes no context)"), iw, label("include context: "))...)
	var prefs []string
	if len(r.ModelHints) > 0 {
		// field escapes the whole value; the hints are joined raw.
		prefs = append(prefs, "hints "+strings.Join(r.ModelHints, ", "))
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"cost", r.CostPriority}, {"speed", r.SpeedPriority}, {"intelligence", r.IntelligencePriority}} {
		if p.v != 0 {
			prefs = append(prefs, p.name+" "+strconv.FormatFloat(p.v, 'g', 3, 64))
		}
	}
	if len(prefs) == 0 {
		prefs = []string{"none"}
	}
	field("model preferences", strings.Join(prefs, "; "))
	field("max tokens", strconv.FormatInt(r.MaxTokens, 10))
	if r.Temperature != 0 {
		field("temperature", strconv.FormatFloat(r.Temperature, 'g', 3, 64))
	}
	if len(r.StopSequences) > 0 {
		field("stop sequences", strings.Join(r.StopSequences, " | "))
	}
	if len(r.Tools) == 0 {
		out = append(out, label("tools offered: ")+st.Muted.Render("none"))
	} else {
		out = append(out, label(fmt.Sprintf("tools offered: %d", len(r.Tools)))+st.Muted.Render(" (airlock runs none)"))
		for _, t := range r.Tools {
			out = append(out, wrap.HangChars(wrap.Inline(t.Name, mark), iw, gutter)...)
			if t.Description != "" {
				out = append(out, wrap.GutterMarked(t.Description, iw, gutter+"  ", mark)...)
			}
		}
		if r.ToolChoice != "" {
			field("tool choice", r.ToolChoice)
		}
	}
	if r.Metadata != "" {
		out = append(out, label("metadata:"))
		text(r.Metadata)
	}
	return out
}

func byteSize(n int) string {
	switch {
	case n < 1<<10:
		return strconv.Itoa(n) + " B"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}
