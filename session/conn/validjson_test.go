package conn

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// validJSONSeeds are inputs at every edge of JSON's grammar that encoding/json's
// Valid draws: validJSON must answer as it does.
var validJSONSeeds = []string{
	``, ` `, `{}`, `[]`, ` {} `, "\t[\n]\r", `{`, `}`, `[`, `]`, `{]`, `[}`, `{}}`, `[]]`, `{}{}`, `[] x`,
	`0`, `-0`, `01`, `-01`, `1.`, `1.5`, `.5`, `-`, `-a`, `1e`, `1e+`, `1e-5`, `1E+05`, `1.5e3`, `12345678901234567890`, `+1`, `0x1`, `1.e5`,
	`true`, `false`, `null`, `tru`, `nul`, `truex`, `True`, `nulll`, `[true,false,null]`, `[true false]`,
	`""`, `"a"`, `"\"`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\u00e9"`, `"\u00G9"`, `"\u00e"`, `"\x"`, `"\'"`, "\"a\x01\"", "\"\x7f\"", "\"\xff\xfe\"", "\"é\"", `"abc`, `"\u`,
	`{"a":1}`, `{"a" : 1 , "b" : [ 2 , { } ] }`, `{"a":1,}`, `{"a":1,,"b":2}`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`, `{1:2}`, `{"a":1}x`, `{"a":"\u0000"}`,
	`[1,2,3]`, `[1,]`, `[,1]`, `[1 2]`, `[[[]]]`, `[[[]]`, `[{"a":[{"b":null}]}]`,
	`{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a"}],"nextCursor":"c"}}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	strings.Repeat("[", 9999) + "{}" + strings.Repeat("]", 9999),
	strings.Repeat("[", 10000) + "{}" + strings.Repeat("]", 10000),
}

// The page reader's validation is encoding/json's Valid, exactly,
// on the grammar's edges, on real pages, and on those pages cut or with a byte
// changed anywhere (FuzzValidJSON goes on from these).
func TestValidJSON_SameAsEncodingJSON(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid = %v", clipForTest(s), got, want)
		}
	}
	for _, s := range validJSONSeeds {
		check(s)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("{}[]\":,\\ \t\n\r0123456789-+.eEtrufalsn\x00\x1fuAbf/\xff")
	page := benchListPage(40)
	for range 20000 {
		b := []byte(page)
		switch rng.IntN(3) {
		case 0: // a byte changed
			b[rng.IntN(len(b))] = alphabet[rng.IntN(len(alphabet))]
		case 1: // cut
			b = b[:rng.IntN(len(b))]
		default: // random bytes from the grammar's alphabet
			b = make([]byte, rng.IntN(24))
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		check(string(b))
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range validJSONSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(benchListPage(3)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid = %v", clipForTest(string(b)), got, want)
		}
	})
}

func clipForTest(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// benchListPage is a tools/list response of n tools as bench/manytools lists them.
func benchListPage(n int) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":7,"result":{"tools":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"tool_`)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(`","description":"Writes \"record\" \u00e9 of the archive: ` + strings.Repeat("d", 100) + `","inputSchema":{"type":"object","properties":{"path":{"type":"string","minLength":1,"maxLength":-2.5e3}},"required":["path"]},"annotations":{"readOnlyHint":false,"openWorldHint":true,"title":null}}`)
	}
	b.WriteString(`],"nextCursor":"abc"}}`)
	return b.String()
}

// BenchmarkValidJSONPage is one page of 1,000 tools, against json.Valid.
func BenchmarkValidJSONPage(b *testing.B) {
	page := []byte(benchListPage(1000))
	b.Run("validJSON", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			if !validJSON(page) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			if !json.Valid(page) {
				b.Fatal("invalid")
			}
		}
	})
}

// BenchmarkInspectPage is what the page reader does with one page of 1,000 tools
// before go-sdk gets the response: validate, then split.
func BenchmarkInspectPage(b *testing.B) {
	page := []byte(benchListPage(1000))
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if !validJSON(page) {
			b.Fatal("invalid")
		}
		if _, p, ok := splitListResponse(page); !ok || len(p.Tools) != 1000 {
			b.Fatal("not split")
		}
	}
}
