package session

import (
	"testing"

	"github.com/airlock-mcp/airlock/trust"
)

// Issue 14 (rules2 item 5): on Windows the dialog proposes a drive path by its
// folder, in the form the glob reads back (a pure function of GOOS).
func TestRules_ProposeWindowsPath(t *testing.T) {
	tool := ToolInfo{Ref: trust.Ref{Server: "fs", Tool: "write_file"}}
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
