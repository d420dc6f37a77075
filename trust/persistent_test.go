package trust

import (
	"slices"
	"testing"
)

func TestLooksPersistent(t *testing.T) {
	for _, tt := range []struct {
		server string
		tools  []string
		word   string
		named  []string
		ok     bool
	}{
		{server: "memory", tools: []string{"read_graph", "create_entities", "add_observations"}, word: "memory", named: []string{"add_observations", "create_entities"}, ok: true},
		{server: "my-notes", word: "notes", ok: true},
		{server: "team_kb", word: "kb", ok: true},
		{server: "work", tools: []string{"Save-Note"}, named: []string{"Save-Note"}, ok: true},
		{server: "github", tools: []string{"create_issue", "search_code"}},
		{server: "memorial", tools: []string{"remembered"}}, // words, not substrings
	} {
		word, named, ok := LooksPersistent(tt.server, tt.tools)
		if word != tt.word || !slices.Equal(named, tt.named) || ok != tt.ok {
			t.Errorf("LooksPersistent(%q, %q) = %q, %q, %v; want %q, %q, %v", tt.server, tt.tools, word, named, ok, tt.word, tt.named, tt.ok)
		}
	}
}
