package logs

import (
	"strings"
	"testing"

	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/internal/keytest"
	"github.com/airlock-mcp/airlock/ui/screen"
	"github.com/airlock-mcp/airlock/ui/theme"
)

// The logs screen through the screen interface: esc asks to go back, tab for the
// next source, and the view fits its size with every line escaped.
func TestLogs_IntentsAndView(t *testing.T) {
	st := theme.New(true, true)
	var s screen.Screen = ptr(New(&common.Common{St: &st}))
	s.SetSize(60, 12)
	if in, _ := s.Update(keytest.Press("esc")); in != (screen.Back{}) {
		t.Errorf("esc: intent %#v, want screen.Back", in)
	}
	if in, _ := s.Update(keytest.Press("tab")); in != (NextSource{}) {
		t.Errorf("tab: intent %#v, want NextSource", in)
	}
	if in, _ := s.Update(keytest.Press("j")); in != nil {
		t.Errorf("j scrolls: intent %#v, want none", in)
	}
	var ring Ring
	ring.Add(Entry{Server: "web", Source: "stderr", Text: "hello\x1b[2Jworld"})
	m := s.(*Model)
	m.Render(ring)
	v := s.View()
	keytest.Fits(t, v, 60, 12, "logs")
	if strings.Contains(v, "\x1b[2J") {
		t.Error("a server's escape reached the screen raw")
	}
}

func ptr(m Model) *Model { return &m }
