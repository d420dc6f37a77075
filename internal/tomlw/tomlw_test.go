package tomlw

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// Every string in both styles: the importer's output (Printable) and the what-if
// export (ASCII).
func TestQuoteEscapesWhatATerminalWouldRun(t *testing.T) {
	tests := []struct{ in, printable, ascii string }{
		{"plain", `"plain"`, `"plain"`},
		{`a"b\c`, `"a\"b\\c"`, `"a\"b\\c"`},
		{"line\nbreak\ttab", `"line\nbreak\ttab"`, `"line\u000Abreak\u0009tab"`},
		{"\x1b[2J", `"\u001B[2J"`, `"\u001B[2J"`},
		{"\x7f", `"\u007F"`, `"\u007F"`},
		{"\u009b", `"\u009B"`, `"\u009B"`},
		{"a\u202eb", `"a\u202Eb"`, `"a\u202Eb"`},
		{"zero\u200bwidth", `"zero\u200Bwidth"`, `"zero\u200Bwidth"`},
		{"tag\U000E0041", `"tag\U000E0041"`, `"tag\U000E0041"`},
		{"bad\xffutf8", `"bad\uFFFDutf8"`, `"bad\uFFFDutf8"`},
		{"café", `"café"`, `"caf\u00E9"`},
		{"emoji\U0001F600", `"emoji` + "\U0001F600" + `"`, `"emoji\U0001F600"`},
		{"bad\xff\xfeutf8\xff", `"bad\uFFFD\uFFFDutf8\uFFFD"`, `"bad\uFFFDutf8\uFFFD"`},
		{"\uFFFD\xff", `"` + "\uFFFD" + `\uFFFD"`, `"\uFFFD\uFFFD"`},
	}
	for _, tt := range tests {
		if got := Printable.Quote(tt.in); got != tt.printable {
			t.Errorf("Printable.Quote(%q) = %s, want %s", tt.in, got, tt.printable)
		}
		if got := ASCII.Quote(tt.in); got != tt.ascii {
			t.Errorf("ASCII.Quote(%q) = %s, want %s", tt.in, got, tt.ascii)
		}
	}
}

func TestKeysTablesArrays(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Printable.Key("send_email-2"), "send_email-2"},
		{Printable.Key(""), `""`},
		{Printable.Key("a.b"), `"a.b"`},
		{ASCII.Key("é"), `"\u00E9"`},
		{Printable.Key("é"), `"é"`},
		{Printable.Table("servers", "mail", "tools", "send.email"), `[servers.mail.tools."send.email"]`},
		{ASCII.ArrayTable("servers", "mail", "tools", "x y", "rules"), `[[servers.mail.tools."x y".rules]]`},
		{Printable.Array([]string{"a", `"`}), `["a", "\""]`},
		{Printable.Array(nil), `[]`},
	} {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
}

// valid is what a style makes of invalid UTF-8: one U+FFFD per byte (Printable) or
// per run of bytes (ASCII).
func valid(st Style, s string) string {
	if st == ASCII {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// FuzzRoundTrip: whatever the keys and strings hold (any Unicode, controls, quotes,
// backslashes, invalid UTF-8), a table header, a key, a string and an array of
// strings in either style parse back with BurntSushi/toml to the same values, invalid
// UTF-8 replaced; and the text holds no raw control, bidi or zero-width character.
func FuzzRoundTrip(f *testing.F) {
	for _, seed := range [][4]string{
		{"servers", "mail", "send_email", "hello"},
		{"a.b", "", `"q"`, `back\slash`},
		{"\x00\x1b[2J", "\u202e", "line\nbreak\r\t", "\xff\xfe"},
		{"é", "\U0001F600", "\u200b\u200d", "\x7f\u009b\U000E0041"},
		{"[x]", "#c", "= 1", "'''"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	f.Fuzz(func(t *testing.T, t1, t2, k, s string) {
		for _, st := range []Style{Printable, ASCII} {
			doc := st.Table("t", t1, t2) + "\n" + st.Key(k) + " = " + st.Quote(s) + "\n" +
				st.ArrayTable("a", t1) + "\n" + st.Key(k) + " = " + st.Array([]string{s, t1, k}) + "\n"
			for _, r := range doc {
				if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 || !visible(r) && r >= 0x80 || st == ASCII && r >= 0x80 {
					t.Fatalf("style %d: raw %U in %q", st, r, doc)
				}
			}
			if strings.Count(doc, "\n") != 4 || !utf8.ValidString(doc) {
				t.Fatalf("style %d: not four valid lines: %q", st, doc)
			}
			var got map[string]any
			if _, err := toml.Decode(doc, &got); err != nil {
				t.Fatalf("style %d: %v in\n%s", st, err, doc)
			}
			vt1, vt2, vk, vs := valid(st, t1), valid(st, t2), valid(st, k), valid(st, s)
			top, _ := got["t"].(map[string]any)
			tbl, _ := top[vt1].(map[string]any)
			sub, _ := tbl[vt2].(map[string]any)
			if sub[vk] != vs {
				t.Errorf("style %d: [t.%q.%q].%q = %#v, want %q\n%s", st, vt1, vt2, vk, sub[vk], vs, doc)
			}
			list, _ := got["a"].(map[string]any)
			elems, _ := list[vt1].([]map[string]any)
			if len(elems) != 1 {
				t.Fatalf("style %d: a.%q = %#v\n%s", st, vt1, list[vt1], doc)
			}
			arr, _ := elems[0][vk].([]any)
			if len(arr) != 3 || arr[0] != vs || arr[1] != vt1 || arr[2] != vk {
				t.Errorf("style %d: array = %#v, want %q %q %q", st, arr, vs, vt1, vk)
			}
		}
	})
}
