package jsonlex

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	type res struct {
		end int
		e   Err
	}
	cases := []struct {
		name string
		got  res
		want res
	}{
		{"number", r2(Number([]byte(`-12.5e+3,`), 0)), res{8, OK}},
		{"leading zero ends it", r2(Number([]byte(`01`), 0)), res{1, OK}},
		{"minus alone", r2(Number([]byte(`-`), 0)), res{1, EOF}},
		{"no fraction digits", r2(Number([]byte(`1.x`), 0)), res{2, Syntax}},
		{"no exponent digits", r2(Number([]byte(`1e+`), 0)), res{3, EOF}},
		{"literal", r2(Literal([]byte(`true]`), 0, "true")), res{4, OK}},
		{"literal cut", r2(Literal([]byte(`tr`), 0, "true")), res{2, EOF}},
		{"literal wrong", r2(Literal([]byte(`trux`), 0, "true")), res{3, Syntax}},
		{"string", r2(SkipString([]byte("\"a\\\"\\u00e9\xff\" "), 0)), res{12, OK}},
		{"control byte", r2(SkipString([]byte("\"a\x01\""), 0)), res{2, Syntax}},
		{"bad escape", r2(SkipString([]byte(`"\x"`), 0)), res{2, Syntax}},
		{"bad hex", r2(SkipString([]byte(`"\u00g0"`), 0)), res{5, Syntax}},
		{"short hex", r2(SkipString([]byte(`"\u00`), 0)), res{5, EOF}},
		{"unterminated", r2(SkipString([]byte(`"abc`), 0)), res{4, EOF}},
		{"value", r2(Skip([]byte(`{"a":[1,{"b":null}]} x`), 0, MaxNesting)), res{20, OK}},
		{"too deep", r2(Skip([]byte(`[[[]]]`), 0, 2)), res{2, Deep}},
		{"trailing comma", r2(Skip([]byte(`[1,]`), 0, 9)), res{3, Syntax}},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func r2(end int, e Err) struct {
	end int
	e   Err
} {
	return struct {
		end int
		e   Err
	}{end, e}
}

// Strings decode as encoding/json decodes them: invalid UTF-8 and lone or
// misordered surrogates as U+FFFD.
func TestAppendStringAsEncodingJSON(t *testing.T) {
	for _, s := range []string{`"plain"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\udc00\ud800x"`, `"\ud800\u0041"`, "\"a\xffb\xc3\"", `"\b\f\n\r\t\/\\\""`, `"\ufffd"`} {
		got, end, e := AppendString(nil, []byte(s), 0)
		var want string
		if err := json.Unmarshal([]byte(s), &want); err != nil || e != OK || end != len(s) || string(got) != want {
			t.Errorf("AppendString(%q) = %q, %d, %v; encoding/json %q (%v)", s, got, end, e, want, err)
		}
	}
}

// Skip answers as json.Valid does, nesting bound included.
func TestSkipAsValid(t *testing.T) {
	for _, s := range []string{`{}`, `{"a":1,}`, `[1 2]`, `{"a" 1}`, `"\u12"`, `nul`, `-01`, `{"a":[]}`,
		strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting),
		strings.Repeat("[", MaxNesting+1) + strings.Repeat("]", MaxNesting+1)} {
		b := []byte(s)
		end, e := Skip(b, Space(b, 0), MaxNesting)
		if got := e == OK && Space(b, end) == len(b); got != json.Valid(b) {
			t.Errorf("Skip(%.30q) = %v, json.Valid %v", s, got, !got)
		}
	}
}

// RawEnd stops at what a string cannot hold as it is and at nothing else.
func TestRawEnd(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"caf\u00e9 \U0001F600\"", 10},
		{"a\xffb\\n", 3},
		{"tab\there", 3},
		{"to the end", 10},
		{"", 0},
	} {
		if got := RawEnd([]byte(c.in), 0); got != c.want {
			t.Errorf("RawEnd(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}
