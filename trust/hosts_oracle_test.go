package trust

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
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
