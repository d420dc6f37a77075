package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// A deny list of hosts holds through `airlock call` against a real stdio server for
// every spelling a URL parser reads as a denied host; another host still runs.
func TestCallHostDenyListSpellings(t *testing.T) {
	cfg := writeConfig(t, "[servers.web]\ncommand = \"airlock\"\nargs = [\"demo-server\", \"web\"]\ntrust = \"trusted\"\n"+
		"[[servers.web.tools.fetch_url.rules]]\nwhen = { url = { host = [\"169.254.169.254\", \"127.0.0.1\", \"localhost\", \"::1\"] } }\npolicy = \"deny\"\nreason = \"no local or metadata hosts\"\n")
	args := func(u string) string {
		b, _ := json.Marshal(map[string]string{"url": u})
		return string(b)
	}
	if r := airlock(t, "", "call", "web", "fetch_url", "--config", cfg, "--args", args("https://example.com/")); r.code != 0 {
		t.Fatalf("another host: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, u := range []string{
		"http://2852039166/latest/meta-data/",
		"http://[::ffff:a9fe:a9fe]/",
		"http://0x7f.1/",
		"http://１２７.0.0.1/",
		"http://127。0。0。1/",
		"http://local\u00adhost/",
		"http:/localhost/x",
		"http://[0:0::1]:8080/",
	} {
		r := airlock(t, "", "call", "web", "fetch_url", "--config", cfg, "--args", args(u))
		if r.code == 0 || !strings.Contains(r.stderr, "denies this call: no local or metadata hosts") {
			t.Errorf("%q: exit %d\n%s%s", u, r.code, r.stdout, r.stderr)
		}
	}
}
