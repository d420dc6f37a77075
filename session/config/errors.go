package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Error is one problem in a configuration. Parse, Load and Validate return every
// problem they find joined with errors.Join, ordered by line then key path; use
// errors.As to reach the first, or the Unwrap() []error of the joined error for all.
//
// It reads "FILE:LINE: KEY: MESSAGE" ("FILE:LINE:COL: MESSAGE" for a TOML syntax
// error, "FILE:LINE: unknown key KEY" for an unknown key); parts that are not known
// are left out.
type Error struct {
	// File is the config file's path ("" when the config was not read from a file).
	File string
	// Line and Col locate the problem, from 1; 0 when not known.
	Line, Col int
	// Key is the key path, as in servers.web.trust or servers.web.labels[1]; "" for a
	// syntax error.
	Key string
	// Msg says what is wrong, and usually what was wanted instead. It never holds a
	// header or environment value.
	Msg string

	k         toml.Key // Key without any [index], for finding the line
	lineKey   string   // when set, the line of this key (an element of an array of tables) is used first
	unknown   bool     // reads "unknown key KEY"
	wrongType bool     // the value had the wrong type and was left out
}

// Error formats the problem as described on the type.
func (e *Error) Error() string {
	var b strings.Builder
	loc := e.File
	if e.Line > 0 {
		if loc == "" {
			loc = "line " + strconv.Itoa(e.Line)
		} else {
			loc += ":" + strconv.Itoa(e.Line)
		}
		if e.Col > 0 {
			loc += ":" + strconv.Itoa(e.Col)
		}
	}
	if loc != "" {
		b.WriteString(loc)
		b.WriteString(": ")
	}
	switch {
	case e.unknown:
		b.WriteString("unknown key ")
		b.WriteString(e.Key)
		if e.Msg != "" {
			b.WriteString("; ")
			b.WriteString(e.Msg)
		}
	case e.Key != "":
		b.WriteString(e.Key)
		b.WriteString(": ")
		b.WriteString(e.Msg)
	default:
		b.WriteString(e.Msg)
	}
	return b.String()
}

// problems collects Errors.
type problems []*Error

// add records a problem at key.
func (p *problems) add(key toml.Key, format string, args ...any) {
	*p = append(*p, &Error{Key: key.String(), k: key, Msg: fmt.Sprintf(format, args...)})
}

// addAt records a problem at element i of the array at key.
func (p *problems) addAt(key toml.Key, i int, format string, args ...any) {
	*p = append(*p, &Error{Key: key.String() + "[" + strconv.Itoa(i) + "]", k: key, Msg: fmt.Sprintf(format, args...)})
}

// wrongType records that the value at key (element i of it when i >= 0) has the
// wrong type.
func (p *problems) wrongType(key toml.Key, i int, format string, args ...any) {
	if i >= 0 {
		p.addAt(key, i, format, args...)
	} else {
		p.add(key, format, args...)
	}
	(*p)[len(*p)-1].wrongType = true
}

// locate sets File on every problem and Line from lines, then sorts by line and key.
func (p problems) locate(file string, lines map[string]int) {
	for _, e := range p {
		e.File = file
		if l, ok := lines[e.lineKey]; ok && e.Line == 0 && e.lineKey != "" {
			e.Line = l
		}
		if e.Line == 0 && e.k != nil {
			e.Line = lines[e.k.String()]
		}
	}
	p.sort()
}

// sort orders by line, then key path; the elements of an array stay in index order.
func (p problems) sort() {
	slices.SortStableFunc(p, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.k.String(), b.k.String()))
	})
}

// err joins the problems, or returns nil when there are none.
func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	errs := make([]error, len(p))
	for i, e := range p {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// below reports whether a is a strict descendant of b.
func below(a, b toml.Key) bool {
	return len(a) > len(b) && slices.Equal(a[:len(b)], b)
}

// syntaxError turns a toml decoding error into an Error at its position.
func syntaxError(file, src string, err error) *Error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
	}
	return &Error{File: file, Line: pe.Position.Line, Col: column(src, pe.Position), Msg: pe.Message}
}

// column is pos's column in bytes from 1. toml v1.6 computes Col one line too early
// when the error starts a line (it reports the previous line's length + 1), so it
// is recomputed from Line and Start.
func column(src string, pos toml.Position) int {
	start := 0
	for range pos.Line - 1 {
		i := strings.IndexByte(src[start:], '\n')
		if i < 0 {
			return pos.Col
		}
		start += i + 1
	}
	end := len(src)
	if i := strings.IndexByte(src[start:], '\n'); i >= 0 {
		end = start + i
	}
	if pos.Start < start || pos.Start > end {
		return pos.Col
	}
	return pos.Start - start + 1
}
