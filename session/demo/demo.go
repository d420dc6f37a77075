// Package demo holds airlock's four demo MCP servers (docs, web, notes and mail),
// used in-process by `airlock demo` and over stdio by `airlock demo-server NAME`.
//
// Each server is deterministic and annotated on purpose, so that together they show
// airlock's trust model on the first screen: docs is a harmless closed-world reader,
// web is an open-world source whose blog page carries a prompt injection wrapped in
// terminal escapes, notes holds private data and can be "rug pulled", and mail lies
// about its annotations. The servers must never touch the network, read or write
// outside NOTES_DIR, or send anything anywhere: every result comes from built-in data
// or from the notes store.
package demo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/pollstdin"
)

// Version is the version every demo server reports in its implementation info.
const Version = "1.0.0"

// ErrUnknownServer is returned (wrapped) by New and ServeStdio for a name that is
// not one of Names().
var ErrUnknownServer = errors.New("unknown demo server")

// The environment variables the stdio servers read.
const (
	// EnvNotesDir, when set, makes the notes server keep its notes as files in that
	// directory instead of in memory.
	EnvNotesDir = "NOTES_DIR"
	// EnvRugPull, when "1" (or true, yes, on), makes the notes server start with
	// create_note already rug-pulled, so a reconnect shows the changed definition.
	EnvRugPull = "AIRLOCK_DEMO_RUGPULL"
)

// Names returns the names of the demo servers, sorted: docs, mail, notes, web.
func Names() []string { return []string{"docs", "mail", "notes", "web"} }

// Set is one instance of every demo server, for the in-process demo. Its notes are
// kept in memory, seeded with the same three notes every time, and nothing is
// rug-pulled until Notes().RugPull is called. Each server may be connected to any
// number of clients.
type Set struct {
	servers map[string]*mcp.Server
	notes   *Notes
}

// NewSet creates a fresh Set. It ignores the environment, so two Sets never share
// state and the demo behaves the same on every machine.
func NewSet() *Set {
	notes := newNotes(newMemStore())
	return &Set{
		servers: map[string]*mcp.Server{
			"docs":  newDocs(),
			"mail":  newMail(),
			"notes": notes.server,
			"web":   newWeb(),
		},
		notes: notes,
	}
}

// Server returns the demo server with the given name, or nil if name is not one of
// Names().
func (s *Set) Server(name string) *mcp.Server { return s.servers[name] }

// Notes returns the handle of the Set's notes server, which the demo uses to
// trigger the rug pull.
func (s *Set) Notes() *Notes { return s.notes }

// New creates a single demo server, as `airlock demo-server NAME` runs it. Unlike
// NewSet it reads the environment: for notes, NOTES_DIR selects a directory store and
// AIRLOCK_DEMO_RUGPULL starts the server already rug-pulled. An unknown name is an
// error wrapping ErrUnknownServer.
func New(name string) (*mcp.Server, error) {
	return newFromEnv(name, os.Getenv)
}

// newFromEnv is New with the environment passed in, so tests need not set process
// environment variables.
func newFromEnv(name string, getenv func(string) string) (*mcp.Server, error) {
	switch name {
	case "docs":
		return newDocs(), nil
	case "mail":
		return newMail(), nil
	case "web":
		return newWeb(), nil
	case "notes":
		var store noteStore = newMemStore()
		if dir := getenv(EnvNotesDir); dir != "" {
			ds, err := openDirStore(dir)
			if err != nil {
				return nil, fmt.Errorf("opening notes directory %s=%q: %w", EnvNotesDir, dir, err)
			}
			store = ds
		}
		n := newNotes(store)
		if v := getenv(EnvRugPull); v != "" {
			pull, err := parseBool(v)
			if err != nil {
				return nil, fmt.Errorf("reading %s=%q: %w", EnvRugPull, v, err)
			}
			if pull {
				n.RugPull()
			}
		}
		return n.server, nil
	}
	return nil, fmt.Errorf("%w %q: want one of %s", ErrUnknownServer, name, strings.Join(Names(), ", "))
}

// ServeStdio runs the named demo server over stdin and stdout until stdin closes
// (then it returns nil) or ctx is cancelled (then it returns ctx's error). It is
// `airlock demo-server NAME`; see New for the environment it reads.
func ServeStdio(ctx context.Context, name string) error {
	s, err := New(name)
	if err != nil {
		return err
	}
	if err := s.Run(ctx, &mcp.IOTransport{Reader: pollstdin.Stdin(), Writer: stdoutWriter{os.Stdout}}); err != nil {
		return fmt.Errorf("serving demo server %q over stdio: %w", name, err)
	}
	return nil
}

// stdoutWriter is stdout for go-sdk's connection, which closes its writer when it
// ends: stdout stays open for the process's own last words.
type stdoutWriter struct{ *os.File }

func (stdoutWriter) Close() error { return nil }

// implementation names a demo server the same way for every one of them.
func implementation(name, title string) *mcp.Implementation {
	return &mcp.Implementation{Name: "airlock-demo-" + name, Title: title, Version: Version}
}

// textResult is a successful tool result holding one text block.
func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// ptr returns a pointer to v, for the annotation hints that go-sdk keeps as *bool.
func ptr[T any](v T) *T { return &v }

// parseBool reads a boolean environment value: 1/0, true/false, yes/no or on/off.
// Anything else is an error rather than false, so a typo does not silently leave the
// rug pull off.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "t", "true", "yes", "y", "on":
		return true, nil
	case "0", "f", "false", "no", "n", "off", "":
		return false, nil
	}
	return false, fmt.Errorf("want 1 or 0 (true or false), got %q", s)
}

// inputSchema infers T's input schema, as mcp.AddTool would, and lets the caller
// tighten its properties (patterns, lengths) beyond what Go types can say. A failure
// is a programming error in this package, so it panics like mcp.AddTool does.
func inputSchema[T any](tighten func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("inferring input schema: %v", err))
	}
	tighten(s.Properties)
	return s
}
