package config

import "testing"

func TestLocations_ServerAndToolLines(t *testing.T) {
	src := `# comment
[policy]
read = "allow"

[servers.web]
command = "x"

[servers."mail"]
command = "y"

[servers.mail.tools."odd.name"]
policy = "deny"
`
	l := LocateSource("c.toml", []byte(src))
	for _, c := range []struct {
		got, want int
		what      string
	}{
		{l.Server("web"), 5, "web"},
		{l.Server("mail"), 8, "mail"},
		{l.Tool("mail", "odd.name"), 11, "mail odd.name"},
		{l.Tool("mail", "other"), 8, "mail other falls back to the server"},
		{l.Server("nope"), 0, "absent"},
	} {
		if c.got != c.want {
			t.Errorf("%s: line %d, want %d", c.what, c.got, c.want)
		}
	}
	var nilLoc *Locations
	if nilLoc.Tool("a", "b") != 0 {
		t.Error("nil Locations")
	}
}
