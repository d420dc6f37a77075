package pins

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/trust"
)

// TestEncodePins_MarshalIndentWithDefinitionsCompact: pins.json is written by
// encodePins instead of json.MarshalIndent (which re-indented 10,000 definitions
// before a first start's first screen); the file is MarshalIndent's except that each
// definition is compact on its own line: indented again, it is MarshalIndent's bytes
// exactly (the same tokens, the same escaping), for random stores with hostile names,
// strings and definitions (HTML characters, U+2028, invalid UTF-8, control characters,
// whitespace around and inside definitions, deep nesting).
func TestEncodePins_MarshalIndentWithDefinitionsCompact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 16))
	strs := []string{"", "send", "a\"b\\c", "<script>&amp;", "line\u2028sep\u2029", "bad\xff\xfeutf8", "tab\tnl\nnul\x00", "ｓｅｎｄ", "é", "\x7f"}
	defs := []string{
		`{"name":"x"}`, ` { "name" : "x" , "a" : [ 1 , 2.5e3 , true , null ] } `, "\n{\"d\":\"<b>&\u2028\"}\n\t",
		`{"s":"bad` + "\xff" + `"}`, `{}`, `[]`, `"str"`, `12`, `{"a":{"b":{"c":[[],{}]}}}`,
		`{"esc":"\u003c\ud83d\ude00\\n"}`, `{"k":"v","k":"w"}`, "{\"p\":\"x\u2029y\u2028\"}", "[\"\xe2\x80\"]",
	}
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	for n := range 300 {
		data := pinFile{Version: r.IntN(3), Servers: map[string]*serverPin{}}
		switch n % 23 {
		case 0:
			data.Servers = nil
		case 1:
			// empty
		default:
			for range r.IntN(4) + 1 {
				id := pick(strs) + fmt.Sprint(r.IntN(5))
				if r.IntN(10) == 0 {
					data.Servers[id] = nil
					continue
				}
				sp := &serverPin{Name: pick(strs), Instructions: pick(strs), PinnedAt: time.Unix(r.Int64N(4e9), r.Int64N(1e9)).UTC()}
				switch r.IntN(8) {
				case 0:
				case 1:
					sp.Tools = map[string]toolPin{}
				default:
					sp.Tools = map[string]toolPin{}
					for range r.IntN(6) + 1 {
						tp := toolPin{Fingerprint: pick(strs), PinnedAt: time.Unix(r.Int64N(4e9), 0).In(time.FixedZone("x", 3600*r.IntN(5)))}
						if r.IntN(8) > 0 {
							tp.Definition = json.RawMessage(pick(defs))
						}
						sp.Tools[pick(strs)+fmt.Sprint(r.IntN(9))] = tp
					}
				}
				data.Servers[id] = sp
			}
		}
		want, wantErr := json.MarshalIndent(data, "", "  ")
		got, err := encodePins(data)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("store %d: error %v, MarshalIndent's %v", n, err, wantErr)
		}
		if err != nil {
			continue
		}
		var indented bytes.Buffer
		if err := json.Indent(&indented, got, "", "  "); err != nil || !bytes.Equal(indented.Bytes(), want) {
			t.Fatalf("store %d, indented, differs from MarshalIndent (%v):\n got %q\nwant %q", n, err, indented.Bytes(), want)
		}
		for _, line := range bytes.Split(got, []byte("\n")) {
			if def, ok := bytes.CutPrefix(bytes.TrimLeft(line, " "), []byte(`"definition": `)); ok && !json.Valid(def) {
				t.Fatalf("store %d: a definition is not on one line: %q", n, line)
			}
		}
		if gotLines, wantLines := bytes.Count(got, []byte("\n")), bytes.Count(want, []byte("\n")); gotLines > wantLines {
			t.Fatalf("store %d: %d lines, MarshalIndent's %d", n, gotLines, wantLines)
		}
	}
	// What MarshalIndent refuses, encodePins refuses: an invalid definition, a year
	// outside 0-9999.
	bad := []pinFile{
		{Servers: map[string]*serverPin{"a": {Tools: map[string]toolPin{"t": {Definition: json.RawMessage(`{"a":`)}}}}},
		{Servers: map[string]*serverPin{"a": {Tools: map[string]toolPin{"t": {Definition: json.RawMessage{}}}}}},
		{Servers: map[string]*serverPin{"a": {PinnedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}},
	}
	for i, data := range bad {
		_, wantErr := json.MarshalIndent(data, "", "  ")
		_, err := encodePins(data)
		if wantErr == nil || err == nil {
			t.Errorf("bad store %d: encodePins error %v, MarshalIndent's %v; want both to fail", i, err, wantErr)
		}
	}
}

// BenchmarkEncodePins10000: a first start's pins.json for one server of 10,000 tools
// (bench/manytools' definitions), against json.MarshalIndent.
func BenchmarkEncodePins10000(b *testing.B) {
	sp := &serverPin{Name: "many", PinnedAt: time.Now(), Tools: map[string]toolPin{}}
	for i := range 10000 {
		def := fmt.Sprintf(`{"name":"t%d","description":"Tool number %d.","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}`, i, i)
		sp.Tools[fmt.Sprintf("t%d", i)] = toolPin{Fingerprint: fmt.Sprintf("%064x", i), PinnedAt: time.Now(), Definition: json.RawMessage(def)}
	}
	data := pinFile{Version: 1, Servers: map[string]*serverPin{"stdio:many": sp}}
	b.Run("encodePins", func(b *testing.B) {
		for b.Loop() {
			if _, err := encodePins(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("MarshalIndent", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.MarshalIndent(data, "", "  "); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestPins_BackgroundWritesLoseNoPin: with the write left to a goroutine
// (ObserveThen), the lock is still held from the read to the write, so two stores on
// one file (as two processes: each has its own lock handle) pinning different servers
// at once never write over each other's pins.
func TestPins_BackgroundWritesLoseNoPin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	listed := func(name string) []Listed {
		raw := json.RawMessage(`{"name":"` + name + `","inputSchema":{"type":"object"}}`)
		fp, err := trust.ToolFingerprint(raw)
		if err != nil {
			t.Fatal(err)
		}
		return []Listed{{Name: name, Raw: raw, Fingerprint: fp}}
	}
	const n = 20
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i, p := range []*Store{a, b} {
		wg.Go(func() {
			for j := range n {
				server := fmt.Sprintf("s%d-%d", i, j)
				out, write, err := p.ObserveThen("id:"+server, server, "", listed("t"), time.Unix(1, 0), func(err error) {
					if err != nil {
						failed.Add(1)
					}
				})
				write()
				if err != nil || out.tools["t"].State != trust.PinNew {
					t.Errorf("%s: %v %v", server, out.tools, err)
				}
			}
		})
	}
	wg.Wait()
	a.WaitSaved()
	b.WaitSaved()
	if failed.Load() > 0 {
		t.Fatalf("%d writes failed", failed.Load())
	}
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c.List()); got != 2*n {
		t.Fatalf("the file holds %d pins, want %d: a background write overwrote another store's", got, 2*n)
	}
}
