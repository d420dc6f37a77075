package pins

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
)

// encodePins returns what json.MarshalIndent(data, "", "  ") returns, except that
// each pinned definition is written on one line, compact, as json.Marshal writes it:
// re-indented at its depth, 10,000 definitions took two and a half times the bytes
// (and the time to write and sync them) that a first start spends before its first
// screen, for a file people read one tool at a time. Written by hand, in one pass,
// into a buffer sized up front. TestEncodePins_MarshalIndentWithDefinitionsCompact
// compares the two.
func encodePins(data pinFile) ([]byte, error) {
	size := 64
	for id, sp := range data.Servers {
		size += len(id) + 128
		if sp != nil {
			for name, t := range sp.Tools {
				size += len(name) + len(t.Fingerprint) + len(t.Definition) + 200
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
		// As Marshal writes a RawMessage: compact, HTML characters escaped
		// (json.HTMLEscape is the same escaping).
		def := t.Definition
		if needsHTMLEscape(def) {
			w.scratch.Reset()
			json.HTMLEscape(&w.scratch, def)
			def = w.scratch.Bytes()
		}
		buf := bytes.NewBuffer(w.b)
		if err := json.Compact(buf, def); err != nil {
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
