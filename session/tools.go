package session

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session/conn"
	"github.com/airlock-mcp/airlock/trust"
)

// wireTool is a tool object decoded leniently from the raw bytes: a field of the wrong
// type is left empty rather than failing the whole list.
type wireTool struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Annotations  json.RawMessage
	// TaskSupport is execution.taskSupport ("" when absent or not a string).
	TaskSupport string
}

// readTool reads one raw tool object in one pass (trust.ReadTool): its wire fields,
// the text a model reads of it and its declared hints; ok is false when it is not a
// JSON object.
func readTool(raw json.RawMessage) (w wireTool, f trust.ToolFields, ok bool) {
	f, ok = trust.ReadTool(raw)
	if !ok {
		return wireTool{}, f, false
	}
	return wireTool{
		Name:         f.Name,
		Title:        f.Title,
		Description:  f.Description,
		InputSchema:  f.InputSchema,
		OutputSchema: f.OutputSchema,
		Annotations:  f.Annotations,
		TaskSupport:  f.TaskSupport,
	}, f, true
}

// listedTool is one tool as a server listed it, before classification.
type listedTool struct {
	wire        wireTool
	raw         json.RawMessage
	declared    trust.Declared
	fingerprint string
	text        string // every text field a model reads (trust.ToolText), for shadowing
	nameProblem string
}

// listTools lists the server's tools (conn.ListTools: the pages as the capture kept
// them) and decodes them from those raw bytes.
func listTools(ctx context.Context, cs *mcp.ClientSession, capt *conn.Capture) ([]listedTool, []string, error) {
	raws, notices, err := conn.ListTools(ctx, cs, capt)
	if err != nil {
		return nil, notices, err
	}
	tools, more := parseListing(raws)
	return tools, append(notices, more...), nil
}

// parseListing decodes the raw tool objects of a listing (live, or recorded in a
// snapshot file): fingerprints, declared hints, and the name problems that block a
// tool, with notices for what was skipped or rejected.
func parseListing(raws []json.RawMessage) ([]listedTool, []string) {
	var notices []string
	// Each tool is decoded on its own (wire fields, fingerprint, declared hints,
	// text), so a long listing is split over the processors; the order is kept.
	parsed := make([]listedTool, len(raws))
	ok := make([]bool, len(raws))
	parseRange := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			parsed[i], ok[i] = parseTool(raws[i])
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(raws)/parallelParseMin)
	if workers <= 1 {
		parseRange(0, len(raws))
	} else {
		var wg sync.WaitGroup
		per := (len(raws) + workers - 1) / workers
		for lo := 0; lo < len(raws); lo += per {
			wg.Go(func() { parseRange(lo, min(lo+per, len(raws))) })
		}
		wg.Wait()
	}
	tools := parsed[:0]
	skipped := 0
	for i := range parsed {
		if !ok[i] {
			skipped++
			continue
		}
		tools = append(tools, parsed[i])
	}
	clear(parsed[len(tools):])
	if skipped > 0 {
		notices = append(notices, fmt.Sprintf("%d entries of tools/list were not tool objects and were skipped", skipped))
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.wire.Name
	}
	problems := trust.NameProblems(names)
	var rejected []string
	said := map[string]bool{}
	for i := range tools {
		problem, ok := problems[i]
		if !ok {
			continue
		}
		if tools[i].nameProblem == "" {
			tools[i].nameProblem = problem
		}
		// Each rejected name is said once at server level too (hostile cases 10 and 12:
		// "a warning shown", "reported"), quoted so that spaces and look-alikes show.
		if !said[names[i]] {
			said[names[i]] = true
			rejected = append(rejected, quoteName(names[i]))
		}
	}
	if len(rejected) > 0 {
		notices = append(notices, fmt.Sprintf("tools blocked and not exposed because of their names (invalid or listed twice): %s", shortList(rejected, 5)))
	}
	return tools, notices
}

// parallelParseMin is the number of tools per processor below which a listing is
// parsed on one goroutine.
const parallelParseMin = 512

// parseTool decodes one raw tool object; ok is false when it is not a tool object.
func parseTool(raw json.RawMessage) (t listedTool, ok bool) {
	w, f, ok := readTool(raw)
	if !ok {
		return listedTool{}, false
	}
	fp, err := trust.ToolFingerprint(raw)
	if err != nil {
		// A definition that cannot be fingerprinted cannot be pinned: block it.
		fp = ""
	}
	t = listedTool{
		wire:        w,
		raw:         raw,
		declared:    f.Declared,
		fingerprint: fp,
		text:        f.Text,
	}
	if err != nil {
		t.nameProblem = "definition cannot be fingerprinted: " + err.Error()
	}
	return t, true
}

// quoteName quotes a rejected tool name for a notice, cut after 64 bytes: a notice
// names the problem, the tool's own entry keeps the whole name.
func quoteName(name string) string {
	const keep = 64
	if len(name) <= keep {
		return strconv.Quote(name)
	}
	return fmt.Sprintf("%s… (%d more bytes)", strconv.Quote(name[:keep]), len(name)-keep)
}
