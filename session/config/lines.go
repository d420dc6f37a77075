package config

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// keyLines maps every key path defined in src, in toml.Key.String form, to the line
// (from 1) where it is first mentioned. A table header or dotted key also records each
// of its prefixes, so "servers.web" has a line even when only [servers.web.tools.x]
// names it.
//
// toml v1.6 keeps key positions private (MetaData.keyInfo), so this is a small TOML
// scanner. It is only run on text that toml already parsed, it never panics, and on
// anything it does not understand it stops: keys it has not reached have no line.
func keyLines(src string) map[string]int {
	s := &lineScanner{src: src, line: 1, lines: make(map[string]int), arrays: make(map[string]int)}
	s.src = strings.TrimPrefix(s.src, "\uFEFF")
	s.document()
	return s.lines
}

type lineScanner struct {
	src   string
	i     int
	line  int
	fail  bool
	lines map[string]int
	// arrays counts the elements seen of each array of tables
	arrays map[string]int
}

func (s *lineScanner) more() bool { return !s.fail && s.i < len(s.src) }

func (s *lineScanner) peek(n int) byte {
	if s.i+n < len(s.src) {
		return s.src[s.i+n]
	}
	return 0
}

// record notes the line of k and of each of its prefixes not yet seen.
func (s *lineScanner) record(k toml.Key, line int) {
	for n := 1; n <= len(k); n++ {
		ks := k[:n].String()
		if _, ok := s.lines[ks]; !ok {
			s.lines[ks] = line
		}
	}
}

// space skips blanks, and with newlines also line ends and comments.
func (s *lineScanner) space(newlines bool) {
	for s.more() {
		switch c := s.src[s.i]; {
		case c == ' ' || c == '\t' || c == '\r':
			s.i++
		case c == '\n' && newlines:
			s.line++
			s.i++
		case c == '#' && newlines:
			for s.i < len(s.src) && s.src[s.i] != '\n' {
				s.i++
			}
		default:
			return
		}
	}
}

func (s *lineScanner) expect(c byte) {
	if s.more() && s.src[s.i] == c {
		s.i++
		return
	}
	s.fail = true
}

func (s *lineScanner) document() {
	var table toml.Key
	for s.space(true); s.more(); s.space(true) {
		line := s.line
		if s.src[s.i] == '[' {
			s.i++
			arr := s.peek(0) == '['
			if arr {
				s.i++
			}
			k := s.key()
			if s.fail {
				return
			}
			s.record(k, line)
			if arr {
				// each element of an array of tables gets its own line: KEY[n]
				ks := k.String()
				s.lines[ks+"["+strconv.Itoa(s.arrays[ks])+"]"] = line
				s.arrays[ks]++
			}
			table = k
			s.space(false)
			s.expect(']')
			if arr {
				s.expect(']')
			}
			continue
		}
		k := s.key()
		if s.fail {
			return
		}
		full := append(append(toml.Key{}, table...), k...)
		s.record(full, line)
		s.space(false)
		s.expect('=')
		s.space(false)
		s.value(full)
	}
}

// key reads a dotted key: bare, "basic" or 'literal' parts separated by dots.
func (s *lineScanner) key() toml.Key {
	var k toml.Key
	for {
		s.space(false)
		if !s.more() {
			s.fail = true
			return nil
		}
		var part string
		switch s.src[s.i] {
		case '"':
			part = s.basicKey()
		case '\'':
			end := strings.IndexAny(s.src[s.i+1:], "'\n")
			if end < 0 || s.src[s.i+1+end] != '\'' {
				s.fail = true
				return nil
			}
			part = s.src[s.i+1 : s.i+1+end]
			s.i += end + 2
		default:
			start := s.i
			for s.i < len(s.src) && isBare(s.src[s.i]) {
				s.i++
			}
			if s.i == start {
				s.fail = true
				return nil
			}
			part = s.src[start:s.i]
		}
		if s.fail {
			return nil
		}
		k = append(k, part)
		s.space(false)
		if s.more() && s.src[s.i] == '.' {
			s.i++
			continue
		}
		return k
	}
}

func isBare(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// basicKey reads a one-line "quoted" key and undoes its escapes.
func (s *lineScanner) basicKey() string {
	var b strings.Builder
	s.i++ // opening quote
	for s.more() {
		c := s.src[s.i]
		switch c {
		case '"':
			s.i++
			return b.String()
		case '\n':
			s.fail = true
			return ""
		case '\\':
			s.i++
			if !s.more() {
				s.fail = true
				return ""
			}
			e := s.src[s.i]
			s.i++
			switch e {
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case 'e':
				b.WriteByte(0x1b)
			case '"', '\\':
				b.WriteByte(e)
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if s.i+n > len(s.src) {
					s.fail = true
					return ""
				}
				r, err := strconv.ParseUint(s.src[s.i:s.i+n], 16, 32)
				if err != nil || !utf8.ValidRune(rune(r)) {
					s.fail = true
					return ""
				}
				b.WriteRune(rune(r))
				s.i += n
			default:
				s.fail = true
				return ""
			}
		default:
			b.WriteByte(c)
			s.i++
		}
	}
	s.fail = true
	return ""
}

// value skips one value; the keys of an inline table are recorded under prefix
// (prefix nil: inside an array, where keys are not recorded).
func (s *lineScanner) value(prefix toml.Key) {
	if !s.more() {
		s.fail = true
		return
	}
	switch c := s.src[s.i]; c {
	case '"', '\'':
		s.str(c)
	case '[':
		s.i++
		for s.space(true); s.more(); s.space(true) {
			switch s.src[s.i] {
			case ']':
				s.i++
				return
			case ',':
				s.i++
			default:
				s.value(nil)
			}
		}
		s.fail = true
	case '{':
		s.i++
		for s.space(true); s.more(); s.space(true) {
			switch s.src[s.i] {
			case '}':
				s.i++
				return
			case ',':
				s.i++
			default:
				line := s.line
				k := s.key()
				if s.fail {
					return
				}
				var full toml.Key
				if prefix != nil {
					full = append(append(toml.Key{}, prefix...), k...)
					s.record(full, line)
				}
				s.space(false)
				s.expect('=')
				s.space(false)
				s.value(full)
			}
		}
		s.fail = true
	default: // number, boolean, date-time: up to a delimiter
		start := s.i
		for s.i < len(s.src) && !strings.ContainsRune(",]}\n#", rune(s.src[s.i])) {
			s.i++
		}
		if s.i == start {
			s.fail = true
		}
	}
}

// str skips a basic or literal string, one-line or multi-line, counting lines.
func (s *lineScanner) str(q byte) {
	triple := strings.Repeat(string(q), 3)
	multi := strings.HasPrefix(s.src[s.i:], triple)
	if multi {
		s.i += 3
	} else {
		s.i++
	}
	for s.more() {
		c := s.src[s.i]
		switch {
		case c == '\\' && q == '"':
			if s.peek(1) == '\n' {
				s.line++
			}
			s.i += 2
		case c == q && !multi:
			s.i++
			return
		case c == q && strings.HasPrefix(s.src[s.i:], triple):
			// Up to two quotes may sit right before the closing three.
			n := 0
			for s.i < len(s.src) && s.src[s.i] == q && n < 5 {
				s.i++
				n++
			}
			return
		case c == '\n':
			if !multi {
				s.fail = true
				return
			}
			s.line++
			s.i++
		default:
			s.i++
		}
	}
	s.fail = true
}
