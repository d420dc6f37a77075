package conn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// oldPage is how the capture reads a page on the old path (captureConn.Read).
func oldPage(result []byte) (*rawPage, error) {
	var p rawPage
	if err := json.Unmarshal(result, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// randomResponse writes a tools/list response as a hostile or sloppy server might:
// members in any order, extra and repeated members, escaped and case-variant keys,
// ids of every shape, items of every kind, white space anywhere JSON allows it.
func randomResponse(r *rand.Rand) []byte {
	ws := func() string { return []string{"", "", "", " ", "\t", "\r\n  "}[r.IntN(6)] }
	str := func() string {
		return []string{`"a"`, `"t\u0041"`, `"\"quoted\" \\ /"`, `"é ✓ \ud83d\ude00"`, `"\ud800 lone"`, "\"\xff bad utf8\"", `"{not [an object"`, `""`}[r.IntN(8)]
	}
	var value func(depth int) string
	value = func(depth int) string {
		switch n := r.IntN(10); {
		case n < 2 || depth > 3:
			return []string{`null`, `true`, `false`, `0`, `-1.5e+3`, `12345678901234567890`}[r.IntN(6)] + ""
		case n < 4:
			return str()
		case n < 7:
			var b strings.Builder
			b.WriteString("{" + ws())
			for i := range r.IntN(4) {
				if i > 0 {
					b.WriteString("," + ws())
				}
				b.WriteString(str() + ws() + ":" + ws() + value(depth+1) + ws())
			}
			b.WriteString("}")
			return b.String()
		default:
			var b strings.Builder
			b.WriteString("[" + ws())
			for i := range r.IntN(4) {
				if i > 0 {
					b.WriteString("," + ws())
				}
				b.WriteString(value(depth+1) + ws())
			}
			b.WriteString("]")
			return b.String()
		}
	}
	tool := func() string {
		if r.IntN(8) == 0 {
			return value(1)
		}
		return fmt.Sprintf(`{"name":%s,%s"inputSchema":{"type":"object","properties":{"q":%s}}}`, str(), ws(), value(2))
	}
	tools := func() string {
		if r.IntN(12) == 0 {
			return value(0)
		}
		parts := make([]string, r.IntN(5))
		for i := range parts {
			parts[i] = ws() + tool() + ws()
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	var members []string
	add := func(k, v string) { members = append(members, ws()+k+ws()+":"+ws()+v+ws()) }
	add(`"tools"`, tools())
	if r.IntN(2) == 0 {
		add(`"nextCursor"`, []string{`"c2"`, `"c\u0032"`, `null`, `3`, "\"c\xfe\"", `"page 2 ✓"`}[r.IntN(6)])
	}
	for range r.IntN(3) {
		k := []string{`"_meta"`, `"Tools"`, `"TOOLS"`, `"nextcursor"`, `"t\u006fols"`, `"tools"`, `"nextCursor"`, `"other"`, `"toolſ"`, `"x"`}[r.IntN(10)]
		add(k, value(1))
	}
	r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	result := "{" + strings.Join(members, ",") + "}"
	if r.IntN(15) == 0 {
		result = value(0)
	}
	id := []string{"1", "7", "42", "0", "-3", "1.0", "1e1", `"7"`, "null", "123456789012345678901"}[r.IntN(10)]
	var env []string
	envAdd := func(k, v string) { env = append(env, ws()+k+ws()+":"+ws()+v+ws()) }
	envAdd(`"jsonrpc"`, []string{`"2.0"`, `"2.0"`, `"2.0"`, `"1.0"`}[r.IntN(4)])
	envAdd(`"id"`, id)
	envAdd(`"result"`, result)
	switch r.IntN(10) {
	case 0:
		envAdd(`"id"`, "9")
	case 1:
		envAdd(`"error"`, `{"code":-32603,"message":"x"}`)
	case 2:
		envAdd(`"ID"`, "8")
	case 3:
		envAdd(`"resul\u0074"`, `{"tools":[]}`)
	}
	r.Shuffle(len(env), func(i, j int) { env[i], env[j] = env[j], env[i] })
	return []byte("{" + strings.Join(env, ",") + "}")
}

// TestSplitListResponse_SameAsGoSDKAndTheOldCapture: whenever the fast path takes a
// response, go-sdk would have read it as a response to the same id with no error, and
// the old capture (encoding/json) keeps the same page, item for item and byte for byte.
func TestSplitListResponse_SameAsGoSDKAndTheOldCapture(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	taken, valid := 0, 0
	for i := range 30000 {
		msg := randomResponse(r)
		if !json.Valid(msg) {
			continue
		}
		valid++
		id, page, ok := splitListResponse(msg)
		if !ok {
			continue
		}
		taken++
		m, err := jsonrpc.DecodeMessage(msg)
		if err != nil {
			t.Fatalf("case %d: taken, but go-sdk does not read it: %v\n%s", i, err, msg)
		}
		resp, isResp := m.(*jsonrpc.Response)
		if !isResp || resp.Error != nil || idKey(resp.ID) != string(id) {
			t.Fatalf("case %d: taken as a response to %s, go-sdk reads %#v\n%s", i, id, m, msg)
		}
		want, err := oldPage(resp.Result)
		if err != nil {
			t.Fatalf("case %d: taken, but the old capture fails: %v\n%s", i, err, msg)
		}
		if !reflect.DeepEqual(page, want) {
			t.Fatalf("case %d: fast page %q / %q, old page %q / %q\n%s", i, page.Tools, page.NextCursor, want.Tools, want.NextCursor, msg)
		}
	}
	t.Logf("%d valid responses, %d taken by the fast path", valid, taken)
	if taken < valid/20 {
		t.Fatalf("only %d of %d responses took the fast path: the comparison says little", taken, valid)
	}
}

// FuzzSplitListResponse: the same comparison on fuzzed bytes.
func FuzzSplitListResponse(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		f.Add(randomResponse(r))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		if !json.Valid(msg) || len(msg) == 0 || msg[0] != '{' {
			return
		}
		id, page, ok := splitListResponse(msg)
		if !ok {
			return
		}
		m, err := jsonrpc.DecodeMessage(msg)
		if err != nil {
			t.Fatalf("taken, but go-sdk does not read it: %v", err)
		}
		resp, isResp := m.(*jsonrpc.Response)
		if !isResp || resp.Error != nil || idKey(resp.ID) != string(id) {
			t.Fatalf("taken as a response to %s, go-sdk reads %#v", id, m)
		}
		want, err := oldPage(resp.Result)
		if err != nil || !reflect.DeepEqual(page, want) {
			t.Fatalf("fast page %q / %q, old page %+v (%v)", page.Tools, page.NextCursor, want, err)
		}
	})
}

// pipeServer is a stdio server's stdout as airlock reads it: an OS pipe, read through
// a pageReader feeding a capture, by go-sdk's own stdio connection.
type pipeServer struct {
	w    *os.File
	conn mcp.Connection
	capt *Capture
}

func newPipeServer(t *testing.T) *pipeServer {
	t.Helper()
	rd, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	capt := newCapture()
	pr := newPageReader(rd, capt, MaxMessageBytes)
	conn, err := (&mcp.IOTransport{Reader: pr, Writer: newStdinPipe(io.Discard), MaxLineLength: MaxMessageBytes}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(); conn.Close() })
	return &pipeServer{w: w, conn: conn, capt: capt}
}

// ask notes a tools/list request with id as sent.
func (s *pipeServer) ask(t *testing.T, id int64) {
	t.Helper()
	s.capt.sent(listRequest(t, id))
}

// next reads the next message go-sdk gets, within 5 s.
func (s *pipeServer) next(t *testing.T) jsonrpc.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := s.conn.Read(ctx)
	if err != nil {
		t.Fatalf("go-sdk's reader: %v", err)
	}
	return m
}

// TestPageReader_SplitsThePageGoSDKGetsItEmpty: on a real pipe, a listing's response
// is split by the reader: the capture holds the page (items byte for byte, the
// cursor), go-sdk gets the response to the same id with an empty tools list, and the
// messages around it reach go-sdk unchanged.
func TestPageReader_SplitsThePageGoSDKGetsItEmpty(t *testing.T) {
	s := newPipeServer(t)
	s.ask(t, 3)
	page := `{"nextCursor":"c2","tools":[ {"name":"a","inputSchema":{"type":"object"}} ,"not a tool",{"name":"b\u00e9","description":"x\ny","inputSchema":{}}]}`
	go fmt.Fprintf(s.w, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n"+
		"{\"result\":%s,\"jsonrpc\":\"2.0\",\"id\":3}\r\n"+
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\n", page)
	if n, ok := s.next(t).(*jsonrpc.Request); !ok || n.Method != "notifications/message" {
		t.Fatalf("first message %#v, want the notification", n)
	}
	resp, ok := s.next(t).(*jsonrpc.Response)
	if !ok || idKey(resp.ID) != "3" || string(resp.Result) != `{"tools":[]}` {
		t.Fatalf("go-sdk got %#v, want the response to 3 with an empty list", resp)
	}
	got, err := s.capt.take()
	want, _ := oldPage([]byte(page))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("capture kept %+v (%v), want %+v", got, err, want)
	}
	if resp, ok := s.next(t).(*jsonrpc.Response); !ok || idKey(resp.ID) != "4" || string(resp.Result) != `{}` {
		t.Fatalf("the next response reached go-sdk as %#v", resp)
	}
	if s.capt.early != 1 {
		t.Fatalf("%d pages split by the reader, want 1", s.capt.early)
	}
}

// TestPageReader_LineWithoutNewlineIsNotKeptWaiting: a server that ends its response
// without a newline (go-sdk's reader accepts it when nothing follows) is not left
// waiting: after holdWait the bytes go on as they are, and the old path captures them.
func TestPageReader_LineWithoutNewlineIsNotKeptWaiting(t *testing.T) {
	s := newPipeServer(t)
	s.ask(t, 5)
	go fmt.Fprint(s.w, `{"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"a"}]}}`)
	start := time.Now()
	resp, ok := s.next(t).(*jsonrpc.Response)
	if !ok || idKey(resp.ID) != "5" || !strings.Contains(string(resp.Result), `"name":"a"`) {
		t.Fatalf("go-sdk got %#v, want the response unchanged", resp)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Fatalf("the response reached go-sdk after %v", waited)
	}
	if s.capt.early != 0 {
		t.Fatal("an unfinished line was split")
	}
}

// TestPageReader_PrettyPrintedMessagesTurnItOff: a server that writes its messages
// over several lines (go-sdk's reader accepts that) is read exactly as before: no line
// of a message is taken for a message of its own, even one that looks like a
// response to the request in flight.
func TestPageReader_PrettyPrintedMessagesTurnItOff(t *testing.T) {
	s := newPipeServer(t)
	s.ask(t, 6)
	go fmt.Fprint(s.w, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\n"+
		"{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"tools\":[{\"name\":\"decoy\"}]}}\n"+
		"}}\n"+
		"{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"tools\":[{\"name\":\"real\"}]}}\n")
	n, ok := s.next(t).(*jsonrpc.Request)
	if !ok || !strings.Contains(string(n.Params), `"decoy"`) {
		t.Fatalf("first message %#v, want the notification with its data unchanged", n)
	}
	resp, ok := s.next(t).(*jsonrpc.Response)
	if !ok || !strings.Contains(string(resp.Result), `"real"`) {
		t.Fatalf("go-sdk got %#v, want the real response unchanged", resp)
	}
	if got, _ := s.capt.take(); got != nil || s.capt.early != 0 {
		t.Fatalf("the reader captured %+v from a message's inner line", got)
	}
}

// TestPageReader_PassesEverythingElseByteForByte: with or without a listing in flight,
// what go-sdk's reader gets is the server's stream, byte for byte (the one response
// split here has no tools, so it too reads the same): random streams of valid,
// invalid, long and unfinished lines, written in uneven pieces.
func TestPageReader_PassesEverythingElseByteForByte(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	split := 0
	for round := range 200 {
		var stream bytes.Buffer
		for range r.IntN(8) {
			switch r.IntN(6) {
			case 0:
				stream.Write(randomResponse(r))
			case 1:
				stream.WriteString(`{"jsonrpc":"2.0","id":99,"result":{"tools":[]}}`)
			case 2:
				stream.WriteString(`{"jsonrpc":"2.0","method":"x"} trailing`)
			case 3:
				stream.WriteString("   ")
			case 4:
				stream.Write(bytes.Repeat([]byte("x"), r.IntN(200<<10)))
			default:
				stream.WriteString(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"` + strings.Repeat("n", r.IntN(100<<10)) + `"}]}}`)
			}
			stream.WriteString([]string{"\n", "\r\n", ""}[r.IntN(3)])
		}
		rd, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		capt := newCapture()
		if round%2 == 0 {
			capt.pending[`99`] = true // a listing in flight: its (empty) response is split
		}
		pr := newPageReader(rd, capt, 64<<10)
		var pieces [][]byte // written in uneven pieces
		for b := stream.Bytes(); len(b) > 0; {
			n := min(len(b), 1+r.IntN(100<<10))
			pieces, b = append(pieces, b[:n]), b[n:]
		}
		go func() {
			for _, p := range pieces {
				w.Write(p)
			}
			w.Close()
		}()
		got, err := io.ReadAll(pr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, stream.Bytes()) {
			t.Fatalf("round %d: go-sdk got %d bytes, the server sent %d:\n%.300q\n%.300q", round, len(got), stream.Len(), got, stream.Bytes())
		}
		split += capt.early
	}
	if split == 0 {
		t.Fatal("no response was split: the comparison says little")
	}
	t.Logf("%d responses split", split)
}

// TestPageReader_LineInsideAMessageIsNotALine: a message that began before the
// listing and spans lines (go-sdk's reader accepts that) may hold a line that looks
// like the response the listing waits for; it stays part of that message, byte for
// byte, and the real response, once the message has ended, is the one split.
func TestPageReader_LineInsideAMessageIsNotALine(t *testing.T) {
	rd, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	capt := newCapture()
	pr := newPageReader(rd, capt, MaxMessageBytes)
	begin := "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\n"
	if _, err := w.WriteString(begin); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(begin))
	if _, err := io.ReadFull(pr, got); err != nil || string(got) != begin {
		t.Fatalf("read %q (%v), want the message's first line", got, err)
	}
	capt.sent(listRequest(t, 2)) // the listing starts while go-sdk is inside that message
	decoy := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"EVIL"}]}}` + "\n"
	real := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"BENIGN"}]}}` + "\n"
	go func() {
		w.WriteString(decoy + "}}\n" + real)
		w.Close()
	}()
	rest, err := io.ReadAll(pr)
	if err != nil {
		t.Fatal(err)
	}
	want := decoy + "}}\n" + `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}` + "\n"
	if string(rest) != want {
		t.Fatalf("go-sdk got\n%q\nwant\n%q", rest, want)
	}
	if p, _ := capt.take(); p == nil || len(p.Tools) != 1 || !strings.Contains(string(p.Tools[0]), "BENIGN") {
		t.Fatalf("captured %+v, want the real response's page", p)
	}
}

// TestPageReader_LineOverTheLimitPassesAsItIs: a response longer than go-sdk reads is
// not split (go-sdk's own limit ends the connection, as before), even when the read
// that finds its newline took it past the limit.
func TestPageReader_LineOverTheLimitPassesAsItIs(t *testing.T) {
	rd, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	capt := newCapture()
	capt.sent(listRequest(t, 7))
	pr := newPageReader(rd, capt, 200)
	line := `{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"` + strings.Repeat("n", 300) + `"}]}}` + "\n"
	go func() {
		w.WriteString(line)
		w.Close()
	}()
	got, err := io.ReadAll(pr)
	if err != nil || string(got) != line {
		t.Fatalf("go-sdk got %d bytes (%v), want the %d-byte line unchanged", len(got), err, len(line))
	}
	if capt.early != 0 {
		t.Fatal("a line over the limit was split")
	}
}

// askedReader serves data in reads of at most what it is asked for, and records how
// much each read asked for.
type askedReader struct {
	data  []byte
	asked []int
}

func (a *askedReader) Read(p []byte) (int, error) {
	a.asked = append(a.asked, len(p))
	if len(a.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, a.data)
	a.data = a.data[n:]
	return n, nil
}

// deadlineAskedReader is an askedReader with read deadlines (they never expire: every
// read finds data), so that a pageReader holds lines and splits pages.
type deadlineAskedReader struct{ *askedReader }

func (deadlineAskedReader) SetReadDeadline(time.Time) error { return nil }

// TestPageReader_ReadBufferStartsSmallAndGrows: a server's stdout is read with a
// buffer that starts at pageReadMin and doubles, up to pageReadMax, each time a read
// fills it. A quiet server (its handshake and a short listing, about a kilobyte)
// costs a few KiB rather than 64 KiB from the first read (20 servers at once put
// 1.3 MB of fresh memory into the fan-out's start); a server that streams megabytes
// is still read in 64 KiB reads after a few. What is handed on is byte for byte
// what was read on the pass-through path; with a listing in flight, a page of 200
// tools (50 KiB, the first line, held while the buffer grows from 4 to 64 KiB under
// it) is split exactly and everything after it passes unchanged.
func TestPageReader_ReadBufferStartsSmallAndGrows(t *testing.T) {
	var before, after bytes.Buffer
	for i := range 20000 {
		fmt.Fprintf(&before, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"line %d\"}}\n", i)
	}
	after.Write(before.Bytes())
	var tools []string
	for i := range 200 {
		tools = append(tools, fmt.Sprintf(`{"name":"tool_%03d","description":"%s","inputSchema":{"type":"object"}}`, i, strings.Repeat("d", 180)))
	}
	page := `{"tools":[` + strings.Join(tools, ",") + `]}`
	response := `{"jsonrpc":"2.0","id":7,"result":` + page + "}\n"

	for _, listing := range []bool{false, true} {
		stream := before.String() + after.String()
		want := stream
		if listing {
			// First, so that the page is held from the first 4 KiB read on and the
			// buffer grows four times under the held line.
			stream = response + stream
			want = `{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}` + "\n" + want
		}
		asked := &askedReader{data: []byte(stream)}
		var src io.Reader = asked
		capt := newCapture()
		if listing {
			src = deadlineAskedReader{asked}
			capt.sent(listRequest(t, 7))
		}
		pr := newPageReader(src, capt, MaxMessageBytes)
		got, err := io.ReadAll(pr)
		if err != nil || string(got) != want {
			t.Fatalf("listing %v: handed on %d bytes (%v), want %d", listing, len(got), err, len(want))
		}
		if first := asked.asked[0]; first != pageReadMin {
			t.Errorf("listing %v: the first read asked for %d bytes, want %d", listing, first, pageReadMin)
		}
		if top := slices.Max(asked.asked); top != pageReadMax {
			t.Errorf("listing %v: the largest read asked for %d bytes, want %d after the buffer grew", listing, top, pageReadMax)
		}
		if n := len(asked.asked); n > len(stream)/pageReadMax+16 {
			t.Errorf("listing %v: %d reads for %d bytes: the buffer did not grow", listing, n, len(stream))
		}
		if !listing {
			continue
		}
		kept, err := capt.take()
		wantPage, _ := oldPage([]byte(page))
		if capt.early != 1 || err != nil || !reflect.DeepEqual(kept, wantPage) {
			n := 0
			if kept != nil {
				n = len(kept.Tools)
			}
			t.Fatalf("%d pages split by the reader; the capture kept %d tools (%v), want the page of %d byte for byte", capt.early, n, err, len(tools))
		}
	}
}
