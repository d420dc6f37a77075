// Package depsrule holds the test of airlock's dependency rule (ARCHITECTURE.md):
// it reads the imports of every non-test Go file of the module, on every
// platform, and fails on an import the rule forbids.
package depsrule

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/airlock-mcp/airlock"

// imports maps each package directory (relative, slash-separated) to the
// imports of its non-test files, whatever their build constraints.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module's top is not two folders up: %v", err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "node_modules" || n == "testdata" || strings.HasPrefix(n, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		for _, is := range f.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			if !slices.Contains(out[rel], p) {
				out[rel] = append(out[rel], p)
			}
		}
		if _, ok := out[rel]; !ok {
			out[rel] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ours(p string) (string, bool) {
	if p == module {
		return ".", true
	}
	rest, ok := strings.CutPrefix(p, module+"/")
	return rest, ok
}

func under(dir, pkg string) bool { return dir == pkg || strings.HasPrefix(dir, pkg+"/") }

// TestDependencyRule holds the layering: cmd -> ui -> session -> trust; the UI's
// sub-packages and ui/cli read values from internal/model, never the session root;
// no room of session imports its parent; the gateway reaches the Manager only
// through its own interface; trust and model stay leaves.
func TestDependencyRule(t *testing.T) {
	all := imports(t)
	if len(all) < 40 {
		t.Fatalf("found only %d packages: the walk is not reading the module", len(all))
	}
	uiMayReadOfSession := []string{"session/config", "session/argcheck", "session/importer"}
	for dir, imps := range all {
		for _, imp := range imps {
			p, mine := ours(imp)
			bad := ""
			switch {
			case dir == "trust" && mine && p != "internal/jsonlex":
				bad = "trust imports nothing of ours but the lexer"
			case dir == "internal/model" && mine && p != "trust":
				bad = "internal/model imports only trust"
			case under(dir, "session") && mine && (under(p, "ui") || under(p, "cmd")):
				bad = "session never imports the UI or cmd"
			case under(dir, "session") && strings.HasPrefix(imp, "charm.land/"):
				bad = "session never imports bubbletea or lipgloss"
			case strings.HasPrefix(dir, "session/") && p == "session" && mine:
				bad = "a room of session imports its parent"
			case under(dir, "session/gateway") && mine && (p == "session" || under(p, "session/approval") || under(p, "session/audit") || under(p, "session/pins")):
				bad = "the gateway reaches the Manager only through gateway.Host"
			case strings.HasPrefix(dir, "ui/") && mine && (p == "ui" || p == "session"):
				bad = "a UI sub-package imports the root ui or the session root"
			case strings.HasPrefix(dir, "ui/") && mine && strings.HasPrefix(p, "session/") && !slices.Contains(uiMayReadOfSession, p):
				bad = "a UI sub-package imports a session room that is not values or checks"
			case (dir == "trust" || dir == "internal/model" || under(dir, "ui")) && mine && under(p, "cmd"):
				bad = "nothing imports cmd"
			}
			if bad != "" {
				t.Errorf("%s imports %s: %s", dir, imp, bad)
			}
		}
	}
}
