// Command manytools measures what hostile case 14 costs airlock: it runs a session
// Manager against a stdio server that lists 10,000 tools over pages of 1,000, the
// first with a 1 MB description, takes a Snapshot (classification, pins, hazards),
// and prints the peak resident set size of its own process (VmHWM from
// /proc/self/status) with the Go heap figures. The server is this same executable,
// started again with AIRLOCK_MANYTOOLS_SERVE set, so its memory is not counted.
//
//	go run ./bench/manytools [-tools 10000] [-desc 1048576] [-cpuprofile F] [-memprofile F]
//
// -cpuprofile and -memprofile write pprof profiles of the client side (start to
// snapshot), for `go tool pprof`.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

const serveEnv = "AIRLOCK_MANYTOOLS_SERVE"

func main() {
	tools := flag.Int("tools", 10000, "tools the server lists")
	desc := flag.Int("desc", 1<<20, "bytes of the first tool's description")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the client side to this file")
	memprofile := flag.String("memprofile", "", "write an allocation profile of the client side to this file")
	flag.Parse()
	if os.Getenv(serveEnv) != "" {
		serve(*tools, *desc)
		return
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "manytools:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if *memprofile != "" {
		defer func() {
			if f, err := os.Create(*memprofile); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	if err := measure(*tools, *desc); err != nil {
		fmt.Fprintln(os.Stderr, "manytools:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func measure(tools, desc int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cfg := &config.Config{
		Policy:          trust.DefaultPolicy(),
		ApprovalTimeout: time.Minute,
		Servers: []config.Server{{
			Name:           "many",
			Transport:      config.TransportStdio,
			Command:        self,
			Args:           []string{"-tools", strconv.Itoa(tools), "-desc", strconv.Itoa(desc)},
			Env:            map[string]string{serveEnv: "1"},
			ConnectTimeout: time.Minute,
			Trust:          trust.Untrusted,
		}},
	}
	before := status("VmHWM")
	begin := time.Now()
	m := session.New(cfg, session.Options{})
	defer m.Close()
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		return err
	}
	snap := m.Snapshot()
	took := time.Since(begin)
	sv, _ := snap.Server("many")
	if sv.Status != model.StatusReady {
		return fmt.Errorf("server %v: %v", sv.Status, sv.Err)
	}
	big, _ := snap.Tool("many", "t0")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("tools listed:      %d (first description %d bytes)\n", len(snap.Tools), len(big.Description))
	fmt.Printf("hazards:           %d\n", len(snap.Hazards))
	fmt.Printf("time to snapshot:  %v\n", took.Round(time.Millisecond))
	fmt.Printf("VmHWM before:      %s\n", before)
	fmt.Printf("VmHWM (peak RSS):  %s\n", status("VmHWM"))
	fmt.Printf("VmRSS now:         %s\n", status("VmRSS"))
	fmt.Printf("Go heap in use:    %d MiB (total allocated %d MiB, %d GCs)\n", ms.HeapInuse>>20, ms.TotalAlloc>>20, ms.NumGC)
	return nil
}

// status returns one field of /proc/self/status, such as "123456 kB".
func status(field string) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// serve answers initialize and tools/list over stdio: n tools in pages of 1,000, the
// first with a description of desc bytes.
func serve(n, desc int) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		switch req.Method {
		case "initialize":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"manytools","version":"1"}}}`+"\n", req.ID)
		case "tools/list":
			first, _ := strconv.Atoi(req.Params.Cursor)
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[`, req.ID)
			last := min(n, first+1000)
			for i := first; i < last; i++ {
				if i > first {
					out.WriteByte(',')
				}
				d := "Tool number " + strconv.Itoa(i) + "."
				if i == 0 {
					d = strings.Repeat("x", desc)
				}
				fmt.Fprintf(out, `{"name":"t%d","description":%q,"inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}`, i, d)
			}
			out.WriteString("]")
			if last < n {
				fmt.Fprintf(out, `,"nextCursor":"%d"`, last)
			}
			out.WriteString("}}\n")
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", req.ID)
		}
		out.Flush()
	}
}
