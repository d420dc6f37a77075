package form

import (
	"fmt"
	"net/url"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/airlock-mcp/airlock/trust"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/dialog/wrap"
	"github.com/airlock-mcp/airlock/ui/safetext"
	"github.com/airlock-mcp/airlock/ui/theme"
)

const (
	maxNameBytes    = 1 << 10
	maxDescBytes    = 4 << 10
	maxMessageBytes = 16 << 10
	maxURLBytes     = 8 << 10
	maxChoicesShown = 20
	minBodyLines    = 3
)

func (f Form) mark(s string) string { return f.st.Mark.Render(s) }

// name escapes an untrusted name for one line.
func (f Form) name(s string) string {
	return wrap.Inline(safetext.Limit(s, maxNameBytes), f.mark)
}

// layout sizes everything and rebuilds the scrolled body. With keepOffset
// the body stays where the person scrolled it; otherwise it scrolls to show
// the focused field.
func (f *Form) layout(keepOffset bool) {
	fr := f.st.Dialog
	f.dw = max(min(f.width, MaxWidth), fr.GetHorizontalFrameSize()+24)
	f.iw = f.dw - fr.GetHorizontalFrameSize()
	ih := max(f.height-fr.GetVerticalFrameSize(), 1)

	f.header = f.headerLines()
	footer := 2 // the scroll note (or a blank line) and the help
	vpH := max(ih-len(f.header)-footer, minBodyLines)

	body := f.bodyLines(vpH)
	f.help.SetWidth(f.iw)
	f.vp.SetWidth(f.iw)
	f.vp.SetHeight(min(len(body), vpH))
	off := f.vp.YOffset()
	f.vp.SetContentLines(body)
	if keepOffset {
		f.vp.SetYOffset(off)
		return
	}
	h := f.vp.Height()
	switch {
	case f.focusEnd < h:
		off = 0 // keep the top (and an elicitation's message) in view
	case f.focusEnd-f.focusTop+1 > h || f.focusTop < off:
		off = f.focusTop
	case f.focusEnd >= off+h:
		off = f.focusEnd - h + 1
	}
	f.vp.SetYOffset(off)
}

func (f Form) headerLines() []string {
	var out []string
	switch f.mode {
	case modeCall:
		verb := f.verb
		if verb == "" {
			verb = "call "
		}
		out = wrap.HangChars(f.name(f.server)+f.st.Muted.Render(" › ")+f.name(f.tool), f.iw, f.st.Title.Render(verb))
	default:
		who := f.name(f.server)
		if f.hasServerTrust {
			ts := f.st.WarnText
			switch f.serverTrust {
			case trust.Trusted:
				ts = f.st.OKText
			case trust.BlockedServer:
				ts = f.st.ErrorText
			}
			who += " " + ts.Render("("+theme.TrustGlyph(f.serverTrust)+" "+f.serverTrust.String()+")")
		}
		out = wrap.HangChars(who+f.st.Title.Render(" asks for input"), f.iw, f.st.Title.Render("server "))
		out = append(out, wrap.Words(f.st.Muted.Render("This request comes from the server. It is not an airlock approval."), f.iw)...)
	}
	for _, n := range f.notes {
		out = append(out, wrap.Hang(wrap.Inline(n, f.mark), f.iw, f.st.Muted.Render("note: "))...)
	}
	if f.sch.Problem != nil {
		out = append(out, f.errorLines("cannot check the input: "+f.sch.Problem.Error(), f.iw, "")...)
	}
	for _, e := range f.topErr {
		out = append(out, f.errorLines(e, f.iw, "")...)
	}
	if f.anyRequired() && !f.raw {
		out = append(out, f.st.WarnText.Render("*")+f.st.Muted.Render(" required"))
	}
	return out
}

func (f Form) anyRequired() bool {
	for _, fd := range f.fields {
		if fd.required {
			return true
		}
	}
	return false
}

// errorLines shows an error that may embed untrusted text, escaped.
func (f Form) errorLines(msg string, width int, indent string) []string {
	return wrap.Hang(wrap.Inline(safetext.Limit(msg, maxDescBytes), f.mark), width, indent+f.st.ErrorText.Render("✗ "))
}

// bodyLines is the scrolled part: the elicitation's message, then the
// fields, the raw editor, or the URL.
func (f *Form) bodyLines(vpH int) []string {
	var out []string
	if f.mode != modeCall && f.message != "" {
		out = append(out, f.st.Key.Render("message"))
		out = append(out, wrap.GutterMarked(safetext.Limit(f.message, maxMessageBytes), f.iw, f.st.Gutter.Render("│")+" ", f.mark)...)
		out = append(out, "")
	}
	f.focusTop, f.focusEnd = len(out), len(out)
	switch {
	case f.mode == modeURL:
		out = append(out, f.urlLines()...)
		f.focusEnd = len(out) - 1
	case f.raw:
		f.rawArea.SetWidth(f.iw)
		f.rawArea.SetHeight(max(vpH-len(out)-1, minBodyLines))
		what := "arguments as JSON"
		if f.mode != modeCall {
			what = "answer as JSON"
		}
		out = append(out, f.st.Key.Render(what))
		f.focusTop = len(out) - 1
		out = append(out, strings.Split(f.rawArea.View(), "\n")...)
		f.focusEnd = len(out) - 1
	case len(f.fields) == 0 && f.mode == modeCall:
		out = append(out, f.st.Muted.Render("This tool takes no arguments."))
	case len(f.fields) == 0:
		out = append(out, wrap.Words(f.st.Muted.Render("The server asks for no fields: accept, decline or cancel."), f.iw)...)
	default:
		lw := f.labelWidth()
		for i := range f.fields {
			ls := f.fieldLines(i, lw)
			if i == f.focus {
				f.focusTop, f.focusEnd = len(out), len(out)+len(ls)-1
			}
			out = append(out, ls...)
		}
	}
	return out
}

func (f Form) urlLines() []string {
	out := []string{f.st.Key.Render("the server asks you to open")}
	out = append(out, wrap.GutterMarked(safetext.Limit(f.url, maxURLBytes), f.iw, f.st.Gutter.Render("│")+" ", f.mark)...)
	if u, err := url.Parse(f.url); err == nil && u.Host != "" {
		out = append(out, wrap.HangChars(f.name(u.Host), f.iw, f.st.Key.Render("host  "))...)
	} else {
		out = append(out, f.st.WarnText.Render("⚠ this is not a web address airlock can read"))
	}
	out = append(out, "")
	out = append(out, wrap.Words(f.st.Muted.Render("airlock does not open it. Accept tells the server you will; decline or cancel tells it no."), f.iw)...)
	return out
}

// labelWidth is the width of the label column: the longest label that fits
// in a third of the line.
func (f Form) labelWidth() int {
	w := 0
	for _, fd := range f.fields {
		w = max(w, lipgloss.Width(f.name(fd.name))+2)
	}
	return min(max(w+2+2, 12), max(f.iw/3, 12))
}

// fieldLines renders field i: marker, name, required mark, input; then, for
// the focused field, its description and choices; then its error.
func (f *Form) fieldLines(i, lw int) []string {
	fd := &f.fields[i]
	focused := i == f.focus
	marker := "  "
	if focused {
		marker = f.st.Title.Render("▸ ")
	}
	label := marker + f.name(fd.name)
	if fd.required {
		label += f.st.WarnText.Render(" *")
	}
	var out []string
	inputW := f.iw - lw
	if fd.kind == kindJSON {
		out = append(out, wrap.HangChars(label+"  "+f.st.Muted.Render(fd.hint), f.iw, "")...)
		fd.area.SetWidth(f.iw - 4)
		// Blurred editors show what they hold, up to three lines; the
		// focused one has room to type.
		n := fd.area.LineCount()
		if focused {
			fd.area.SetHeight(min(max(n+1, 3), 8))
		} else {
			fd.area.SetHeight(min(max(n, 1), 3))
		}
		for _, l := range strings.Split(fd.area.View(), "\n") {
			out = append(out, "    "+l)
		}
	} else {
		input := f.inputLines(fd, focused, inputW)
		indent := strings.Repeat(" ", lw)
		if lipgloss.Width(label) < lw {
			out = append(out, label+strings.Repeat(" ", lw-lipgloss.Width(label))+input[0])
		} else {
			out = append(out, wrap.HangChars(label, f.iw, "")...)
			out = append(out, indent+input[0])
		}
		for _, l := range input[1:] {
			out = append(out, indent+l)
		}
	}
	if focused {
		out = append(out, f.suggestionLines(fd)...)
		if fd.desc != "" {
			for _, l := range wrap.GutterMarked(safetext.Limit(fd.desc, maxDescBytes), f.iw-4, f.st.Gutter.Render("│")+" ", f.mark) {
				out = append(out, "    "+l)
			}
		}
		if fd.kind == kindEnum && len(fd.options) > 1 {
			out = append(out, f.choiceLines(fd)...)
		}
		if fd.unsafeDefault != "" {
			note := "the server's default is not prefilled because it holds characters a text field cannot show: " +
				wrap.Inline(safetext.Limit(fd.unsafeDefault, maxDescBytes), f.mark) + " — leave the field empty to let the server apply it"
			out = append(out, wrap.Hang(note, f.iw, "    "+f.st.WarnText.Render("⚠ "))...)
		}
	}
	if fd.err != "" {
		out = append(out, f.errorLines(fd.err, f.iw, "    ")...)
	}
	return out
}

// inputLines is the field's editor: a text input, or the current choice.
func (f Form) inputLines(fd *field, focused bool, width int) []string {
	if fd.inputField() {
		fd.input.SetWidth(max(width-1, 1))
		return []string{fd.input.View()}
	}
	if fd.kind == kindMulti {
		return f.checklistLines(fd, focused, width)
	}
	value := f.st.Muted.Render("not set")
	if fd.choice >= 0 {
		value = wrap.Inline(safetext.Limit(fd.options[fd.choice].label, maxDescBytes), f.mark)
	}
	pos := fmt.Sprintf(" %d/%d", fd.choice+1, len(fd.options))
	if fd.choice < 0 {
		pos = fmt.Sprintf(" –/%d", len(fd.options))
	}
	s := "‹ " + value + " ›" + f.st.Muted.Render(pos)
	if focused {
		s += f.st.Muted.Render("  space/←/→")
	}
	return wrap.HangChars(s, width, "")
}

// checklistLines is a multi-select: one "[x] value" per option, the cursor's
// marked while focused.
func (f Form) checklistLines(fd *field, focused bool, width int) []string {
	n := 0
	for _, on := range fd.checked {
		if on {
			n++
		}
	}
	// A window of at most maxChoicesShown options around the cursor: a
	// schema may list thousands.
	start := max(min(fd.choice-maxChoicesShown/2, len(fd.options)-maxChoicesShown), 0)
	end := min(start+maxChoicesShown, len(fd.options))
	var out []string
	if start > 0 {
		out = append(out, f.st.Muted.Render(fmt.Sprintf("  … %d more above", start)))
	}
	for i := start; i < end; i++ {
		box := "[ ] "
		if fd.checked[i] {
			box = "[x] "
		}
		cur := "  "
		if focused && i == fd.choice {
			cur = "▸ "
		}
		line := cur + box + wrap.Inline(safetext.Limit(fd.options[i].label, 256), f.mark)
		out = append(out, wrap.HangChars(line, width, "      ")...)
	}
	if end < len(fd.options) {
		out = append(out, f.st.Muted.Render(fmt.Sprintf("  … %d more below", len(fd.options)-end)))
	}
	head := f.st.Muted.Render(fmt.Sprintf("%d of %d chosen", n, len(fd.options)))
	if focused {
		head += f.st.Muted.Render("  ←/→ move · space check")
	}
	return append([]string{head}, out...)
}

func (f Form) choiceLines(fd *field) []string {
	var labels []string
	for i, o := range fd.options {
		if i == maxChoicesShown {
			labels = append(labels, fmt.Sprintf("… %d more", len(fd.options)-i))
			break
		}
		labels = append(labels, wrap.Inline(safetext.Limit(o.label, 256), f.mark))
	}
	return wrap.Hang(strings.Join(labels, f.st.Muted.Render(" · ")), f.iw, "    "+f.st.Key.Render("choices  "))
}

// View renders the form, frame included. Every line is at most the width
// given to SetSize (or MaxWidth), and there are at most as many lines as the
// height given, unless the height is too small for the header.
func (f Form) View() string {
	lines := append([]string{}, f.header...)
	lines = append(lines, strings.Split(f.vp.View(), "\n")...)
	lines = append(lines, f.scrollNote())
	lines = append(lines, common.HelpLine(f.help, f.keys.ShortHelp(), f.iw))
	return f.st.Dialog.Width(f.dw).Render(strings.Join(lines, "\n"))
}

func (f Form) scrollNote() string {
	total, h := f.vp.TotalLineCount(), f.vp.Height()
	if total <= h {
		return ""
	}
	above := f.vp.YOffset()
	below := max(total-above-h, 0)
	var parts []string
	if above > 0 {
		parts = append(parts, fmt.Sprintf("↑ %d more line%s above", above, common.Plural(above)))
	}
	if below > 0 {
		parts = append(parts, fmt.Sprintf("↓ %d more line%s below", below, common.Plural(below)))
	}
	return ansi.Truncate(f.st.WarnText.Render(strings.Join(parts, " · ")), f.iw, "…")
}
