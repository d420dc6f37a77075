package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/airlock-mcp/airlock/session/conn"
)

// historyOf wraps w so that the agent session's exchange is kept in its protocol
// history (Host.AgentHistories): body, the agent's request as read, before go-sdk
// runs it (a call waiting for a person is in the history while it waits), and every
// message of the answer, a JSON body or each event of an event stream, as it is
// written. A request that opens a session (no Mcp-Session-Id) starts the session's
// history when the answer's header names it, with the client name of its
// initialize and the context of its token, as the approval dialog names an agent.
func (g *Gateway) historyOf(w http.ResponseWriter, sid string, tok owner, body []byte) http.ResponseWriter {
	hw := &historyWriter{ResponseWriter: w}
	hists := g.m.AgentHistories()
	if hists == nil {
		return hw
	}
	if sid != "" {
		hw.h = hists.Of(sid)
		if hw.h != nil && len(body) > 0 {
			hw.h.Add(false, body)
		}
		return hw
	}
	hw.open = func(id string) *conn.History {
		h := hists.Open(id, initializeClient(body), AgentContext(tok.name))
		if len(body) > 0 {
			h.Add(false, body)
		}
		return h
	}
	return hw
}

// initializeClient is the client name an initialize request gives ("agent" when it
// gives none, as agentOf names it).
func initializeClient(body []byte) string {
	if len(body) == 0 {
		return "agent"
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return "agent"
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "initialize" {
		return "agent"
	}
	var p struct {
		ClientInfo struct {
			Name string `json:"name"`
		} `json:"clientInfo"`
	}
	if json.Unmarshal(req.Params, &p) != nil || p.ClientInfo.Name == "" {
		return "agent"
	}
	return p.ClientInfo.Name
}

// historyWriter tees an answer to an agent into the session's history.
type historyWriter struct {
	http.ResponseWriter
	h       *conn.History
	open    func(id string) *conn.History // the session's history, once its id is known
	tap     *conn.Tap
	started bool
}

func (w *historyWriter) start() {
	if w.started {
		return
	}
	w.started = true
	if w.h == nil && w.open != nil {
		if id := w.Header().Get("Mcp-Session-Id"); id != "" {
			w.h = w.open(id)
		}
	}
	if w.h != nil {
		w.tap = w.h.NewTap(w.Header().Get("Content-Type"))
	}
}

func (w *historyWriter) WriteHeader(code int) {
	w.start()
	w.ResponseWriter.WriteHeader(code)
}

func (w *historyWriter) Write(p []byte) (int, error) {
	w.start()
	n, err := w.ResponseWriter.Write(p)
	w.tap.Write(p[:n])
	return n, err
}

func (w *historyWriter) Flush() {
	w.start()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *historyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// done keeps a JSON answer's message once the answer is written.
func (w *historyWriter) done() { w.tap.Close() }
