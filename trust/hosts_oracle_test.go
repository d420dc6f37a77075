package trust

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// nodeStricter are the spellings where airlock's reading fails (the value cannot
// be compared safely) and Node 20's reads a host, and why: the safe direction.
var nodeStricter = map[string]string{
	"http://xn--localhost-.com/": "UTS #46 rejects an xn-- label that decodes to ASCII only (golang.org/x/net/idna does; Node 20's ada does not)",
}

// nodeHosts is a Node script: for each URL of the JSON list on stdin, what
// `new URL()` makes of it (the protocol and hostname, or that it throws).
const nodeHosts = `
let s = '';
process.stdin.on('data', d => s += d).on('end', () => {
  console.log(JSON.stringify(JSON.parse(s).map(u => {
    try { const x = new URL(u); return {protocol: x.protocol, hostname: x.hostname}; }
    catch (e) { return {error: String(e.code || e)}; }
  })));
});`

// The oracle: Node's URL parser (the URL Standard's, as servers written for Node
// apply it) reads every spelling of the table as webURLHost does. Skipped when
// node is not installed.
func TestHosts_NodeAgrees(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the URL Standard reading is not compared with Node's")
	}
	var urls []string
	for _, tc := range hostSpellings {
		urls = append(urls, withScheme(tc.url))
	}
	// and a thousand spellings of the denied hosts as FuzzHostDeny makes them
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		b := make([]byte, 24)
		for k := range b {
			b[k] = byte(rng.IntN(256))
		}
		urls = append(urls, withScheme(spellDenied(b)))
	}
	in, _ := json.Marshal(urls)
	cmd := exec.Command(node, "-e", nodeHosts)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("running node: %v", err)
	}
	var got []struct{ Protocol, Hostname, Error string }
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(urls) {
		t.Fatalf("node said %s (%v)", out, err)
	}
	special := map[string]bool{"http:": true, "https:": true, "ws:": true, "wss:": true, "ftp:": true}
	for i, u := range urls {
		scheme, h, ok := webURLHost(u)
		n := got[i]
		switch {
		case n.Error != "" || !special[n.Protocol]:
			if ok {
				t.Errorf("%q: Node %+v, airlock reads host %q", u, n, h.String())
			}
		case !ok && nodeStricter[u] != "":
			t.Logf("%q: Node reads host %q, airlock fails: %s", u, n.Hostname, nodeStricter[u])
		case !ok:
			t.Errorf("%q: Node reads host %q, airlock fails", u, n.Hostname)
		case n.Hostname != h.String() || n.Protocol != scheme+":":
			t.Errorf("%q: Node reads %s %q, airlock %s: %q", u, n.Protocol, n.Hostname, scheme, h.String())
		}
	}
	t.Logf("compared %d spellings with node (%d where airlock is stricter)", len(urls), len(nodeStricter))
}

// pythonHosts is a Python script: for each URL of the JSON list on stdin, the
// host urllib.parse.urlsplit reads (what requests and urllib3 connect to, give or
// take their own checks), or null.
const pythonHosts = `
import json, sys, urllib.parse
out = []
for u in json.load(sys.stdin):
    try:
        out.append(urllib.parse.urlsplit(u).hostname)
    except ValueError:
        out.append(None)
print(json.dumps(out))`

// hostTokens are the pieces randomURL puts together: hosts an allow rule names and
// hosts an attacker wants to reach, and every character that ends, splits or hides
// part of an authority in one parser or another.
var hostTokens = []string{
	"example.com", "a.example.com", "127.0.0.1", "169.254.169.254", "localhost", "0x7f.1", "2130706433",
	"@", ":", ":80", ":080", "/", `\`, "#", "?", ";", ".", "..", "%40", "%2e", "%2f", "%5c", "%23", "%3f",
	"%00", "%C2%AD", "[", "]", "[::ffff:127.0.0.1]", "[::1]", "::ffff:", " ", "\t", "\n", "\x00", "\x1f",
	"xn--", "xn--example-", "ｅｘａｍｐｌｅ", "。", "．", "｡", "\u00ad", "\u200b", "\u200d", "＠", "／", "＼", "＃",
	"ⓔⓧⓐⓜⓟⓛⓔ", "е", "%", "user", "example.com.", "*", "&", "=", "'", "\"",
}

// randomURL makes a URL of hostTokens behind one of several scheme spellings.
func randomURL(rng *rand.Rand) string {
	prefixes := []string{"http://", "HTTP://", "https://", "https:", "http:/", `http:\\`, "", "//", " http://", "ws://", "http:///", "\thttp://", "hTtP://"}
	var b strings.Builder
	b.WriteString(prefixes[rng.IntN(len(prefixes))])
	for range 1 + rng.IntN(7) {
		b.WriteString(hostTokens[rng.IntN(len(hostTokens))])
	}
	if rng.IntN(2) == 0 {
		b.WriteString("/x")
	}
	return b.String()
}

// runOracle runs a script of the named interpreter on urls and decodes what it
// prints into out.
func runOracle(t *testing.T, path string, args []string, urls []string, out any) {
	t.Helper()
	in, _ := json.Marshal(urls)
	cmd := exec.Command(path, args...)
	cmd.Stdin = bytes.NewReader(in)
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("running %s: %v", path, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s said %.200s (%v)", path, b, err)
	}
}

// An allow on a host never matches a URL that a real client reads as another
// host: for random URLs built of the characters that split an authority, whenever
// URLHost names a host, Node's URL (and, when python3 is installed, Python's
// urlsplit) reads that same host or none at all. Skipped when node is not
// installed.
func TestHosts_AllowMeansTheHostClientsReach(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: URLHost is not compared with Node's reading")
	}
	rng := rand.New(rand.NewPCG(7, 29))
	var urls, sent []string
	for range 20000 {
		u := randomURL(rng)
		if _, ok := URLHost(u); ok {
			urls = append(urls, u)
			sent = append(sent, withScheme(u))
		}
	}
	var nodeGot []struct{ Protocol, Hostname, Error string }
	runOracle(t, node, []string{"-e", nodeHosts}, sent, &nodeGot)
	var pyGot []*string
	python, err := exec.LookPath("python3")
	if err == nil {
		runOracle(t, python, []string{"-c", pythonHosts}, sent, &pyGot)
	} else {
		t.Log("python3 is not installed: URLHost is compared with Node's reading only")
	}
	// other is the host another parser read, in the form URLHost's are in, or "".
	other := func(h string) string {
		if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
			h = "[" + h + "]"
		}
		w, ok := parseWebHost(h)
		if !ok {
			return ""
		}
		k, _ := hostKey(w)
		return k
	}
	if len(nodeGot) != len(sent) || pyGot != nil && len(pyGot) != len(sent) {
		t.Fatalf("the oracles answered %d and %d of %d URLs", len(nodeGot), len(pyGot), len(sent))
	}
	bad := 0
	for i, u := range urls {
		key, _ := URLHost(u)
		if n := nodeGot[i]; n.Error == "" && other(n.Hostname) != key {
			t.Errorf("%q: URLHost %q, Node reads %s %q", u, key, n.Protocol, n.Hostname)
			bad++
		}
		if pyGot != nil && pyGot[i] != nil {
			if p := other(*pyGot[i]); p != "" && p != key {
				t.Errorf("%q: URLHost %q, Python reads %q", u, key, *pyGot[i])
				bad++
			}
		}
		if bad > 20 {
			t.Fatal("and more")
		}
	}
	t.Logf("%d of 20000 random URLs name a host; node and python agree on each", len(urls))
}
