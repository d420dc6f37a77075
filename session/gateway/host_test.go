package gateway_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/gateway"
)

// The Manager is the gateway's host.
var _ gateway.Host = (*session.Manager)(nil)

// TestHostCannotAllowClearOrDrop holds Host to its doc comment: no method that can
// allow a call, clear taint, change policy or drop a record, and no way to the
// engine that can.
func TestHostCannotAllowClearOrDrop(t *testing.T) {
	forbidden := []string{"Answer", "Approve", "Allow", "Accept", "Grant", "Decide", "Remember", "Set",
		"Reset", "Clear", "Untaint", "Forget", "Drop", "Delete", "Remove", "Purge", "Prune"}
	host := reflect.TypeFor[gateway.Host]()
	if host.NumMethod() == 0 {
		t.Fatal("Host has no methods")
	}
	for i := range host.NumMethod() {
		name := host.Method(i).Name
		if name == "Engine" {
			t.Errorf("Host.%s reaches the approval engine, which answers and clears taint", name)
		}
		for _, f := range forbidden {
			if strings.HasPrefix(name, f) {
				t.Errorf("Host.%s begins with %q: the gateway must not be able to allow a call, clear taint or drop a record", name, f)
			}
		}
	}
	for _, name := range []string{"Answer", "ClearTaint", "ClearTaints", "Engine"} {
		if _, ok := host.MethodByName(name); ok {
			t.Errorf("Host has %s", name)
		}
	}
}
