package trust

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	gounsafe "unsafe"
)

// checkToolPass compares ReadTool and ToolText on raw with the old decodes kept in
// toolpass_oracle_test.go: the skip decision, every wire field byte for byte (nil
// stays nil), and the text.
func checkToolPass(t testing.TB, raw []byte) {
	t.Helper()
	old, oldErr := oldDecodeWireTool(raw)
	oldText := oldToolText(raw)
	f, ok := ReadTool(raw)
	show := func() string {
		if len(raw) > 300 {
			return fmt.Sprintf("%q… (%d bytes)", raw[:300], len(raw))
		}
		return fmt.Sprintf("%q", raw)
	}
	if ok != (oldErr == nil) {
		t.Fatalf("ReadTool(%s): ok %v, old decode error %v", show(), ok, oldErr)
	}
	if got := ToolText(raw); got != oldText {
		t.Fatalf("ToolText(%s) = %q, old %q", show(), got, oldText)
	}
	if f.Text != oldText {
		t.Fatalf("ReadTool(%s).Text = %q, old %q", show(), f.Text, oldText)
	}
	if !ok {
		return
	}
	same := func(a, b json.RawMessage) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
	switch {
	case f.Name != old.Name:
		t.Fatalf("ReadTool(%s).Name = %q, old %q", show(), f.Name, old.Name)
	case f.Title != old.Title:
		t.Fatalf("ReadTool(%s).Title = %q, old %q", show(), f.Title, old.Title)
	case f.Description != old.Description:
		t.Fatalf("ReadTool(%s).Description = %q, old %q", show(), f.Description, old.Description)
	case f.TaskSupport != old.TaskSupport:
		t.Fatalf("ReadTool(%s).TaskSupport = %q, old %q", show(), f.TaskSupport, old.TaskSupport)
	case !same(f.InputSchema, old.InputSchema):
		t.Fatalf("ReadTool(%s).InputSchema = %q, old %q", show(), f.InputSchema, old.InputSchema)
	case !same(f.OutputSchema, old.OutputSchema):
		t.Fatalf("ReadTool(%s).OutputSchema = %q, old %q", show(), f.OutputSchema, old.OutputSchema)
	case !same(f.Annotations, old.Annotations):
		t.Fatalf("ReadTool(%s).Annotations = %q, old %q", show(), f.Annotations, old.Annotations)
	}
	if want := ParseDeclared(old.Annotations); !reflect.DeepEqual(f.Declared, want) {
		t.Fatalf("ReadTool(%s).Declared = %+v, ParseDeclared of the old annotations %+v", show(), f.Declared, want)
	}
}

// toolPassSeeds are typical tools and the odd corners of encoding/json the pass must
// keep: duplicate keys (last wins), case variants (exact for the map decodes, folded
// for execution.taskSupport and the annotations.title fallback), escapes, invalid
// UTF-8, surrogates, nulls, wrong types, trailing data, numbers out of float range.
var toolPassSeeds = []string{
	`{"name":"read_file","description":"Read a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"The path."}},"required":["path"]},"annotations":{"readOnlyHint":true,"title":"Read"}}`,
	`{"name":"a","title":"T","description":"D","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"z":{"description":"zz"},"a":{"title":"aa","enum":["x","y",1,null,true]}}},"annotations":null,"execution":{"taskSupport":"optional"}}`,
	`{"name":"a","name":"b","title":"x","title":7,"annotations":{"title":"A","TITLE":"B","Title":null}}`,
	`{"name":"a","annotations":{"TiTle":"folded","title":5}}`,
	`{"name":"a","annotations":{"title":"exact","TITLE":"folded"}}`,
	`{"name":"a","Title":"not the title","annotations":[1]}`,
	`{"name":"a","annotations":"str"}`,
	`{"name":"a","annotations":  null  }`,
	`{"name":"a","annotations":{"title":"a"},"annotations":null}`,
	`{"name":"a","annotations":null,"annotations":{"title":"b"}}`,
	`{"name":"a","execution":{"TASKSUPPORT":"required"}}`,
	"{\"name\":\"a\",\"execution\":{\"ta\u017fkSupport\":\"required\"}}",
	"{\"name\":\"a\",\"execution\":{\"tas\u212aSupport\":\"required\"}}",
	`{"name":"a","execution":{"taskSupport":"required","taskSupport":null}}`,
	`{"name":"a","execution":{"taskSupport":"required","other":1e400}}`,
	`{"name":"a","execution":{"taskSupport":"required","TaskSupport":[1e400]}}`,
	`{"name":"a","execution":{"taskSupport":[1e400],"taskSupport":"required"}}`,
	`{"name":"a","execution":{"taskSupport":{"x":-1e-400},"taskSupport":"required"}}`,
	`{"name":"a","execution":[],"execution":{"taskSupport":"x"}}`,
	`{"name":"a","execution":{"taskSupport":"x"},"execution":null}`,
	`{"name":"a","execution":"x"}`,
	`{"name":"\u0061\u0000b","title":"\ud83d\ude00 \ud800 \udc00 \ud800\u0041 \ud800\ud800\udc00 \/ \b\f\n\r\t"}`,
	"{\"name\":\"bad \xff utf8 \xed\xa0\x80 \xc0\xaf\",\"description\":\"caf\xc3\xa9 \u2028\"}",
	"{\"na\xffme\":\"x\",\"n\\u0061me\":\"escaped key\"}",
	`{"name":"a"} trailing`,
	`{"name":"a","description":"d"}{"x":1}`,
	`{"name":"a"}   `,
	`  {"name":"a"}`,
	`null`, `[]`, `"x"`, `1`, ``, `   `, `{`, `{"name":"a",}`, `{"name":}`, `[{"name":"a"}]`,
	`{"inputSchema":"a top-level string","outputSchema":["s",["t",{"type":"u","enum":["v"]}]]}`,
	`{"inputSchema":{"type":"string","format":"email","$schema":"s","$ref":"r","$id":"i","$anchor":"a","$dynamicRef":"d","$dynamicAnchor":"da","pattern":"p","required":["q"],"contentEncoding":"c","contentMediaType":"m","default":"shown","examples":["e1","e2"],"const":"k","$comment":"c"}}`,
	`{"inputSchema":{"b":"1","a":"2","b":"3","c":{"y":"4","x":"5","y":{"z":"6"}}},"inputSchema":{"q":"last","p":"wins"}}`,
	`{"inputSchema":{"":"empty key","\u00e9":"e","e":"plain","E":"upper","\ud800":"lone"}}`,
	`{"inputSchema":{"n":[0,-0,1.5e10,1E+2,1e400,-1e-400,123456789012345678901234567890,true,false,null]}}`,
	`{"name":01}`, `{"name":1.}`, `{"name":.5}`, `{"name":-}`, `{"name":1e}`, `{"name":"\x"}`, `{"name":"\u12"}`,
	"{\"name\":\"raw\x01control\"}",
	`{"name":"a","_meta":{"deep":[[[[{"x":"y"}]]]]}}`,
	`{"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":null,"openWorldHint":"true","title":"t"}}`,
	`{"annotations":{"readOnlyHint":true,"readOnlyHint":1,"destructiveHint":1,"destructiveHint":false,"ReadOnlyHint":true}}`,
	`{"annotations":{"readOnlyHint":true},"annotations":{"idempotentHint":true}}`,
	`{"annotations":[true]}`, `{"annotations":true}`, `{"annotations":{}}`,
	`{"description":""}`, `{"title":"","annotations":{"title":""}}`, `{"title":"","annotations":{"title":"fallback"}}`,
}

func TestToolPass_Seeds(t *testing.T) {
	for _, s := range toolPassSeeds {
		checkToolPass(t, []byte(s))
	}
}

// TestToolPass_Depth: the text walk stops below maxTextDepth levels of a schema, and
// encoding/json refuses nesting past 10,000 (the tool is skipped, the text empty).
func TestToolPass_Depth(t *testing.T) {
	nest := func(n int, inner string) string {
		return strings.Repeat(`[`, n) + inner + strings.Repeat(`]`, n)
	}
	for _, n := range []int{998, 999, 1000, 1001, 1002} {
		checkToolPass(t, []byte(`{"inputSchema":`+nest(n, `"s"`)+`}`))
		checkToolPass(t, []byte(`{"inputSchema":{"a":`+nest(n-1, `"s"`)+`}}`))
		checkToolPass(t, []byte(`{"inputSchema":{"z":"zz","a":`+nest(n-1, `{"k":"v","b":"w"}`)+`}}`))
	}
	for _, n := range []int{2, 3, 998, 999, 1000, 1001, 1002} {
		// Out-of-order and repeated keys at every level: each object is reordered.
		deep := strings.Repeat(`{"b":"1","c":`, n) + `"s"` + strings.Repeat(`,"a":"y","b":"2"}`, n)
		checkToolPass(t, []byte(`{"inputSchema":`+deep+`,"outputSchema":{"z":`+deep+`,"a":"q"}}`))
	}
	for _, n := range []int{9997, 9998, 9999, 10000, 10001} {
		checkToolPass(t, []byte(`{"inputSchema":`+nest(n, `"s"`)+`}`))
		checkToolPass(t, []byte(`{"name":"a","execution":{"taskSupport":`+nest(n, `1e400`)+`}}`))
		checkToolPass(t, []byte(`{"name":"a","x":`+nest(n, ``)+`}`))
		checkToolPass(t, []byte(nest(n, ``)))
	}
	checkToolPass(t, []byte(`{"name":"a","description":"`+strings.Repeat("é\\u00e9x", 200000)+`"}`))
}

// toolPassTokens are the pieces the generator and the mutator build from.
var toolPassKeys = []string{
	"name", "title", "description", "inputSchema", "outputSchema", "annotations", "execution",
	"taskSupport", "TaskSupport", "TASKSUPPORT", "ta\u017fkSupport", "tas\u212aSupport", `t\u0061skSupport`,
	"Title", "TITLE", `\u0074itle`, "tit\xffle", "Name", "NAME", "n\\u0061me", "type", "enum", "format",
	"required", "pattern", "properties", "examples", "default", "$ref", "const", "", "\u00e9", "a", "b",
	"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint", "_meta", "annotation", "inputschema",
}

var toolPassStrings = []string{
	"", "plain", "x", "é", `\u00e9`, `\ud83d\ude00`, `\ud800`, `\udc00`, `\ud800\u0041`, `\ud800\ud800\udc00`,
	"\xff", "\xed\xa0\x80", "\xc0\xaf", "\xe2\x82", `\u0000`, `a\nb`, `\/`, `\"`, `\\`, "\u2028", "<&>",
	"required", "optional", "forbidden", "Read", "ſ", "\u212a",
}

var toolPassNumbers = []string{
	"0", "-0", "1", "1.5e10", "1E+2", "1e400", "-1e400", "-1e-400", "123456789012345678901234567890", "0.0", "-12.5E-3",
}

func genToolValue(r *rand.Rand, depth int) string {
	if depth > 5 {
		return `"leaf"`
	}
	switch r.IntN(9) {
	case 0, 1:
		return `"` + toolPassStrings[r.IntN(len(toolPassStrings))] + `"`
	case 2:
		return toolPassNumbers[r.IntN(len(toolPassNumbers))]
	case 3:
		return []string{"null", "true", "false"}[r.IntN(3)]
	case 4, 5:
		var b strings.Builder
		b.WriteByte('[')
		for i := range r.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(genSpace(r) + genToolValue(r, depth+1) + genSpace(r))
		}
		b.WriteByte(']')
		return b.String()
	default:
		return genToolObject(r, depth+1)
	}
}

// genSpace is whitespace JSON allows, now and then.
func genSpace(r *rand.Rand) string {
	if r.IntN(8) != 0 {
		return ""
	}
	return []string{" ", "\n", "\t", "\r", " \r\n\t "}[r.IntN(5)]
}

func genToolObject(r *rand.Rand, depth int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range r.IntN(7) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(genSpace(r))
		b.WriteString(`"` + toolPassKeys[r.IntN(len(toolPassKeys))] + `"` + genSpace(r) + `:` + genSpace(r))
		b.WriteString(genToolValue(r, depth) + genSpace(r))
	}
	b.WriteByte('}')
	return b.String()
}

var toolPassJunk = []string{
	`"`, `\`, `{`, `}`, `[`, `]`, `,`, `:`, ` `, "\n", `null`, `1e400`, `-`, `.`, `e`, `\u`, `\ud800`,
	"\xff", "\x00", "\x01", `{"title":"t"}`, `"title"`, `"annotations":null`, `"execution":{"taskSupport":"x"}`,
	`"name":"n",`, `,"inputSchema":{"description":"d"}`, `tru`, `nul`,
}

func mutateTool(r *rand.Rand, s []byte) []byte {
	for range 1 + r.IntN(3) {
		n := len(s)
		switch r.IntN(6) {
		case 0: // insert a token
			i := r.IntN(n + 1)
			s = append(s[:i:i], append([]byte(toolPassJunk[r.IntN(len(toolPassJunk))]), s[i:]...)...)
		case 1: // delete a range
			if n > 0 {
				i := r.IntN(n)
				j := min(n, i+1+r.IntN(8))
				s = append(s[:i:i], s[j:]...)
			}
		case 2: // replace a byte
			if n > 0 {
				s = bytes.Clone(s)
				s[r.IntN(n)] = byte(r.IntN(256))
			}
		case 3: // duplicate a range
			if n > 0 {
				i := r.IntN(n)
				j := min(n, i+1+r.IntN(40))
				s = append(s[:j:j], append(bytes.Clone(s[i:j]), s[j:]...)...)
			}
		case 4: // truncate
			s = s[:r.IntN(n+1)]
		case 5: // trailing data
			s = append(bytes.Clone(s), toolPassJunk[r.IntN(len(toolPassJunk))]...)
		}
	}
	return s
}

// TestToolPass_SameAsOldDecodes compares the pass with the old decodes on generated
// tools (valid JSON full of duplicate and case-variant keys, hostile strings, numbers
// in every form, wrong types and nulls) and on mutations of them and of the seeds.
func TestToolPass_SameAsOldDecodes(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 2))
	n := 20000
	if testing.Short() {
		n = 3000
	}
	for i := range n {
		var s []byte
		if i%3 == 0 {
			s = []byte(toolPassSeeds[r.IntN(len(toolPassSeeds))])
		} else {
			s = []byte(genToolObject(r, 0))
		}
		checkToolPass(t, s)
		checkToolPass(t, mutateTool(r, s))
	}
}

func FuzzToolPassMatchesOld(f *testing.F) {
	for _, s := range toolPassSeeds {
		f.Add([]byte(s))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		f.Add([]byte(genToolObject(r, 0)))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkToolPass(t, raw)
	})
}

// typicalListedTool is a tool as servers list them: a name, a 120-byte description, a small
// input schema, annotations.
const typicalListedTool = `{"name":"tool_00042","description":"Reads record 00042 of the archive and returns it as text, with the lines asked for and a short header naming the source.","inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"the record's id"},"limit":{"type":"integer","description":"how many lines","minimum":1}},"required":["id"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`

// BenchmarkToolPass compares one tool's read: the old two decodes, and ReadTool.
func BenchmarkToolPass(b *testing.B) {
	raw := []byte(typicalListedTool)
	b.Run("old", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := oldDecodeWireTool(raw); err != nil {
				b.Fatal(err)
			}
			_ = oldToolText(raw)
		}
	})
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := ReadTool(raw); !ok {
				b.Fatal("not ok")
			}
		}
	})
}

// BenchmarkToolPass_DeepUnsorted is a hostile 1 MB schema: a long string under 999
// objects whose keys are out of order. The text is written out once, so it costs
// about what a flat one does (an earlier version moved the bytes at every level: 5x
// the old decodes).
func BenchmarkToolPass_DeepUnsorted(b *testing.B) {
	for _, d := range []int{1, 999} {
		raw := []byte(`{"inputSchema":` + strings.Repeat(`{"b":`, d) + `"` + strings.Repeat("x", 1<<20) + `"` + strings.Repeat(`,"a":"y"}`, d) + `}`)
		b.Run(fmt.Sprintf("depth%d/old", d), func(b *testing.B) {
			for b.Loop() {
				_, _ = oldDecodeWireTool(raw)
				_ = oldToolText(raw)
			}
		})
		b.Run(fmt.Sprintf("depth%d/new", d), func(b *testing.B) {
			for b.Loop() {
				ReadTool(raw)
			}
		})
	}
}

// A tool's title and description are cut from its text, where the
// same decoding put them, instead of copied a second time; each is still exactly
// what the definition says (escapes decoded), and one that is absent, empty or not a
// string is "" as before.
func TestReadTool_TitleAndDescriptionCutFromTheText(t *testing.T) {
	inside := func(sub, text string) bool {
		if sub == "" {
			return true
		}
		s, x := uintptr(gounsafe.Pointer(gounsafe.StringData(sub))), uintptr(gounsafe.Pointer(gounsafe.StringData(text)))
		return s >= x && s+uintptr(len(sub)) <= x+uintptr(len(text))
	}
	for _, c := range []struct{ def, title, desc string }{
		{`{"name":"a","title":"Send mail","description":"Sends \"mail\" \u00e9\n now","inputSchema":{"type":"object"}}`, "Send mail", "Sends \"mail\" é\n now"},
		{`{"name":"a","description":"plain","inputSchema":{"type":"object","properties":{"p":{"description":"a path"}}}}`, "", "plain"},
		{`{"name":"a","description":"","inputSchema":{"type":"object"}}`, "", ""},
		{`{"name":"a","description":7,"title":null,"inputSchema":{"type":"object"}}`, "", ""},
		{`{"name":"a","inputSchema":{"type":"object"}}`, "", ""},
	} {
		f, ok := ReadTool(json.RawMessage(c.def))
		if !ok {
			t.Fatalf("%s: not read", c.def)
		}
		if f.Title != c.title || f.Description != c.desc {
			t.Errorf("%s: title %q, description %q; want %q, %q", c.def, f.Title, f.Description, c.title, c.desc)
		}
		if !inside(f.Title, f.Text) || !inside(f.Description, f.Text) {
			t.Errorf("%s: the title or description is a copy beside the text %q", c.def, f.Text)
		}
	}
}
