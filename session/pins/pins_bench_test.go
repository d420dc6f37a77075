package pins

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/trust"
)

// BenchmarkPinsObserveUnchanged is one listing of an already pinned server against a
// pins file of 20 servers of two tools each (about 70 KB, like the fan-out row's):
// what each server's connection paid for the pins at start.
func BenchmarkPinsObserveUnchanged(b *testing.B) {
	path := filepath.Join(b.TempDir(), "pins.json")
	p, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Unix(1, 0)
	listing := func(server int) []Listed {
		var out []Listed
		for i := range 2 {
			raw := json.RawMessage(fmt.Sprintf(`{"name":"tool_%d","description":%q,"inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"the id"}}}}`, i, strings.Repeat(fmt.Sprintf("Server %d's document tool. ", server), 60)))
			fp, err := trust.ToolFingerprint(raw)
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, Listed{Name: fmt.Sprintf("tool_%d", i), Raw: raw, Fingerprint: fp})
		}
		return out
	}
	for s := range 20 {
		if _, err := p.observe(fmt.Sprintf("id-%d", s), fmt.Sprintf("docs-%02d", s), "", listing(s), now); err != nil {
			b.Fatal(err)
		}
	}
	tools := listing(7)
	b.ReportAllocs()
	for b.Loop() {
		out, err := p.observe("id-7", "docs-07", "", tools, now)
		if err != nil || out.tools["tool_0"].State != trust.PinSame {
			b.Fatal(out.tools, err)
		}
	}
}

// BenchmarkPinsObserveFirstSight10000 is what the first listing of a server of 10,000
// tools waits for before it is shown (bench/run's row 5e starts with no pins): every
// tool decided new and added to the store, in memory.
func BenchmarkPinsObserveFirstSight10000(b *testing.B) {
	tools := make([]Listed, 10000)
	for i := range tools {
		tools[i] = Listed{Name: fmt.Sprintf("t%d", i), Raw: json.RawMessage(`{}`), Fingerprint: fmt.Sprintf("%064d", i)}
	}
	now := time.Unix(1, 0)
	b.ReportAllocs()
	for b.Loop() {
		data := &pinFile{Servers: map[string]*serverPin{}}
		if out := observeLocked(data, "id", "many", "", tools, now); len(out.tools) != 10000 || out.tools["t9999"].State != trust.PinNew {
			b.Fatal("not every tool is new")
		}
	}
}
