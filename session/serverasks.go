//lint:file-ignore SA1019 sampling and roots are deprecated by the 2026-07-28 spec (SEP-2577); airlock supports them so today's servers can be explored

package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session/config"
)

// samplingDeclined is the JSON-RPC error code of a declined sampling request: the
// spec's example for a user who rejects sampling uses -1.
const samplingDeclined = -1

// samplingModel is the model name of a reply the person wrote.
const samplingModel = "airlock: written by a person"

// samplings holds the sampling requests that wait for the person.
type samplings struct {
	waiting  map[uint64]chan model.SamplingAnswer // guarded by Manager.elicit.mu
	byServer map[string]int                       // waiting requests per server; guarded by Manager.elicit.mu
}

// ErrNoSampling is returned when answering a sampling request that no longer waits.
var ErrNoSampling = errors.New("that sampling request no longer waits for an answer")

func declineSampling(msg string) error {
	return &jsonrpc.Error{Code: samplingDeclined, Message: msg}
}

func (m *Manager) samplingHandler(server string) func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	return func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		m.usedDeprecated(server, DeprecatedSampling)
		r, err := samplingRequest(req.Params)
		if err != nil {
			m.events.push(model.LogLine{Server: server, Source: "airlock", Text: "declined a sampling request unseen: " + err.Error()})
			return nil, declineSampling("airlock declined the sampling request: " + err.Error())
		}
		r.Server = server
		inFlight := m.inFlight(server)
		if len(inFlight) == 0 && !m.elicitAnytime(server) {
			m.events.push(model.LogLine{Server: server, Source: "airlock", Text: "declined a sampling request: no call to this server was in flight (set elicitation = \"anytime\" in [servers." + server + "] to allow it)"})
			return nil, declineSampling("airlock declined the sampling request: no call to this server was in flight")
		}
		r.CallID, r.InFlight = firstOf(inFlight), inFlight
		var ans model.SamplingAnswer
		if m.opts.Asker != nil {
			ans, err = m.opts.Asker.Sample(ctx, r)
			if err != nil {
				return nil, err
			}
		} else {
			ans, err = m.waitSampling(ctx, r)
			if errors.Is(err, errTooManySampling) {
				m.events.push(model.LogLine{Server: server, Source: "airlock", Text: "declined a sampling request unseen: " + err.Error()})
				return nil, declineSampling("airlock declined the sampling request: " + err.Error())
			}
			if err != nil {
				return nil, err
			}
		}
		if ans.Decline {
			return nil, declineSampling("the person declined the sampling request (airlock)")
		}
		return &mcp.CreateMessageWithToolsResult{
			Content:    []mcp.Content{&mcp.TextContent{Text: ans.Reply}},
			Model:      samplingModel,
			Role:       "assistant",
			StopReason: "endTurn",
		}, nil
	}
}

var errTooManySampling = fmt.Errorf("%d sampling requests of this server already wait for the person", model.MaxSamplingWaiting)

// waitSampling reports r as an event and waits for AnswerSampling.
func (m *Manager) waitSampling(ctx context.Context, r *model.SamplingRequest) (model.SamplingAnswer, error) {
	m.elicit.mu.Lock()
	if m.sampling.waiting == nil {
		m.sampling.waiting = map[uint64]chan model.SamplingAnswer{}
		m.sampling.byServer = map[string]int{}
	}
	if m.sampling.byServer[r.Server] >= model.MaxSamplingWaiting {
		m.elicit.mu.Unlock()
		return model.SamplingAnswer{}, errTooManySampling
	}
	m.sampling.byServer[r.Server]++
	m.elicit.seq++
	r.ID = m.elicit.seq
	ch := make(chan model.SamplingAnswer, 1)
	m.sampling.waiting[r.ID] = ch
	m.elicit.mu.Unlock()
	defer func() {
		m.elicit.mu.Lock()
		delete(m.sampling.waiting, r.ID)
		if m.sampling.byServer[r.Server]--; m.sampling.byServer[r.Server] == 0 {
			delete(m.sampling.byServer, r.Server)
		}
		m.elicit.mu.Unlock()
		m.events.push(model.SamplingClosed{ID: r.ID})
	}()
	m.events.push(model.SamplingRequested{Request: r})
	select {
	case a := <-ch:
		return a, nil
	case <-ctx.Done():
		return model.SamplingAnswer{}, ctx.Err()
	case <-m.ctx.Done():
		return model.SamplingAnswer{Decline: true}, nil
	}
}

// AnswerSampling answers a waiting sampling request: decline it, or reply with the
// text the person wrote.
func (m *Manager) AnswerSampling(id uint64, a model.SamplingAnswer) error {
	m.elicit.mu.Lock()
	ch, ok := m.sampling.waiting[id]
	delete(m.sampling.waiting, id)
	m.elicit.mu.Unlock()
	if !ok {
		return ErrNoSampling
	}
	ch <- a
	return nil
}

// samplingRequest keeps what a person needs to see of p, or says which bound p
// exceeds. Image and audio data are counted, not kept.
func samplingRequest(p *mcp.CreateMessageWithToolsParams) (*model.SamplingRequest, error) {
	if p == nil {
		return nil, errors.New("no parameters")
	}
	if n := len(p.Messages); n > model.MaxSamplingMessages {
		return nil, fmt.Errorf("it has %d messages, more than the %d airlock shows a person", n, model.MaxSamplingMessages)
	}
	r := &model.SamplingRequest{
		SystemPrompt:   p.SystemPrompt,
		IncludeContext: p.IncludeContext,
		MaxTokens:      p.MaxTokens,
		Temperature:    p.Temperature,
		StopSequences:  p.StopSequences,
	}
	text := len(p.SystemPrompt)
	for _, s := range p.StopSequences {
		text += len(s)
	}
	if mp := p.ModelPreferences; mp != nil {
		r.CostPriority, r.SpeedPriority, r.IntelligencePriority = mp.CostPriority, mp.SpeedPriority, mp.IntelligencePriority
		for _, h := range mp.Hints {
			if h != nil {
				r.ModelHints = append(r.ModelHints, h.Name)
				text += len(h.Name)
			}
		}
	}
	if p.Metadata != nil {
		if b, err := json.Marshal(p.Metadata); err == nil {
			r.Metadata = string(b)
			text += len(b)
		}
	}
	for _, t := range p.Tools {
		if t == nil {
			continue
		}
		r.Tools = append(r.Tools, model.SamplingTool{Name: t.Name, Description: t.Description})
		text += len(t.Name) + len(t.Description)
	}
	if p.ToolChoice != nil {
		r.ToolChoice = p.ToolChoice.Mode
	}
	r.Messages = make([]model.SamplingMessage, 0, len(p.Messages))
	for _, msg := range p.Messages {
		if msg == nil {
			continue
		}
		sm := model.SamplingMessage{Role: string(msg.Role)}
		for _, c := range msg.Content {
			part := samplingPart(c)
			text += len(part.Text)
			if text > model.MaxSamplingText {
				return nil, fmt.Errorf("its text is more than the %d KiB airlock shows a person", model.MaxSamplingText>>10)
			}
			sm.Parts = append(sm.Parts, part)
		}
		r.Messages = append(r.Messages, sm)
	}
	if text > model.MaxSamplingText {
		return nil, fmt.Errorf("its text is more than the %d KiB airlock shows a person", model.MaxSamplingText>>10)
	}
	return r, nil
}

func samplingPart(c mcp.Content) model.SamplingPart {
	switch c := c.(type) {
	case *mcp.TextContent:
		return model.SamplingPart{Kind: "text", Text: c.Text}
	case *mcp.ImageContent:
		return model.SamplingPart{Kind: "image", MIME: c.MIMEType, Size: len(c.Data)}
	case *mcp.AudioContent:
		return model.SamplingPart{Kind: "audio", MIME: c.MIMEType, Size: len(c.Data)}
	case *mcp.ToolUseContent:
		in, _ := json.Marshal(c.Input)
		return model.SamplingPart{Kind: "tool_use", Text: c.Name + " " + string(in)}
	case *mcp.ToolResultContent:
		var texts []string
		for _, x := range c.Content {
			if t, ok := x.(*mcp.TextContent); ok {
				texts = append(texts, t.Text)
			} else if x != nil {
				b, _ := json.Marshal(x)
				texts = append(texts, string(b))
			}
		}
		return model.SamplingPart{Kind: "tool_result", Text: strings.Join(texts, "\n")}
	case nil:
		return model.SamplingPart{Kind: "empty"}
	default:
		b, _ := json.Marshal(c)
		var typed struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(b, &typed)
		kind := typed.Type
		if kind == "" {
			kind = "unknown"
		}
		return model.SamplingPart{Kind: kind, Text: string(b)}
	}
}

// The deprecated features a server may use (SEP-2577, 2026-07-28 spec): recorded per
// server in ServerInfo.Deprecated.
const (
	DeprecatedSampling = "sampling"
	DeprecatedRoots    = "roots"
	DeprecatedLogging  = "logging"
)

// usedDeprecated records that server used a deprecated feature; the first use of
// each is published in the next snapshot.
func (m *Manager) usedDeprecated(server, feature string) {
	s, ok := m.servers[server]
	if !ok {
		return
	}
	s.mu.Lock()
	known := slices.Contains(s.deprecated, feature)
	if !known {
		// A new slice: a snapshot may hold the old one.
		d := append(slices.Clone(s.deprecated), feature)
		sort.Strings(d)
		s.deprecated = d
		s.infoVer++
	}
	s.mu.Unlock()
	if !known {
		m.dropSnapshot()
		m.notify()
	}
}

// rootURI is the file:// URI of an absolute path: file:///home/a/b, file:///C:/x on
// Windows; characters a URI path cannot hold are percent-encoded.
func rootURI(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// rootURIs are the URIs of paths; nil stays nil (no roots declared).
func rootURIs(paths []string) []string {
	if paths == nil {
		return nil
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, rootURI(p))
	}
	return out
}

// rootList is what roots/list answers for uris: each named by its last element.
func rootList(uris []string) []*mcp.Root {
	out := make([]*mcp.Root, 0, len(uris))
	for _, u := range uris {
		name := u
		if pu, err := url.Parse(u); err == nil {
			name = pathBase(pu.Path)
		}
		out = append(out, &mcp.Root{URI: u, Name: name})
	}
	return out
}

func pathBase(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	if p == "" {
		return "/"
	}
	return p
}

// SetRoots replaces the roots airlock answers server's roots/list with (entries as
// in the config's roots: absolute paths, ~/path or file:// URIs that exist; home
// expands ~). It is the change a live config edit makes: a connection that declared
// roots is sent notifications/roots/list_changed at once; a connection that did not
// (the server had no roots when it connected) is reconnected to declare them, since a
// capability cannot be added to a running session. nil withdraws every root (the
// capability stays declared until the next connection).
func (m *Manager) SetRoots(server string, entries []string, home string) error {
	if _, ok := m.servers[server]; !ok {
		return fmt.Errorf("no server %q", server)
	}
	var paths []string
	if entries != nil {
		paths = []string{}
		for i, e := range entries {
			p, err := config.ParseRoot(e, home)
			if err != nil {
				return fmt.Errorf("servers.%s.roots[%d]: %w", server, i, err)
			}
			if slices.Contains(paths, p) {
				return fmt.Errorf("servers.%s.roots[%d]: %s is listed twice", server, i, p)
			}
			paths = append(paths, p)
		}
	}
	return m.editRoots(server, func([]string) ([]string, error) { return rootURIs(paths), nil })
}

// AddRoot adds a root to server's roots for this session (the config is not
// changed): entry as in the config's roots, or a path relative to the working
// directory, made absolute and cleaned; a symbolic link is kept as written, not
// resolved. It must exist and not be a root already. The server is told as SetRoots
// tells it (reconnected when it connected without roots). It returns the path added
// and its file:// URI, as ServerInfo.Roots has it.
func (m *Manager) AddRoot(server, entry string) (path, uri string, err error) {
	e := strings.TrimSpace(entry)
	lower := strings.ToLower(e)
	if e != "" && !strings.HasPrefix(lower, "file:") && e != "~" && !strings.HasPrefix(e, "~/") && !(runtime.GOOS == "windows" && strings.HasPrefix(e, `~\`)) && !filepath.IsAbs(e) {
		abs, err := filepath.Abs(e)
		if err != nil {
			return "", "", err
		}
		e = abs
	}
	home, _ := config.HomeFor(runtime.GOOS, os.LookupEnv)
	p, err := config.ParseRoot(e, home)
	if err != nil {
		return "", "", err
	}
	uri = rootURI(p)
	err = m.editRoots(server, func(old []string) ([]string, error) {
		if slices.Contains(old, uri) {
			return nil, fmt.Errorf("%s is a root already", p)
		}
		return append(slices.Clone(old), uri), nil
	})
	return p, uri, err
}

// RemoveRoot takes the root uri (a file:// URI as ServerInfo.Roots has it) from
// server's roots for this session; a folder gone since is removed all the same. The
// last root removed leaves an empty list: the capability stays declared.
func (m *Manager) RemoveRoot(server, uri string) error {
	return m.editRoots(server, func(old []string) ([]string, error) {
		i := slices.Index(old, uri)
		if i < 0 {
			return nil, fmt.Errorf("%s is not a root of %s", uri, server)
		}
		return slices.Delete(slices.Clone(old), i, i+1), nil
	})
}

// editRoots replaces server's roots with what edit makes of them (under the
// server's lock) and tells the server: a connection that declared roots is sent
// notifications/roots/list_changed; one that did not is reconnected to declare them.
func (m *Manager) editRoots(server string, edit func(old []string) ([]string, error)) error {
	s, ok := m.servers[server]
	if !ok {
		return fmt.Errorf("no server %q", server)
	}
	s.mu.Lock()
	old := s.roots
	uris, err := edit(old)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	s.roots = uris
	s.infoVer++
	client, declared, connected := s.client, s.declaredRoots, s.cs != nil
	s.mu.Unlock()
	m.dropSnapshot()
	m.notify()
	if slices.Equal(old, uris) && (old == nil) == (uris == nil) {
		return nil
	}
	if !declared || client == nil {
		if connected && uris != nil {
			return m.Reconnect(server)
		}
		return nil
	}
	setRoots(client, old, uris)
	return nil
}

// clientCapabilities is what airlock declares to a server: sampling without tools or
// context (a reply is written by a person, who runs no tools and includes no
// context), elicitation (inferred by go-sdk from its handler), and roots only when
// the server has roots configured (roots not nil).
func clientCapabilities(roots []string) *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}
	if roots != nil {
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	}
	return caps
}

// setRoots changes client's roots from old to uris. go-sdk notifies connected
// servers once per change: once for the roots that went away (if any), once for the
// new list. Each notification is followed by the server's roots/list, which answers
// the final list.
func setRoots(client *mcp.Client, old, uris []string) {
	var gone []string
	for _, u := range old {
		if !slices.Contains(uris, u) {
			gone = append(gone, u)
		}
	}
	client.RemoveRoots(gone...)
	client.AddRoots(rootList(uris)...)
}

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

// errNoElicitation is returned when answering an elicitation that no longer waits.
var errNoElicitation = errors.New("that request no longer waits for an answer")

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
		return errNoElicitation
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
