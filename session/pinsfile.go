package session

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
)

// encodePins returns exactly what json.MarshalIndent(data, "", "  ") returns, written
// by hand: MarshalIndent marshals the whole store (validating and compacting every
// pinned definition) and then re-indents the result, two passes over a file that at
// 10,000 tools holds megabytes of definitions and that a first start writes before
// its first screen. Here each definition is indented once, straight into a buffer
// sized up front. TestEncodePins_SameAsMarshalIndent compares the two.
func encodePins(data pinFile) ([]byte, error) {
	size := 64
	for id, sp := range data.Servers {
		size += len(id) + 128
		if sp != nil {
			for name, t := range sp.Tools {
				size += len(name) + len(t.Fingerprint) + 3*len(t.Definition) + 200
			}
		}
	}
	w := pinWriter{b: make([]byte, 0, size)}
	w.b = append(w.b, "{\n  \"version\": "...)
	w.b = strconv.AppendInt(w.b, int64(data.Version), 10)
	w.b = append(w.b, ",\n  \"servers\": "...)
	if data.Servers == nil {
		w.b = append(w.b, "null"...)
	} else if len(data.Servers) == 0 {
		w.b = append(w.b, "{}"...)
	} else {
		w.b = append(w.b, '{')
		for i, id := range sortedKeys(data.Servers) {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, "\n    "...)
			w.str(id)
			w.b = append(w.b, ": "...)
			if err := w.server(data.Servers[id]); err != nil {
				return nil, err
			}
		}
		w.b = append(w.b, "\n  }"...)
	}
	w.b = append(w.b, "\n}"...)
	return w.b, nil
}

type pinWriter struct {
	b       []byte
	scratch bytes.Buffer
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// str appends s as encoding/json writes a string (HTML characters escaped, invalid
// UTF-8 replaced).
func (w *pinWriter) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			w.b = append(w.b, q...)
			return
		}
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, s...)
	w.b = append(w.b, '"')
}

func (w *pinWriter) server(sp *serverPin) error {
	if sp == nil {
		w.b = append(w.b, "null"...)
		return nil
	}
	w.b = append(w.b, "{\n      \"name\": "...)
	w.str(sp.Name)
	w.b = append(w.b, ",\n      \"instructions_sha256\": "...)
	w.str(sp.Instructions)
	w.b = append(w.b, ",\n      \"pinned_at\": "...)
	if err := w.time(sp.PinnedAt); err != nil {
		return err
	}
	w.b = append(w.b, ",\n      \"tools\": "...)
	switch {
	case sp.Tools == nil:
		w.b = append(w.b, "null"...)
	case len(sp.Tools) == 0:
		w.b = append(w.b, "{}"...)
	default:
		w.b = append(w.b, '{')
		for i, name := range sortedKeys(sp.Tools) {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, "\n        "...)
			w.str(name)
			w.b = append(w.b, ": "...)
			if err := w.tool(sp.Tools[name]); err != nil {
				return err
			}
		}
		w.b = append(w.b, "\n      }"...)
	}
	w.b = append(w.b, "\n    }"...)
	return nil
}

func (w *pinWriter) time(t interface{ MarshalJSON() ([]byte, error) }) error {
	b, err := t.MarshalJSON()
	if err != nil {
		return &json.MarshalerError{Err: err}
	}
	w.b = append(w.b, b...)
	return nil
}

// definitionPrefix is the indentation of a definition's lines in the file: it is the
// value of a member of a tool (level 5: file, servers, server, tools, tool).
const definitionPrefix = "          "

func (w *pinWriter) tool(t toolPin) error {
	w.b = append(w.b, "{\n          \"sha256\": "...)
	w.str(t.Fingerprint)
	w.b = append(w.b, ",\n          \"pinned_at\": "...)
	if err := w.time(t.PinnedAt); err != nil {
		return err
	}
	w.b = append(w.b, ",\n          \"definition\": "...)
	if t.Definition == nil {
		w.b = append(w.b, "null"...)
	} else {
		// As Marshal writes a RawMessage: HTML characters escaped (json.HTMLEscape
		// is the same escaping), then indented at its depth in the file.
		def := t.Definition
		if needsHTMLEscape(def) {
			w.scratch.Reset()
			json.HTMLEscape(&w.scratch, def)
			def = w.scratch.Bytes()
		}
		buf := bytes.NewBuffer(w.b)
		if err := json.Indent(buf, bytes.TrimRight(def, " \t\r\n"), definitionPrefix, "  "); err != nil {
			return err
		}
		w.b = buf.Bytes()
	}
	w.b = append(w.b, "\n        }"...)
	return nil
}

// needsHTMLEscape reports whether b holds what json.HTMLEscape changes: <, >, & or
// U+2028 and U+2029 (bytes.ContainsAny is slow with a non-ASCII set).
func needsHTMLEscape(b []byte) bool {
	for i, c := range b {
		switch c {
		case '<', '>', '&':
			return true
		case 0xE2:
			if i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9) {
				return true
			}
		}
	}
	return false
}
