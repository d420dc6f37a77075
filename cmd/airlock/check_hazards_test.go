package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// npmBin is the path of a pinned npm reference server's bin; the test is skipped
// without the npm servers.
func npmBin(t *testing.T, bin string) string {
	t.Helper()
	everythingEvConfig(t, "") // skips without them
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "npm", "node_modules", ".bin", bin))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// check suggests the persistent label for the npm memory server, and not once the
// config has it.
func TestCheck_SuggestsPersistentForTheMemoryServer(t *testing.T) {
	bin := npmBin(t, "mcp-server-memory")
	dir := t.TempDir()
	table := "[servers.memory]\ncommand = " + strconvQuote(bin) + "\nconnect_timeout = \"60s\"\ntrust = \"trusted\"\nenv = { MEMORY_FILE_PATH = " + strconvQuote(filepath.Join(dir, "m.jsonl")) + " }\n"
	r := airlock(t, "", "check", "--config", writeConfig(t, table))
	if !strings.Contains(r.stdout, `labels = ["persistent"]`) || !strings.Contains(r.stdout, "add_observations") {
		t.Errorf("check does not suggest the persistent label for server memory:\n%s%s", r.stdout, r.stderr)
	}
	r = airlock(t, "", "check", "--config", writeConfig(t, table+"labels = [\"persistent\"]\n"))
	if strings.Contains(r.stdout, "looks like a persistent store") {
		t.Errorf("check still suggests the label the config has:\n%s", r.stdout)
	}
	// The store's writes say so in the LEGS column; its reads do not.
	for _, l := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(l)
		if len(f) < 5 || !strings.HasPrefix(f[0], "memory__") {
			continue
		}
		write := f[0] == "memory__add_observations" || f[0] == "memory__create_entities"
		if strings.Contains(l, "persistent") != write && (write || f[0] == "memory__read_graph") {
			t.Errorf("tool row %q: persistent in LEGS = %v, want %v", l, !write, write)
		}
	}
}
