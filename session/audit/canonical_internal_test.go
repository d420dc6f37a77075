package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/airlock-mcp/airlock/internal/jsongen"
	"github.com/airlock-mcp/airlock/trust"
)

// canonicalWhole is trust.Canonical of the record as encoding/json writes it: the
// definition of a record's canonical form, which canonicalRecord writes directly.
func canonicalWhole(r *Record) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return trust.Canonical(b)
}

// sameCanonical fails t unless canonicalRecord gives what canonicalWhole, the
// definition of a record's canonical form, gives for r: the same bytes, or an
// error for both. valid says they gave bytes.
func sameCanonical(t *testing.T, r *Record) (valid bool) {
	t.Helper()
	want, werr := canonicalWhole(r)
	got, gerr := canonicalRecord(r)
	if (gerr != nil) != (werr != nil) || !bytes.Equal(got, want) {
		t.Fatalf("record %+v with args %q:\ncanonicalRecord %s (%v)\nthe whole record %s (%v)", r, r.Args, got, gerr, want, werr)
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

// fieldPieces are what generated fields' strings are made of: what encoding/json
// escapes or replaces, what trust.Canonical re-encodes, a record's own key names.
var fieldPieces = []string{"plain", "<b>&amp;", "\u2028\u2029", "é世", "\xff", "\xc3", "\x00\x1f\x7f", "\b\f\n\r\t", `"kind":`,
	`","hash":"`, "\\", "/", "\ufffd", "\U0001F600", ""}

// randomRecord is a record with every field set at random, by reflection, so that
// a field added to Record is generated too (and the test fails for a kind of field
// it cannot make). A string or number is empty or zero one time in four, so that
// omitempty is tried both ways.
func randomRecord(t testing.TB, gen *jsongen.Gen, args []byte) Record {
	var r Record
	v := reflect.ValueOf(&r).Elem()
	str := func() string {
		var b strings.Builder
		for range gen.R.IntN(4) {
			b.WriteString(fieldPieces[gen.R.IntN(len(fieldPieces))])
		}
		return b.String()
	}
	for i := range v.NumField() {
		f := v.Field(i)
		empty := gen.R.IntN(4) == 0
		switch f.Interface().(type) {
		case string:
			if !empty {
				f.SetString(str())
			}
		case uint64, int64:
			if !empty {
				n := gen.R.Int64()
				if f.Kind() == reflect.Int64 && gen.R.IntN(2) == 0 {
					n = -n
				}
				if f.CanUint() {
					f.SetUint(uint64(n))
				} else {
					f.SetInt(n)
				}
			}
		case time.Time:
			ts := time.Unix(gen.R.Int64N(1<<36)-1<<35, gen.R.Int64N(1e9))
			if gen.R.IntN(2) == 0 {
				ts = ts.In(time.FixedZone("x", int(gen.R.Int64N(24*3600))-12*3600))
			} else {
				ts = ts.UTC()
			}
			f.Set(reflect.ValueOf(ts))
		case json.RawMessage:
			f.Set(reflect.ValueOf(json.RawMessage(args)))
		case *Link:
			if !empty {
				f.Set(reflect.ValueOf(&Link{File: str(), Seq: gen.R.Uint64(), Hash: str()}))
			}
		default:
			t.Fatalf("Record.%s is a %s: randomRecord cannot make one, and canonicalRecord may not write it", v.Type().Field(i).Name, f.Type())
		}
	}
	return r
}

// The record's canonical form as canonicalRecord writes it is the whole record's
// byte for byte, with every field set or empty, strings spelled every way, times in
// every zone and past the years encoding/json writes, arguments spelled every way,
// invalid, empty, absent, nested to the canonical depth bound and past it.
func TestCanonicalRecord_IsTheWholeRecordsCanonicalForm(t *testing.T) {
	gen := jsongen.Gen{R: rand.New(rand.NewPCG(3, 4)), Strings: argPieces, Literals: argLiterals}
	var b bytes.Buffer
	valid := 0
	const records = 20_000
	for range records {
		b.Reset()
		gen.Value(&b, 1+gen.R.IntN(4))
		if gen.R.IntN(8) == 0 {
			b.WriteString("  ")
		}
		rec := randomRecord(t, &gen, bytes.Clone(b.Bytes()))
		if sameCanonical(t, &rec) {
			valid++
		}
	}
	// Most are records: records all refused would prove nothing.
	if valid < records/2 {
		t.Fatalf("%d of %d generated records were valid", valid, records)
	}
	t.Logf("%d of %d generated records valid", valid, records)
	base := Record{Seq: 3, TS: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Prev: "ab", Kind: "decision", CallID: "c<1>",
		Context: "ctx", Server: "notes", Tool: "create_note", Tier: "write", Reason: "a \u2028 b", ArgsSHA256: "00",
		Previous: &Link{File: "f", Seq: 1, Hash: "h"}}
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
	// Times encoding/json refuses are refused.
	for _, ts := range []time.Time{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("far", 25*3600))} {
		rec := base
		rec.TS = ts
		if sameCanonical(t, &rec) {
			t.Errorf("a record at %v was written", ts)
		}
	}
}

// BenchmarkCanonicalRecord is a decision record's canonical form, written directly
// and as its definition (encoding/json, then trust.Canonical), with the arguments
// of a small call and of a 100 KB one.
func BenchmarkCanonicalRecord(b *testing.B) {
	for _, n := range []int{64, 1 << 10, 100 << 10} {
		r := Record{Seq: 1234, TS: time.Now().UTC(), Prev: strings.Repeat("9f", 32), Kind: "decision", CallID: "c-12345",
			Context: "gw-abc", Client: "bench 1", Server: "docs", Tool: "get_doc", Tier: "read", Decision: "allow",
			DecidedBy: "policy", Reason: "read-only tool of a trusted server", ArgsSHA256: strings.Repeat("9f", 32),
			Args: json.RawMessage(`{"id":"` + strings.Repeat("x", n-9) + `"}`)}
		for _, c := range []struct {
			name string
			f    func(*Record) ([]byte, error)
		}{{"direct", canonicalRecord}, {"whole", canonicalWhole}} {
			b.Run(fmt.Sprintf("args=%d/%s", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := c.f(&r); err != nil {
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
