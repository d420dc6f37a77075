package approval

import (
	"testing"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/trust"
)

// On Windows the dialog proposes a drive path by its
// folder, in the form the glob reads back (a pure function of GOOS).
func TestRules_ProposeWindowsPath(t *testing.T) {
	tool := model.ToolInfo{Ref: trust.Ref{Server: "fs", Tool: "write_file"}}
	for _, c := range []struct{ goos, path, want string }{
		{"windows", `C:\Users\me\project\a.txt`, "C:/Users/me/project/*"},
		{"windows", `c:/Users/me/project/../x.txt`, "C:/Users/me/*"},
		{"windows", `C:\a.txt`, "C:/*"},
		{"linux", `/srv/project/a.txt`, "/srv/project/*"},
	} {
		p := proposeRuleFor(c.goos, tool, []byte(`{"path":`+quote(c.path)+`}`))
		if got := p.When["path"]["glob"]; got != c.want {
			t.Errorf("%s %s: proposed %v, want glob %s", c.goos, c.path, p.When["path"], c.want)
			continue
		}
		cond, err := trust.NewCondFor(c.goos, "path", trust.MatchGlob, c.want, "")
		if err != nil {
			t.Errorf("%s: the proposal %s does not compile: %v", c.goos, c.want, err)
			continue
		}
		_ = cond
	}
	// A Windows path on Linux is not a path: it is proposed by equals.
	if p := proposeRuleFor("linux", tool, []byte(`{"path":"C:\\Users\\me\\a.txt"}`)); p.When["path"]["equals"] == nil {
		t.Errorf("linux proposed %v", p.When)
	}
}

func quote(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		if r == '\\' || r == '"' {
			b = append(b, '\\')
		}
		b = append(b, string(r)...)
	}
	return string(append(b, '"'))
}

// "Always allow" proposes a number as the number the call had, exactly: a big
// integer is not rounded through float64 (a rule equal to 1234567890123456800 would
// never match the call again), and one no operand can hold exactly is left open.
func TestRules_ProposeNumbersExactly(t *testing.T) {
	tool := model.ToolInfo{Ref: trust.Ref{Server: "s", Tool: "t"}}
	for _, c := range []struct {
		args string
		want any // nil: no condition proposed
	}{
		{`{"n":1234567890123456789}`, int64(1234567890123456789)},
		{`{"n":7}`, int64(7)},
		{`{"n":-0}`, int64(0)},
		{`{"n":0.1}`, 0.1},
		{`{"n":2.5}`, 2.5},
		{`{"n":123456789012345678901234567890}`, nil},
		{`{"n":0.10000000000000001}`, nil},
	} {
		p := proposeRuleFor("linux", tool, []byte(c.args))
		got, ok := p.When["n"]["equals"]
		if c.want == nil {
			if ok {
				t.Errorf("%s: proposed equals %v (%T), want no condition", c.args, got, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s: proposed equals %v (%T), want %v (%T)", c.args, got, got, c.want, c.want)
		}
	}
}
