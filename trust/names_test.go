package trust

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fnCase is one case of a function of one argument: in gives want.
type fnCase[In any, Out comparable] struct {
	name string
	in   In
	want Out
}

// checkFn runs each case as a subtest of its name: f, called fname in failures,
// must give want for in.
func checkFn[In any, Out comparable](t *testing.T, fname string, f func(In) Out, cases []fnCase[In, Out]) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if got := f(tt.in); got != tt.want {
				t.Errorf("%s(%#v) = %v, want %v", fname, tt.in, got, tt.want)
			}
		})
	}
}

func TestValidToolName(t *testing.T) {
	checkFn(t, "ValidToolName", ValidToolName, []fnCase[string, bool]{
		{name: "snake case", in: "send_email", want: true},
		{name: "all allowed classes", in: "Az09_.-", want: true},
		{name: "one char", in: "x", want: true},
		{name: "128 chars", in: strings.Repeat("a", 128), want: true},
		{name: "qualified-looking name is still a name", in: "b__send_email", want: true},
		{name: "empty", in: "", want: false},
		{name: "129 chars", in: strings.Repeat("a", 129), want: false},
		{name: "space", in: "send email", want: false},
		{name: "slash", in: "fs/read", want: false},
		{name: "newline", in: "send\nemail", want: false},
		{name: "escape", in: "send\x1b[2Jemail", want: false},
		{name: "NUL", in: "a\x00", want: false},
		{name: "cyrillic a", in: "re\u0430d_file", want: false},
		{name: "invalid UTF-8", in: "a\xff", want: false},
		{name: "colon", in: "mail:send", want: false},
	})
}

func TestValidServerName(t *testing.T) {
	checkFn(t, "ValidServerName", ValidServerName, []fnCase[string, bool]{
		{name: "word", in: "notes", want: true},
		{name: "digit first", in: "1password", want: true},
		{name: "hyphen inside", in: "my-server", want: true},
		{name: "hyphen last", in: "web-", want: true},
		{name: "32 chars", in: strings.Repeat("a", 32), want: true},
		{name: "empty", in: "", want: false},
		{name: "33 chars", in: strings.Repeat("a", 33), want: false},
		{name: "hyphen first", in: "-web", want: false},
		{name: "upper case", in: "Web", want: false},
		{name: "underscore would break SERVER__TOOL", in: "a__b", want: false},
		{name: "dot", in: "a.b", want: false},
		{name: "space", in: "a b", want: false},
		{name: "non-ASCII", in: "wéb", want: false},
	})
}

func TestNameProblems(t *testing.T) {
	const invalid = "name is not a valid MCP tool name (allowed: A-Z a-z 0-9 _ . -, 1-128 chars)"
	tests := []struct {
		name  string
		names []string
		want  map[int]string
	}{
		{name: "nil list", names: nil, want: nil},
		{name: "all fine", names: []string{"list_notes", "create_note", "delete_note"}, want: nil},
		{
			name:  "duplicate pair: both rejected",
			names: []string{"search", "fetch", "search"},
			want: map[int]string{
				0: "duplicate tool name: the server lists it 2 times",
				2: "duplicate tool name: the server lists it 2 times",
			},
		},
		{
			name:  "three copies",
			names: []string{"a", "a", "b", "a"},
			want: map[int]string{
				0: "duplicate tool name: the server lists it 3 times",
				1: "duplicate tool name: the server lists it 3 times",
				3: "duplicate tool name: the server lists it 3 times",
			},
		},
		{
			name:  "invalid names",
			names: []string{"ok", "has space", "", "re\u0430d", strings.Repeat("x", 129)},
			want:  map[int]string{1: invalid, 2: invalid, 3: invalid, 4: invalid},
		},
		{
			name:  "invalid and duplicate",
			names: []string{"a b", "a b"},
			want: map[int]string{
				0: invalid + "; duplicate tool name: the server lists it 2 times",
				1: invalid + "; duplicate tool name: the server lists it 2 times",
			},
		},
		{
			name:  "case differs: not a duplicate",
			names: []string{"Search", "search"},
			want:  nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NameProblems(tt.names)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NameProblems(%q) mismatch (-want +got):\n%s", tt.names, diff)
			}
		})
	}
}
