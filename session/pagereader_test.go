package session_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/sessiontest"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/trust"
)

// TestListing_SameToolsHoweverTheServerFramesIt: a real stdio server listing two pages
// (escapes, a non-tool entry, a duplicate name, a cursor) gives the same tools, byte
// for byte (a pretty-printing server's tools compacted), whether its responses are split by airlock's stdout reader (one response
// per line, jsonrpc first or result first) or read on the old path after go-sdk (a
// server that pretty-prints its messages over several lines, or ends them without a
// newline), and the reader took the pages it should.
func TestListing_SameToolsHoweverTheServerFramesIt(t *testing.T) {
	pages := `"pages":[` +
		`{"tools":[{"name":"a","description":"line\nbreak \u00e9 \"q\"","inputSchema":{"type":"object"}},"not a tool",{"name":"b","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}],"nextCursor":"p2"},` +
		`{"tools":[{"name":"c","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}},{"name":"a","inputSchema":{}}]}` +
		`]`
	type seen struct {
		raws    []string
		notices string
	}
	list := func(t *testing.T, framing string) (seen, int) {
		sc := `{` + pages + `,"framing":"` + framing + `"}`
		m := sessiontest.Start(t, sessiontest.NewConfig(sessiontest.RawServer(t, "s", trust.Trusted, sc)), session.Options{})
		sv := sessiontest.MustServer(t, m, "s", model.StatusReady)
		var out seen
		for _, ti := range m.Snapshot().Tools {
			raw := string(ti.Raw)
			if framing == "pretty" { // the server indented the tools too
				var b bytes.Buffer
				if err := json.Compact(&b, ti.Raw); err != nil {
					t.Fatal(err)
				}
				raw = b.String()
			}
			out.raws = append(out.raws, ti.Ref.Tool+" "+raw+" "+ti.Fingerprint+" "+ti.Class.Tier.String())
		}
		out.notices = strings.Join(sv.Notices, "\n")
		return out, session.PagesSplitEarly(m, "s")
	}
	want, early := list(t, "")
	if len(want.raws) != 4 || !strings.Contains(want.notices, "not tool objects") || !strings.Contains(want.notices, "listed twice") {
		t.Fatalf("listing %q, notices %q: want 4 tools, the skipped entry and the duplicate said", want.raws, want.notices)
	}
	if early != 2 {
		t.Fatalf("%d of 2 pages split by the reader", early)
	}
	for _, c := range []struct {
		framing string
		early   int
	}{{"result-first", 2}, {"pretty", 0}, {"no-newline", 0}} {
		t.Run(c.framing, func(t *testing.T) {
			got, early := list(t, c.framing)
			if strings.Join(got.raws, "\n") != strings.Join(want.raws, "\n") || got.notices != want.notices {
				t.Errorf("listing %q\nnotices %q\nwant %q\nnotices %q", got.raws, got.notices, want.raws, want.notices)
			}
			if early != c.early {
				t.Errorf("%d pages split by the reader, want %d", early, c.early)
			}
		})
	}
}
