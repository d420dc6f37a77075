package argcheck

import (
	"encoding/json"
	"fmt"
	"testing"
)

// A cached schema is keyed by its exact bytes: a tool whose schema changed is
// checked against the new one, never the compiled old one, and the cache starts
// again past its bounds instead of growing.
func TestCache_KeyedByBytesAndBounded(t *testing.T) {
	var c Cache
	wantString := json.RawMessage(`{"type":"object","properties":{"n":{"type":"string"}}}`)
	wantNumber := json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}}}`)
	if err := c.Check(wantString, []byte(`{"n":"x"}`)); err != nil {
		t.Fatalf("a string under a string schema: %v", err)
	}
	if err := c.Check(wantNumber, []byte(`{"n":"x"}`)); err == nil {
		t.Fatal("the changed schema was not used: a string passed a number schema")
	}
	if err := c.Check(wantString, nil); err != nil {
		t.Fatalf("no arguments are the empty object: %v", err)
	}
	for i := range maxArgSchemas + 10 {
		c.Check(json.RawMessage(fmt.Sprintf(`{"type":"object","description":"%d"}`, i)), nil)
	}
	if len(c.in)+len(c.out) > maxArgSchemas {
		t.Fatalf("the cache holds %d schemas, bound %d", len(c.in)+len(c.out), maxArgSchemas)
	}
	if err := c.Check(wantNumber, []byte(`{"n":"x"}`)); err == nil {
		t.Fatal("after the cache started again, a string passed a number schema")
	}
}
