package config

import (
	"slices"
	"strings"
	"testing"
)

// [notify] command is the program run with a waiting question's summary as its last
// argument: an array of strings whose first is the program; anything else is an
// error naming the line and the key.
func TestParseNotify(t *testing.T) {
	env := func(string) (string, bool) { return "", false }
	c, err := Parse([]byte("[notify]\ncommand = [\"notify-send\", \"airlock\"]\n"), "/c.toml", env)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.NotifyCommand, []string{"notify-send", "airlock"}) {
		t.Errorf("NotifyCommand = %q", c.NotifyCommand)
	}
	if c, err := Parse([]byte(""), "/c.toml", env); err != nil || c.NotifyCommand != nil {
		t.Errorf("no [notify]: %q, %v", c.NotifyCommand, err)
	}
	for _, tc := range []struct{ toml, want string }{
		{"[notify]\ncommand = \"notify-send airlock\"\n", "/c.toml:2: notify.command: want an array of strings, got string"},
		{"[notify]\ncommand = [\"notify-send\", 1]\n", "/c.toml:2: notify.command[1]: want a string, got integer"},
		{"[notify]\ncommand = []\n", "/c.toml:2: notify.command: want the program and its arguments"},
		{"[notify]\ncommand = [\"\", \"x\"]\n", "/c.toml:2: notify.command: want the program and its arguments"},
		{"[notify]\ncommand = [\"notify-send\"]\nshell = true\n", "/c.toml:3: unknown key notify.shell"},
		{"notify = \"osc\"\n", "/c.toml:1: notify"},
	} {
		_, err := Parse([]byte(tc.toml), "/c.toml", env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one saying %q", tc.toml, err, tc.want)
		}
	}
}
