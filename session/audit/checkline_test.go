package audit_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/session/audit"
)

// reseal gives line (one record, without its newline) a hash member that the
// checker's own rule makes right after mutate changed the rest: sha256 of prev and
// the line without its last hash member. An attacker can always do this; what keeps
// a line honest is that verify accepts only what airlock could have written.
func reseal(t *testing.T, line []byte, prev string, mutate func(string) string) []byte {
	t.Helper()
	var r audit.Record
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatal(err)
	}
	// The record's own hash member (not one inside args or previous) is marked, so
	// that the new one goes where it was whatever mutate moves.
	const mark = "\x00hash\x00"
	member := `"hash":"` + r.Hash + `",`
	if !strings.Contains(string(line), member) {
		t.Fatalf("no hash member %s in %s", member, line)
	}
	marked := mutate(strings.Replace(string(line), member, mark, 1))
	body := strings.Replace(marked, mark, "", 1)
	sum := sha256.Sum256([]byte(prev + body))
	return []byte(strings.Replace(marked, mark, `"hash":"`+hex.EncodeToString(sum[:])+`",`, 1))
}

// A line whose hash was recomputed after a change that airlock's own writer can
// never produce (a duplicated member, a second hash member, members out of order,
// bytes after a value, bytes that are not UTF-8, a number spelled another way,
// space between tokens) is not a record: every record has one spelling.
func TestVerify_OnlyOneSpellingOfARecordPasses(t *testing.T) {
	_, orig := writeLog(t, 1)
	line := bytes.TrimSuffix(orig, []byte("\n"))
	var r audit.Record
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatal(err)
	}
	same := reseal(t, line, "", func(s string) string { return s })
	if !bytes.Equal(same, line) {
		t.Fatalf("reseal without a change is not the line:\n%s\n%s", same, line)
	}
	for _, tc := range []struct{ name, from, to string }{
		{"duplicate member", `"decision":"allow",`, `"decision":"allow","decision":"deny",`},
		{"second hash member", `"decision":"allow",`, `"decision":"allow","hash":"` + strings.Repeat("0", 64) + `",`},
		{"members out of order", `"call_id":"c0","context":"you",`, `"context":"you","call_id":"c0",`},
		{"bytes after a number", `"seq":1,`, `"seq":1,"server":"notes","seq":1 ,`},
		{"bytes after a literal", `"decision":"allow",`, `"decision":"allow","duration_ms":5x,`},
		{"bytes after a nested value", `"args":{"title":"<b>&é"}`, `"args":{"title":"<b>&é"}}`},
		{"not UTF-8", "é", "\xff"},
		{"seq spelled with a zero", `"seq":1,`, `"seq":01,`},
		{"a number spelled as a float", `"decision":"allow",`, `"decision":"allow","duration_ms":5.0,`},
		{"space inside args", `{"title":`, `{"title": `},
		{"a nested object not closed right", `"args":{"title":"<b>&é"}`, `"args":{"title":"<b>&é"]`},
		{"a literal that is not JSON", `"decision":"allow",`, `"decision":"allow","duration_ms":yes,`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(string(line), tc.from) {
				t.Fatalf("%q is not in the line %s", tc.from, line)
			}
			bad := reseal(t, line, "", func(s string) string { return strings.Replace(s, tc.from, tc.to, 1) })
			if n, err := audit.Verify(bytes.NewReader(append(bad, '\n'))); err == nil {
				t.Errorf("verify passed %d records of a line airlock never writes: %s", n, bad)
			}
		})
	}
}

// The other side of one spelling: whatever airlock writes passes, with every byte
// value in its strings (not UTF-8, control characters, U+2028) and every kind of
// JSON value in its arguments.
func TestVerify_EverythingAirlockWritesPasses(t *testing.T) {
	a, path := openTemp(t)
	var all []byte
	for c := range 256 {
		all = append(all, byte(c))
	}
	args := []string{`{}`, `{"a":[]}`, `{"n":-0,"m":1.5e+10,"k":1E-3,"z":0.25}`, `{"t":true,"f":false,"u":null,"l":[1,[2,[{}]]]}`,
		`{"s":"\u2028\u0000\"\\\/\b\f\n\r\t","é":"<&>"}`, `{"deep":` + strings.Repeat(`[`, 60) + strings.Repeat(`]`, 60) + `}`}
	for i, arg := range args {
		r := rec(i)
		r.Args = json.RawMessage(arg)
		r.Error = string(all)
		r.Reason = string(all[128:]) + "\u2028"
		r.DurationMS = int64(i * 1000)
		r.Outcome = "ok"
		if err := a.Append(r); err != nil {
			t.Fatalf("append with args %s: %v", arg, err)
		}
	}
	a.Close()
	if n, err := audit.VerifyFile(path); err != nil || n != len(args) {
		t.Errorf("verify of what airlock wrote: %d %v", n, err)
	}
}
