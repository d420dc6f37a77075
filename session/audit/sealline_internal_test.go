package audit

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// A sealed line is the canonical JSON of the record with its hash, byte for byte,
// whatever the arguments and the text hold: nested "kind" keys, the key's bytes
// inside strings, a link to a segment before.
func TestSealLine_IsTheCanonicalRecordWithItsHash(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, r := range []Record{
		{Kind: "decision", CallID: "c1", Server: "notes", Tool: "create_note", Decision: "allow", Args: json.RawMessage(`{"n":1}`)},
		{Kind: "decision", TS: ts, Args: json.RawMessage(`{"kind":"x","z":{"kind":{"kind":1}},"a":[{"kind":2}]}`)},
		{Kind: "outcome", Error: `,"kind":"a","hash":"b"`, Reason: "\u2028 é \"kind\"", Args: json.RawMessage(`[",\"kind\":"]`)},
		{Kind: "segment", TS: ts, Prev: "abc", Previous: &Link{File: "audit.jsonl.000001", Seq: 7, Hash: "def"}, Reason: "full"},
		{Kind: "", Args: nil},
		{Kind: "sealed", Seq: 1, DurationMS: 5, Outcome: "ok", PersonReason: "p", Rule: "r", Served: "s", Tier: "write", Context: "c", Client: "k", DecidedBy: "person", ArgsSHA256: "00"},
	} {
		line, err := sealLine(&r)
		if err != nil {
			t.Fatal(err)
		}
		want, err := canonicalRecord(&r)
		if err != nil {
			t.Fatal(err)
		}
		if want = append(want, '\n'); !bytes.Equal(line, want) {
			t.Errorf("sealed line:\n%s\nwant the canonical record with its hash:\n%s", line, want)
		}
	}
}
