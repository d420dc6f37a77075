package oldtrust_test

import (
	"reflect"
	"testing"

	"github.com/airlock-mcp/airlock/internal/oldtrust"
	"github.com/airlock-mcp/airlock/trust"
)

var seeds = []string{
	`{}`, `{"b":1,"a":[true,false,null,-0.5e+3]}`, `{"a":"\u00e9\ud83d\ude00\ud800\udc00x"}`, `{"a":"\ud800\u0041"}`,
	`{"a":"\ud800\uzzzz"}`, `{"a":"\udc00"}`, `{"a":"\x"}`, "{\"a\":\"\xff\"}", `{"a":"\u12"}`, `{"a":01}`, `{"a":tru}`,
	`{"name":"t","title":"T","description":"d","inputSchema":{"type":"object","properties":{"z":{"description":"zz"},"a":{"title":"aa"}}},"annotations":{"readOnlyHint":true,"TITLE":"x"},"execution":{"taskSupport":"optional"}}`,
	`[1,2`, `"abc`, `{"a":1}x`, `null`, ` {"a" : [ ] , "b" : { } } `, `{"a":"\u2028"}`,
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func FuzzSameAsOld(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		a, errA := trust.Canonical(in)
		b, errB := oldtrust.Canonical(in)
		if string(a) != string(b) || errText(errA) != errText(errB) {
			t.Fatalf("Canonical(%q) = %q, %v; old %q, %v", in, a, errA, b, errB)
		}
		fa, errA := trust.ToolFingerprint(in)
		fb, errB := oldtrust.ToolFingerprint(in)
		if fa != fb || errText(errA) != errText(errB) {
			t.Fatalf("ToolFingerprint(%q) differs", in)
		}
		a, errA = trust.CanonicalArgs(in, 0)
		b, errB = oldtrust.CanonicalArgs(in, 0)
		if string(a) != string(b) || errText(errA) != errText(errB) {
			t.Fatalf("CanonicalArgs(%q) = %q, %v; old %q, %v", in, a, errA, b, errB)
		}
		ta, okA := trust.ReadTool(in)
		tb, okB := oldtrust.ReadTool(in)
		va, vb := reflect.ValueOf(ta), reflect.ValueOf(tb)
		same := okA == okB && va.NumField() == vb.NumField()
		for i := 0; same && i < va.NumField(); i++ {
			same = reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface())
		}
		if !same {
			t.Fatalf("ReadTool(%q) = %#v, %v; old %#v, %v", in, ta, okA, tb, okB)
		}
	})
}
