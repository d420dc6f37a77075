// Package safetext is the one gate every server-controlled string passes
// before it reaches a terminal: tool names, descriptions, schemas, echoed
// arguments, results, stderr, log messages and errors, in the TUI and in CLI
// text output alike.
//
// It escapes, never silently drops. Every byte or rune that could move the
// cursor, change the screen, the title or the clipboard, reorder text, hide
// text, or otherwise make what the person reads differ from what the server
// sent is replaced by a visible mark; everything else is passed through
// unchanged and in order. The mark formats are:
//
//   - ⟨NUL⟩, ⟨BEL⟩, ⟨BS⟩, ⟨CR⟩, ⟨ESC⟩, ⟨DEL⟩ …: C0 controls other than
//     newline and tab, and DEL, by their ASCII names (NUL SOH STX ETX EOT ENQ
//     ACK BEL BS VT FF CR SO SI DLE DC1 DC2 DC3 DC4 NAK SYN ETB CAN EM SUB ESC
//     FS GS RS US, DEL). CR is marked even in CRLF.
//   - ⟨\x9b⟩: a byte that is not part of valid UTF-8, including raw C1 bytes
//     0x80-0x9F and encoded surrogates, in lower-case hex.
//   - ⟨U+202E⟩: a valid rune that must not reach the terminal as is, in
//     upper-case hex with at least four digits. These are: C1 controls
//     U+0080-U+009F; every format character (general category Cf: the bidi
//     controls U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C, the
//     zero-width U+200B-U+200D, U+2060-U+2064, U+FEFF, U+180E, the soft
//     hyphen U+00AD, the tag characters U+E0001 and U+E0020-U+E007F …); every
//     Other_Default_Ignorable_Code_Point (U+034F, the Hangul fillers U+115F,
//     U+1160, U+3164, U+FFA0, the rest of U+E0000-U+E0FFF …); every variation
//     selector (U+FE00-U+FE0F, U+E0100-U+E01EF, U+180B-U+180D, U+180F); the
//     line and paragraph separators U+2028 and U+2029; noncharacters such as
//     U+FFFE; and U+27E8 "⟨" itself. Together this is every
//     Default_Ignorable_Code_Point of the Unicode version Go was built with,
//     plus a few visible format characters (U+0600-U+0605, U+FFF9-U+FFFB)
//     that are marked to err on the safe side.
//
// A literal "⟨" in the input is marked as ⟨U+27E8⟩, so every "⟨" in the output
// begins a mark and the output can be read back to the exact input bytes.
//
// ESC is marked and not parsed: the bytes of the sequence it would have
// started ("[2J", "]0;title", "P…") stay in the output as plain visible text,
// and any control inside it (BEL, ST as ESC \, C1) is marked on its own. So no
// escape sequence can take effect, an unterminated one cannot swallow the text
// after it, and the person sees exactly what the server tried.
//
// Decisions worth knowing:
//   - Variation selectors and U+200D ZERO WIDTH JOINER are marked even inside
//     emoji sequences ("❤⟨U+FE0F⟩"), because runs of them can carry a payload
//     a model reads and a person cannot see. The cost is cosmetic.
//   - Private-use characters (U+E000-U+F8FF, planes 15 and 16), unassigned
//     code points and visible spaces (U+00A0, U+3000, U+2800 …) are passed
//     through: they occupy a cell and move nothing. Look-alike letters such as
//     Cyrillic "а" are passed through too; spotting them is trust's job.
//   - Newline and tab pass through; use Gutter or Block for multi-line text.
//   - Look-alikes of the mark brackets (U+2329, U+3008) are passed through:
//     in styled output marks are told apart by their style.
//
// The package must never write to a terminal, log, or keep mutable state; every
// function is safe for concurrent use. Apply it exactly once, at the point
// where text meets the terminal: escaping escaped text marks the marks'
// brackets again. ansi.Strip is no substitute: it is a layout helper that
// keeps CR, BS and BEL and drops the text after an unterminated sequence.
package safetext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Segment is one piece of escaped text: either literal text from the input
// (Mark false), safe to print as is, or one or more consecutive marks (Mark
// true), which the caller should show in a distinct style.
type Segment struct {
	// Text is the literal input text, or the marks, such as "⟨ESC⟩⟨BEL⟩".
	Text string
	// Mark reports whether Text is marks rather than input text.
	Mark bool
}

// Segments splits s into literal text and marks. Consecutive marks are merged
// into one segment, so segments alternate between Mark false and Mark true and
// none is empty; Segments of "" is nil. Joining the Text of every segment gives
// Escape(s). Literal segments share memory with s.
func Segments(s string) []Segment {
	i := nextMarked(s, 0)
	if i == len(s) {
		if s == "" {
			return nil
		}
		return []Segment{{Text: s}}
	}
	var segs []Segment
	if i > 0 {
		segs = append(segs, Segment{Text: s[:i]})
	}
	for i < len(s) {
		var m strings.Builder
		i = writeMarks(&m, s, i)
		segs = append(segs, Segment{Text: m.String(), Mark: true})
		j := nextMarked(s, i)
		if j > i {
			segs = append(segs, Segment{Text: s[i:j]})
		}
		i = j
	}
	return segs
}

// Escape returns s with every mark inline as plain text, for output that has
// no styles, such as `airlock check` text mode and logs. The result holds no
// byte below 0x20 except newline and tab, no DEL, no ESC, no C1 control, no
// invalid UTF-8 and no bidi, zero-width or other invisible rune. A string that
// needs no marks, such as printable ASCII, is returned as is without
// allocating. The result may be up to ten times as long as s; bound s first
// with Limit or Truncate.
func Escape(s string) string {
	i := nextMarked(s, 0)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/4 + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		i = writeMarks(&b, s, i)
		j := nextMarked(s, i)
		b.WriteString(s[i:j])
		i = j
	}
	return b.String()
}

// Styled is Escape with each run of consecutive marks passed through mark,
// which typically wraps it in a lipgloss style. Literal text is not passed
// through mark. mark must not return text that is unsafe for a terminal
// beyond its own styling. A string that needs no marks is returned as is.
func Styled(s string, mark func(string) string) string {
	i := nextMarked(s, 0)
	if i == len(s) {
		return s
	}
	var b, m strings.Builder
	b.Grow(len(s) + len(s)/4 + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		i = writeMarks(&m, s, i)
		b.WriteString(mark(m.String()))
		m.Reset()
		j := nextMarked(s, i)
		b.WriteString(s[i:j])
		i = j
	}
	return b.String()
}

// Truncate cuts s to at most maxBytes bytes at a rune boundary and returns the
// kept part and the number of bytes cut. A valid multi-byte rune is never
// split; an invalid byte counts as a rune of its own. A negative maxBytes is
// treated as zero. Truncate does not escape.
func Truncate(s string, maxBytes int) (string, int) {
	maxBytes = max(maxBytes, 0)
	if len(s) <= maxBytes {
		return s, 0
	}
	cut := maxBytes
	// Only a rune that starts in the last UTFMax-1 kept bytes can straddle
	// the cut; looking no further keeps this O(1) on invalid input.
	for j := cut - 1; j >= 0 && j > cut-utf8.UTFMax; j-- {
		if utf8.RuneStart(s[j]) {
			if _, size := utf8.DecodeRuneInString(s[j:]); j+size > cut {
				cut = j
			}
			break
		}
	}
	return s[:cut], len(s) - cut
}

// Limit is Truncate that says so: when s is longer than maxBytes it returns
// the kept part followed by "… N more bytes" ("… 1 more byte"), where N is the
// number of bytes cut, so text is never cut silently. The note is not counted
// in maxBytes. Limit does not escape.
func Limit(s string, maxBytes int) string {
	kept, cut := Truncate(s, maxBytes)
	if cut == 0 {
		return s
	}
	unit := " more bytes"
	if cut == 1 {
		unit = " more byte"
	}
	return kept + "… " + strconv.Itoa(cut) + unit
}

// Gutter escapes s and starts every line of the result with prefix, such as
// "│ ", so that untrusted multi-line text such as "\n✔ Approved by user"
// cannot pass for one of airlock's own lines. Lines are separated by "\n"; a
// trailing newline yields a last line that holds only the prefix, and "" yields
// the prefix alone. prefix is airlock's own text and is not escaped.
//
// The gutter only holds if the caller does not wrap the result afterwards:
// wrap the escaped text to the width left beside the gutter first.
func Gutter(s, prefix string) string {
	e := Escape(s)
	n := strings.Count(e, "\n")
	var b strings.Builder
	b.Grow(len(e) + (n+1)*len(prefix))
	for {
		b.WriteString(prefix)
		line, rest, more := strings.Cut(e, "\n")
		b.WriteString(line)
		if !more {
			break
		}
		b.WriteByte('\n')
		e = rest
	}
	return b.String()
}

// Block prepares untrusted multi-line text for display: it limits s to
// maxBytes input bytes with Limit, escapes it, and prefixes every line with
// prefix as Gutter does.
func Block(s, prefix string, maxBytes int) string {
	return Gutter(Limit(s, maxBytes), prefix)
}

// nextMarked returns the index of the first unit of s at or after i that must
// be marked, or len(s) if there is none.
func nextMarked(s string, i int) int {
	for i < len(s) {
		// Skip printable ASCII eight bytes at a time: the common case.
		for i+8 <= len(s) && printableWord(s[i:i+8]) {
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if !asciiSafe(c) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if size == 1 || runeMarked(r) { // size 1 with c ≥ 0x80 is invalid UTF-8
			return i
		}
		i += size
	}
	return i
}

// printableWord reports whether all eight bytes of w are in 0x20-0x7E. It
// tests them at once: the subtraction sets a byte's high bit if the byte is
// below 0x20, the addition if it is 0x7F or above, and w itself if ≥ 0x80.
func printableWord(w string) bool {
	_ = w[7]
	x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (x|(x-0x20*ones)|(x+0x01*ones))&highs == 0
}

// writeMarks writes the marks for the run of consecutive units of s that must
// be marked, starting at i, and returns the index just after the run.
func writeMarks(b *strings.Builder, s string, i int) int {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSafe(c) {
				return i
			}
			b.WriteString("⟨")
			if c == 0x7f {
				b.WriteString("DEL")
			} else {
				b.WriteString(c0Name(c))
			}
			b.WriteString("⟩")
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case size == 1:
			b.WriteString(`⟨\x`)
			b.WriteByte(lowerHex[c>>4])
			b.WriteByte(lowerHex[c&0xf])
			b.WriteString("⟩")
		case runeMarked(r):
			b.WriteString("⟨U+")
			shift := 12 // at least four digits
			for r>>(shift+4) != 0 {
				shift += 4
			}
			for ; shift >= 0; shift -= 4 {
				b.WriteByte(upperHex[r>>shift&0xf])
			}
			b.WriteString("⟩")
		default:
			return i
		}
		i += size
	}
	return i
}

// asciiSafe reports whether the ASCII byte c may reach a terminal as is.
func asciiSafe(c byte) bool {
	return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t'
}

// runeMarked reports whether the valid rune r, at or above U+0080, must be
// marked. See the package comment for the classes and why.
func runeMarked(r rune) bool {
	switch {
	case r <= 0x9f: // C1 controls
		return true
	case r == '⟨': // the mark bracket, so marks stay unambiguous
		return true
	case markPages[r>>8/64]&(1<<(r>>8%64)) == 0:
		// No marked rune in r's block of 256: most text, including all of
		// CJK, stops here without a table search.
		return false
	}
	return inMarkedTables(r)
}

// inMarkedTables reports whether r has one of the Unicode properties that are
// marked. Cf, Other_Default_Ignorable_Code_Point and Variation_Selector
// together are a superset of Default_Ignorable_Code_Point: the few visible
// format characters it leaves out (U+0600-U+0605, U+FFF9-U+FFFB …) are marked
// too, which errs on the safe side.
func inMarkedTables(r rune) bool {
	return unicode.In(r, markedTables()...)
}

func markedTables() []*unicode.RangeTable {
	return []*unicode.RangeTable{
		unicode.Cf,
		unicode.Other_Default_Ignorable_Code_Point,
		unicode.Variation_Selector,
		unicode.Zl,
		unicode.Zp,
		unicode.Noncharacter_Code_Point,
	}
}

// markPages has bit n set if the block of 256 runes starting at n<<8 holds a
// rune of markedTables. It is computed once from the tables, so it follows
// the Unicode version of the Go release, and is read-only afterwards.
var markPages = func() (pages [(unicode.MaxRune + 1) >> 8 / 64]uint64) {
	set := func(r uint32) { pages[r>>8/64] |= 1 << (r >> 8 % 64) }
	for _, t := range markedTables() {
		for _, g := range t.R16 {
			for r := uint32(g.Lo); r <= uint32(g.Hi); r += uint32(g.Stride) {
				set(r)
			}
		}
		for _, g := range t.R32 {
			for r := g.Lo; r <= g.Hi; r += g.Stride {
				set(r)
			}
		}
	}
	return pages
}()

// c0Name returns the ASCII name of the C0 control c, such as "ESC".
func c0Name(c byte) string {
	const names = "NULSOHSTXETXEOTENQACKBELBS TABLF VT FF CR SO SI " +
		"DLEDC1DC2DC3DC4NAKSYNETBCANEM SUBESCFS GS RS US "
	return strings.TrimSuffix(names[3*int(c):3*int(c)+3], " ")
}

const (
	lowerHex = "0123456789abcdef"
	upperHex = "0123456789ABCDEF"
)
