package session

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/airlock-mcp/airlock/internal/oldsession"
)

// FuzzLexSameAsOld holds the front ends over the lexer to the scanners they
// replaced, on any bytes.
func FuzzLexSameAsOld(f *testing.F) {
	for _, s := range validJSONSeeds {
		f.Add([]byte(s))
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		f.Add(randomResponse(r))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		valid := validJSON(b)
		if valid != oldsession.ValidJSON(b) {
			t.Fatalf("validJSON(%q) = %v, old %v", clipForTest(string(b)), valid, !valid)
		}
		if !valid || b[0] != '{' {
			return
		}
		id, page, ok := splitListResponse(b)
		oid, tools, cursor, ook := oldsession.SplitListResponse(b)
		if ok != ook || string(id) != string(oid) || ok && (!reflect.DeepEqual(page.Tools, tools) || page.NextCursor != cursor) {
			t.Fatalf("splitListResponse(%q) differs from the old one", clipForTest(string(b)))
		}
	})
}
