package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/jsongen"
	"github.com/airlock-mcp/airlock/trust"
)

// sameCanonical fails t unless canonicalRecord and canonicalSpliced give what
// canonicalWhole, the log's definition of a record's canonical form, gives for r:
// the same bytes, or an error for all three. valid says they gave bytes.
func sameCanonical(t *testing.T, r *Record) (valid bool) {
	t.Helper()
	want, werr := canonicalWhole(r)
	for name, f := range map[string]func(*Record) ([]byte, error){"canonicalRecord": canonicalRecord, "canonicalSpliced": canonicalSpliced} {
		got, gerr := f(r)
		if (gerr != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("record with args %q:\n%s %s (%v)\nthe whole record %s (%v)", r.Args, name, got, gerr, want, werr)
		}
	}
	return werr == nil
}

// argPieces are what generated arguments' strings are made of: what encoding/json
// escapes (HTML, U+2028), what trust.Canonical re-encodes, bytes that are not
// UTF-8, a record's own key names.
var argPieces = []string{"plain", "<b>&amp;", "\u2028\u2029", "é世", "\xff", "\x00\x1f", `"kind":`, "args", "\\", "/", ""}

// argLiterals are number spellings trust.Canonical keeps as written, and the
// other literals.
var argLiterals = []string{"1.0", "-0", "1e400", "12345678901234567890", "true", "null"}

// The record's canonical form, built around arguments made canonical once, is the
// whole record's byte for byte (for small arguments and large), and refused where
// it is: arguments spelled every way, invalid, empty, absent, nested to the
// canonical depth bound and past it.
func TestCanonicalRecord_IsTheWholeRecordsCanonicalForm(t *testing.T) {
	base := Record{Seq: 3, TS: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Prev: "ab", Kind: "decision", CallID: "c<1>",
		Context: "ctx", Server: "notes", Tool: "create_note", Tier: "write", Reason: "a \u2028 b", ArgsSHA256: "00",
		Previous: &Link{File: "f", Seq: 1, Hash: "h"}}
	gen := jsongen.Gen{R: rand.New(rand.NewPCG(3, 4)), Strings: argPieces, Literals: argLiterals}
	var b bytes.Buffer
	valid, long := 0, 0
	const records = 10_000
	for range records {
		b.Reset()
		gen.Value(&b, 1+gen.R.IntN(4))
		if gen.R.IntN(8) == 0 { // past spliceArgsOver
			b.WriteString(strings.Repeat(" ", spliceArgsOver))
		}
		rec := base
		rec.Args = bytes.Clone(b.Bytes())
		if sameCanonical(t, &rec) {
			valid++
			if len(rec.Args) > spliceArgsOver {
				long++
			}
		}
	}
	// Most are records, short and long: arguments all refused would prove nothing.
	if valid < records/2 || long < records/20 {
		t.Fatalf("%d of %d generated records were valid, %d of them past %d bytes of arguments", valid, records, long, spliceArgsOver)
	}
	t.Logf("%d of %d generated records valid, %d past %d bytes of arguments", valid, records, long, spliceArgsOver)
	nest := func(n int) json.RawMessage {
		return json.RawMessage(strings.Repeat(`{"a":`, n) + `1` + strings.Repeat(`}`, n))
	}
	for _, args := range []json.RawMessage{nil, {}, json.RawMessage(` `), json.RawMessage(`{"a":1} x`), json.RawMessage(`1,2`),
		json.RawMessage(`{"a":1,"a":2}`), json.RawMessage(`"\ud800"`), json.RawMessage(`{"a":"` + "\xff" + `"}`),
		nest(trust.MaxCanonicalDepth - 2), nest(trust.MaxCanonicalDepth - 1), nest(trust.MaxCanonicalDepth), nest(trust.MaxCanonicalDepth + 1)} {
		rec := base
		rec.Args = args
		sameCanonical(t, &rec)
	}
	// The depth bound is met at the same place: one level more than the record's
	// own nesting allows is refused by both.
	rec := base
	rec.Args = nest(trust.MaxCanonicalDepth)
	if _, err := canonicalRecord(&rec); err == nil {
		t.Fatalf("arguments %d levels deep inside a record were accepted", trust.MaxCanonicalDepth)
	}
}

// BenchmarkCanonicalRecord is a decision record's canonical form both ways, with
// the arguments of a small call and of a 100 KB one: spliceArgsOver is where the
// spliced form becomes the cheaper.
func BenchmarkCanonicalRecord(b *testing.B) {
	for _, n := range []int{64, 128, 256, 1 << 10, 100 << 10} {
		r := Record{Seq: 1234, TS: time.Now().UTC(), Prev: strings.Repeat("9f", 32), Kind: "decision", CallID: "c-12345",
			Context: "gw-abc", Client: "bench 1", Server: "docs", Tool: "get_doc", Tier: "read", Decision: "allow",
			DecidedBy: "policy", Reason: "read-only tool of a trusted server", ArgsSHA256: strings.Repeat("9f", 32),
			Args: json.RawMessage(`{"id":"` + strings.Repeat("x", n-9) + `"}`)}
		for name, f := range map[string]func(*Record) ([]byte, error){"whole": canonicalWhole, "spliced": canonicalSpliced} {
			b.Run(fmt.Sprintf("args=%d/%s", n, name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := f(&r); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func FuzzCanonicalRecord_IsTheWholeRecordsCanonicalForm(f *testing.F) {
	f.Add([]byte(`{"a":"<b>"}`), "reason")
	f.Add([]byte(` [1, {"z":0,"a":"\u2028"}] `), "\xff")
	f.Fuzz(func(t *testing.T, args []byte, reason string) {
		sameCanonical(t, &Record{Kind: "outcome", Reason: reason, Args: args})
	})
}
