package trust

// The two decodes of a raw tool object that airlock used before the one lenient pass
// in toolpass.go, kept verbatim as the oracle the differential tests and the fuzz test
// compare against: session's decodeWireTool (the wire fields, and whether the tool is
// skipped) and ToolText (the text a model reads).

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
)

// oldWireTool is session's wireTool.
type oldWireTool struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Annotations  json.RawMessage
	// TaskSupport is execution.taskSupport ("" when absent or not a string).
	TaskSupport string
}

func oldDecodeWireTool(raw json.RawMessage) (oldWireTool, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return oldWireTool{}, errors.New("tool is not a JSON object")
	}
	var w oldWireTool
	str := func(k string) string {
		if s, ok := oldPlainString(fields[k]); ok {
			return s
		}
		var s string
		_ = json.Unmarshal(fields[k], &s)
		return s
	}
	w.Name = str("name")
	w.Title = str("title")
	w.Description = str("description")
	w.InputSchema = fields["inputSchema"]
	w.OutputSchema = fields["outputSchema"]
	if ex, ok := fields["execution"]; ok {
		var e struct {
			TaskSupport any `json:"taskSupport"`
		}
		if json.Unmarshal(ex, &e) == nil {
			w.TaskSupport, _ = e.TaskSupport.(string)
		}
	}
	if a, ok := fields["annotations"]; ok && !bytes.Equal(bytes.TrimSpace(a), []byte("null")) {
		w.Annotations = a
	}
	if w.Title == "" && w.Annotations != nil {
		var t struct {
			Title string `json:"title"`
		}
		_ = json.Unmarshal(w.Annotations, &t)
		w.Title = t.Title
	}
	return w, nil
}

func oldPlainString(raw json.RawMessage) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(body), true
}

func oldToolText(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var top map[string]any
	if dec.Decode(&top) != nil {
		return ""
	}
	var b strings.Builder
	add := func(v any) {
		if s, ok := v.(string); ok && s != "" {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	add(top["title"])
	add(top["description"])
	if ann, ok := top["annotations"].(map[string]any); ok {
		add(ann["title"])
	}
	for _, k := range []string{"inputSchema", "outputSchema"} {
		oldSchemaText(&b, top[k], "", 0)
	}
	return b.String()
}

var oldIdentifierKeywords = map[string]bool{
	"type": true, "format": true, "$schema": true, "$ref": true, "$id": true,
	"$anchor": true, "$dynamicRef": true, "$dynamicAnchor": true, "pattern": true,
	"required": true, "contentEncoding": true, "contentMediaType": true,
}

const oldMaxTextDepth = 1000

func oldSchemaText(b *strings.Builder, v any, key string, depth int) {
	if depth > oldMaxTextDepth {
		return
	}
	switch x := v.(type) {
	case string:
		if x != "" && !oldIdentifierKeywords[key] {
			b.WriteString(x)
			b.WriteByte('\n')
		}
	case []any:
		for _, e := range x {
			oldSchemaText(b, e, key, depth+1) // enum and examples items keep their keyword
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			oldSchemaText(b, x[k], k, depth+1)
		}
	}
}
