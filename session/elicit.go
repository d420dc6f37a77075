package session

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/airlock-mcp/airlock/internal/model"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session/config"
)

// elicitations holds the elicitations that wait for the person.
type elicitations struct {
	mu      sync.Mutex
	seq     uint64
	waiting map[uint64]chan *mcp.ElicitResult
	// during holds, for each question still waiting for the person (answered in the
	// TUI or by an Asker), the calls that were in flight to its server when it
	// asked (QuestionWaiting).
	during map[*[]string]bool
}

// asking records that a question asked while inFlight waits; the returned func
// says it no longer does.
func (e *elicitations) asking(inFlight []string) func() {
	k := &inFlight
	e.mu.Lock()
	if e.during == nil {
		e.during = map[*[]string]bool{}
	}
	e.during[k] = true
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		delete(e.during, k)
		e.mu.Unlock()
	}
}

// QuestionWaiting reports whether a server's question (an elicitation) waits for
// the person while the call callID was in flight to that server: the call cannot
// end before the person answers it. The gateway tells an agent so, as it does while
// the call waits for approval.
func (m *Manager) QuestionWaiting(callID string) bool {
	if callID == "" {
		return false
	}
	m.elicit.mu.Lock()
	defer m.elicit.mu.Unlock()
	for k := range m.elicit.during {
		for _, id := range *k {
			if id == callID {
				return true
			}
		}
	}
	return false
}

// ErrNoElicitation is returned when answering an elicitation that no longer waits.
var ErrNoElicitation = errors.New("that request no longer waits for an answer")

func (m *Manager) elicitationHandler(server string) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		p := req.Params
		schema, _ := json.Marshal(p.RequestedSchema)
		var decoded any
		_ = json.Unmarshal(schema, &decoded)
		if usesRef(decoded) {
			// go-sdk validates an accepted answer against this schema with
			// jsonschema-go, which recurses without end on a $ref cycle: the stack
			// Overflow would end airlock (hostile case 28). Elicitation schemas are flat
			// objects of primitive fields and need no references, so refuse unseen.
			m.events.push(model.LogLine{Server: server, Source: "airlock", Text: "refused an elicitation: its requested schema uses $ref, which airlock does not accept"})
			return nil, errors.New("airlock refuses elicitation schemas that use $ref, $dynamicRef or $recursiveRef")
		}
		inFlight := m.inFlight(server)
		if len(inFlight) == 0 && !m.elicitAnytime(server) {
			// A server may ask the person only while a call to it is in flight
			// (SEP-2260: server requests belong to a client request). Otherwise its
			// question would land on whatever the person is typing into.
			m.events.push(model.LogLine{Server: server, Source: "airlock", Text: "declined an elicitation: no call to this server was in flight (set elicitation = \"anytime\" in [servers." + server + "] to allow it)"})
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		mode := p.Mode
		if mode == "" {
			mode = "form"
		}
		defer m.elicit.asking(inFlight)()
		if m.opts.Asker != nil {
			action, content, err := m.opts.Asker.Elicit(ctx, &model.Elicitation{
				Server: server, Mode: mode, Message: p.Message, Schema: schema, URL: p.URL,
				CallID: firstOf(inFlight), InFlight: inFlight,
			})
			if err != nil {
				return nil, err
			}
			if action != "accept" {
				content = nil
			}
			return &mcp.ElicitResult{Action: action, Content: content}, nil
		}
		m.elicit.mu.Lock()
		if m.elicit.waiting == nil {
			m.elicit.waiting = map[uint64]chan *mcp.ElicitResult{}
		}
		m.elicit.seq++
		id := m.elicit.seq
		ch := make(chan *mcp.ElicitResult, 1)
		m.elicit.waiting[id] = ch
		m.elicit.mu.Unlock()
		defer func() {
			m.elicit.mu.Lock()
			delete(m.elicit.waiting, id)
			m.elicit.mu.Unlock()
			m.events.push(model.ElicitationClosed{ID: id})
		}()
		m.events.push(model.ElicitationRequested{Elicitation: &model.Elicitation{
			ID: id, Server: server, Mode: mode, Message: p.Message, Schema: schema, URL: p.URL,
			CallID: firstOf(inFlight), InFlight: inFlight,
		}})
		select {
		case res := <-ch:
			return res, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-m.ctx.Done():
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
	}
}

// AnswerElicitation answers a waiting elicitation: action is "accept" (with content
// matching the requested schema), "decline" or "cancel".
func (m *Manager) AnswerElicitation(id uint64, action string, content map[string]any) error {
	m.elicit.mu.Lock()
	ch, ok := m.elicit.waiting[id]
	delete(m.elicit.waiting, id)
	m.elicit.mu.Unlock()
	if !ok {
		return ErrNoElicitation
	}
	if action != "accept" {
		content = nil
	}
	ch <- &mcp.ElicitResult{Action: action, Content: content}
	return nil
}

// usesRef reports whether a decoded JSON schema holds a reference keyword at any depth.
// go-sdk has already bounded the message's nesting, so the walk is bounded too.
func usesRef(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "$ref" || k == "$dynamicRef" || k == "$recursiveRef" || usesRef(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if usesRef(x) {
				return true
			}
		}
	}
	return false
}

func firstOf(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// elicitAnytime reports whether a server's config lets it elicit between calls.
func (m *Manager) elicitAnytime(server string) bool {
	s, ok := m.servers[server]
	return ok && s.cfg.Elicitation == config.ElicitAnytime
}
