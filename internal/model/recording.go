package model

import (
	"encoding/json"
	"io"
	"slices"

	"github.com/airlock-mcp/airlock/trust"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RecordingSchemaVersion is the schema_version of the snapshot files this airlock
// writes and reads (`airlock snapshot`, `check --snapshot`, `check --drift`).
const RecordingSchemaVersion = 1

// MaxRecordingBytes bounds a snapshot file airlock reads.
const MaxRecordingBytes = 256 << 20

// The drift kinds.
const (
	DriftServerAdded         DriftKind = "server-added"
	DriftServerRemoved       DriftKind = "server-removed"
	DriftServerStatus        DriftKind = "server-status"
	DriftInstructionsChanged DriftKind = "instructions-changed"
	DriftToolAdded           DriftKind = "tool-added"
	DriftToolRemoved         DriftKind = "tool-removed"
	DriftToolChanged         DriftKind = "tool-changed"
)

// DriftSandboxLoosened is a server's sandbox loosened since the snapshot: network
// none → all, a folder more to read or write, applied then and not now, or no
// longer asked for. A tightened sandbox is no finding (it takes no risk away from
// what the snapshot approved); taking the snapshot again records it.
const DriftSandboxLoosened DriftKind = "sandbox-loosened"

// DriftKind names one kind of difference between a snapshot and the live servers.
type DriftKind string

// DriftFinding is one difference between a recorded snapshot and the live listing.
// Server and Tool are server-controlled names: escape before display.
type DriftFinding struct {
	Kind   DriftKind `json:"kind"`
	Server string    `json:"server"`
	Tool   string    `json:"tool,omitempty"`
	// Detail says what changed, e.g. "description, annotations" for a changed tool.
	Detail string `json:"detail"`
	// Was and Now are a changed tool's recorded definition in the snapshot and
	// live, for the reports' diff; server text, escape before display.
	Was json.RawMessage `json:"-"`
	Now json.RawMessage `json:"-"`
}

// Recording is what `airlock snapshot` writes: every server's raw listing, its
// instructions and fingerprints, in a stable form meant to be committed and diffed.
// Servers are sorted by name and tools by name; nothing in it depends on the time or
// the machine it was taken on, so taking it twice from the same servers gives the
// same bytes. Strings in it came from servers: escape before display.
type Recording struct {
	SchemaVersion int              `json:"schema_version"`
	Servers       []RecordedServer `json:"servers"`
}

// RecordedServer is one server of a Recording.
type RecordedServer struct {
	Name string `json:"name"`
	// Status is "ready" or "failed" (with Error saying why).
	Status             string              `json:"status"`
	Error              string              `json:"error,omitempty"`
	Protocol           string              `json:"protocol,omitempty"`
	ServerInfo         *mcp.Implementation `json:"server_info,omitempty"`
	Instructions       string              `json:"instructions"`
	InstructionsSHA256 string              `json:"instructions_sha256"`
	// Notices are what airlock noticed of the listing itself (caps, skipped entries).
	Notices []string       `json:"notices,omitempty"`
	Tools   []RecordedTool `json:"tools"`
	// Resources and Prompts are null when the server does not offer them, else a
	// RecordedResources and a RecordedPrompts object (sorted lists); an older
	// airlock left them null.
	Resources json.RawMessage `json:"resources"`
	Prompts   json.RawMessage `json:"prompts"`
	// Sandbox is the server's sandbox (left out when none was asked for).
	Sandbox *RecordedSandbox `json:"sandbox,omitempty"`
}

// RecordedResources is a RecordedServer's resources: its resources sorted by URI,
// its templates by URI template.
type RecordedResources struct {
	Subscribe bool                   `json:"subscribe,omitempty"`
	List      []ResourceInfo         `json:"list"`
	Templates []ResourceTemplateInfo `json:"templates"`
}

// RecordedPrompts is a RecordedServer's prompts, sorted by name.
type RecordedPrompts struct {
	List []PromptInfo `json:"list"`
}

// RecordedTool is one tool as the server listed it: the whole definition (in
// canonical key order) and its fingerprint, the SHA-256 that pins compare.
type RecordedTool struct {
	Name string `json:"name"`
	// SHA256 is "" when the definition cannot be fingerprinted (such a tool is blocked).
	SHA256     string          `json:"sha256"`
	Definition json.RawMessage `json:"definition"`
}

// Write writes the recording as indented JSON with a final newline. HTML characters
// are not escaped, so descriptions read as the server wrote them.
func (r *Recording) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// RecordedSandbox is a RecordedServer's sandbox: what the config asked for and
// whether the launcher applied it where the snapshot was taken. It leaves out the
// launcher's detail (a kernel's Landlock ABI), which depends on the machine.
type RecordedSandbox struct {
	Requested bool     `json:"requested"`
	Applied   bool     `json:"applied"`
	Network   string   `json:"network,omitempty"`
	Read      []string `json:"read,omitempty"`
	Write     []string `json:"write,omitempty"`
}

// SameRequest reports whether the recorded sandbox asked for what want asks for.
func (r *RecordedSandbox) SameRequest(want trust.Fence) bool {
	return r != nil && r.Requested && r.Network == want.Network && slices.Equal(r.Read, want.Read) && slices.Equal(r.Write, want.Write)
}
