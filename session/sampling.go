//lint:file-ignore SA1019 sampling and roots are deprecated by the 2026-07-28 spec (SEP-2577); airlock supports them so today's servers can be explored

package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/airlock-mcp/airlock/internal/model"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
