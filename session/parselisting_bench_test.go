package session

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkParseListing10000 is the parse of one listing of 10,000 typical tools (a
// name, a 120-byte description, a small input schema, annotations), the part of
// "10,000 tools on screen" that decodes each tool's wire fields, text, declared
// hints and fingerprint.
func BenchmarkParseListing10000(b *testing.B) {
	raws := make([]json.RawMessage, 10000)
	for i := range raws {
		raws[i] = json.RawMessage(fmt.Sprintf(`{"name":"tool_%05d","description":"Reads record %05d of the archive and returns it as text, with the lines asked for and a short header naming the source.","inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"the record's id"},"limit":{"type":"integer","description":"how many lines","minimum":1}},"required":["id"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`, i, i))
	}
	b.ReportAllocs()
	for b.Loop() {
		tools, _ := parseListing(raws)
		if len(tools) != len(raws) {
			b.Fatal(len(tools))
		}
	}
}
