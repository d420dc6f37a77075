package trust

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkClassifyAndHazards is what trust costs one snapshot at three toolset sizes:
// every tool classified, then the hazards of the whole set (bench/run's row 4, goal
// under 20 ms at 10,000 tools). Servers hold 200 tools each, at least 5 servers.
func BenchmarkClassifyAndHazards(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			tools, descs := benchTools(n, max(5, n/200))
			p := DefaultPolicy()
			assessed := make([]Assessed, len(tools))
			b.ReportAllocs()
			for b.Loop() {
				for i, t := range tools {
					assessed[i] = Assessed{Ref: Ref{Server: t.Server, Tool: t.Name}, Description: descs[i], Class: Classify(t, p)}
				}
				_ = Hazards(assessed)
			}
		})
	}
}

// BenchmarkToolTextAndHazards is shadowing as the session runs it at 10,000 tools:
// every tool's text fields gathered from its raw definition (ToolText), then the
// hazards over that text.
func BenchmarkToolTextAndHazards(b *testing.B) {
	tools, descs := benchTools(10000, 50)
	p := DefaultPolicy()
	raws := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		d, _ := json.Marshal(descs[i])
		raws[i] = json.RawMessage(`{"name":"` + t.Name + `","title":"A tool","description":` + string(d) +
			`,"inputSchema":{"type":"object","properties":{"q":{"type":"string","description":"what to look for"},"mode":{"type":"string","enum":["fast","full"],"default":"fast"}}}}`)
	}
	assessed := make([]Assessed, len(tools))
	b.ReportAllocs()
	for b.Loop() {
		for i, t := range tools {
			assessed[i] = Assessed{Ref: Ref{Server: t.Server, Tool: t.Name}, Description: descs[i], Text: ToolText(raws[i]), Class: Classify(t, p)}
		}
		_ = Hazards(assessed)
	}
}
