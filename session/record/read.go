package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/airlock-mcp/airlock/internal/model"
)

// Read reads a snapshot file's contents, refusing a schema version it does
// not know, a repeated server name, and anything above MaxRecordingBytes.
func Read(r io.Reader) (*model.Recording, error) {
	b, err := io.ReadAll(io.LimitReader(r, model.MaxRecordingBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > model.MaxRecordingBytes {
		return nil, fmt.Errorf("snapshot is larger than %d MiB", model.MaxRecordingBytes>>20)
	}
	var probe struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("snapshot is not JSON: %w", err)
	}
	switch {
	case probe.SchemaVersion == nil:
		return nil, errors.New("snapshot has no schema_version: is it a file written by `airlock snapshot`?")
	case *probe.SchemaVersion != model.RecordingSchemaVersion:
		return nil, fmt.Errorf("snapshot schema_version %d is not %d: it was written by another airlock version; take it again with `airlock snapshot`", *probe.SchemaVersion, model.RecordingSchemaVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var rec model.Recording
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("reading snapshot: %w", err)
	}
	seen := map[string]bool{}
	for _, s := range rec.Servers {
		if seen[s.Name] {
			return nil, fmt.Errorf("snapshot lists server %q twice", s.Name)
		}
		seen[s.Name] = true
		if s.Status != model.StatusReady.String() && s.Status != model.StatusFailed.String() {
			return nil, fmt.Errorf("snapshot server %q: status %q is not ready or failed", s.Name, s.Status)
		}
	}
	return &rec, nil
}
