package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/trust"
)

// PersonContext is the context of the person's own calls.
const PersonContext = "you"

// Answer is a person's answer to a pending call. The zero value is Deny, so an answer
// that was never given can never mean yes.
type Answer int

// The answers.
const (
	Deny Answer = iota
	AllowOnce
	AllowForContext
)

// String returns the answer as a phrase for logs and audit.
func (a Answer) String() string {
	switch a {
	case AllowOnce:
		return "allow once"
	case AllowForContext:
		return "allow this tool for this context"
	}
	return "deny"
}

// Response is an answer with the person's optional reason.
type Response struct {
	Answer Answer
	Reason string
}

// Approver answers calls that ask. Approve blocks until the person answers or ctx
// ends; the engine treats an error or an ended ctx as a denial.
type Approver interface {
	Approve(ctx context.Context, p *Pending) (Response, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, p *Pending) (Response, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, p *Pending) (Response, error) { return f(ctx, p) }

// Pending is a call that waits for a person. Everything in it is what the dialog shows;
// Args are the exact bytes that will be forwarded if allowed.
type Pending struct {
	ID      uint64
	CallID  string
	Request CallRequest
	Tool    ToolInfo
	// Verdict is why the engine asks (policy or taint) with its reasons.
	Verdict    trust.Verdict
	Taint      trust.Taint
	ArgsSHA256 string
	Created    time.Time
	// Deadline is when the call is denied if nobody answers.
	Deadline time.Time
}

// Engine decides every call: allow, deny, or ask a person. It keeps, per context, the
// tools the person allowed for the context and the taint. One Engine serves the
// person's own calls and every agent session. Engine is safe for concurrent use.
type Engine struct {
	approver Approver
	queue    *approvalQueue // nil when an external Approver is used
	timeout  time.Duration
	now      func() time.Time

	mu       sync.Mutex
	grants   map[string]map[trust.Ref]bool
	taints   map[string]trust.Taint
	seq      uint64
	watchers map[string]*progressWatch // by progress token
}

// progressWatch is one running call's progress token: whose it is, and where its
// progress goes.
type progressWatch struct {
	server string
	ctx    string
	ref    trust.Ref
	callID string
	taints bool // the tool's text is untrusted content: a forwarded message taints
	f      func(Progress)
}

func newEngine(a Approver, q *approvalQueue, timeout time.Duration, now func() time.Time) *Engine {
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	return &Engine{
		approver: a,
		queue:    q,
		timeout:  timeout,
		now:      now,
		grants:   map[string]map[trust.Ref]bool{},
		taints:   map[string]trust.Taint{},
		watchers: map[string]*progressWatch{},
	}
}

func ctxKey(c string) string {
	if c == "" {
		return PersonContext
	}
	return c
}

// Decide returns what the engine would do with a call to tool in context ctxName now,
// before any person is asked.
func (e *Engine) Decide(ctxName string, tool ToolInfo) trust.Verdict {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := ctxKey(ctxName)
	return trust.Decide(tool.Class, e.grants[k][tool.Ref], e.taints[k])
}

// Taint returns the taint of a context (zero when clean).
func (e *Engine) Taint(ctxName string) trust.Taint {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.taints[ctxKey(ctxName)]
}

// EndContext forgets a context's grants and taint (an agent session ended). The
// person's context lasts as long as the engine.
func (e *Engine) EndContext(ctxName string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.grants, ctxKey(ctxName))
	delete(e.taints, ctxKey(ctxName))
}

// taint marks a context tainted; the first cause is kept and taint never decreases.
func (e *Engine) taint(ctxName string, t trust.Taint) {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := ctxKey(ctxName)
	if !e.taints[k].Tainted() {
		e.taints[k] = t
	}
}

func (e *Engine) grant(ctxName string, ref trust.Ref) {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := ctxKey(ctxName)
	if e.grants[k] == nil {
		e.grants[k] = map[trust.Ref]bool{}
	}
	e.grants[k][ref] = true
}

func (e *Engine) nextCallID() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	return callIDPrefix + strconv.FormatUint(e.seq, 10)
}

// ArgsSHA256 is the hex SHA-256 of the exact argument bytes.
func ArgsSHA256(args []byte) string {
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:])
}

// authorize decides a call and, when it asks, waits for the approver within the
// approval timeout. It returns the final verdict (Allow or Deny) and the person's
// reason for a denial.
func (e *Engine) authorize(ctx context.Context, callID string, req CallRequest, tool ToolInfo) (trust.Verdict, string, error) {
	v := e.Decide(req.Context, tool)
	if v.Action != trust.Ask {
		return v, "", nil
	}
	now := e.now()
	p := &Pending{
		CallID:     callID,
		Request:    req,
		Tool:       tool,
		Verdict:    v,
		Taint:      e.Taint(req.Context),
		ArgsSHA256: ArgsSHA256(req.Args),
		Created:    now,
		Deadline:   now.Add(e.timeout),
	}
	actx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	resp, err := e.approver.Approve(actx, p)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return trust.Verdict{Action: trust.Deny, By: trust.DecidedByUser, Reasons: []string{"the caller withdrew the call"}}, "", ctx.Err()
	case errors.Is(err, context.DeadlineExceeded) || actx.Err() == context.DeadlineExceeded:
		return trust.Verdict{Action: trust.Deny, By: trust.DecidedByTimeout, Reasons: []string{"nobody answered within " + e.timeout.String()}}, "", nil
	default:
		return trust.Verdict{Action: trust.Deny, By: trust.DecidedByUser, Reasons: []string{"approval failed: " + err.Error()}}, "", nil
	}
	switch resp.Answer {
	case AllowForContext:
		e.grant(req.Context, tool.Ref)
		return trust.Verdict{Action: trust.Allow, By: trust.DecidedByUser, Reasons: append(v.Reasons, "allowed for this context by the person")}, "", nil
	case AllowOnce:
		return trust.Verdict{Action: trust.Allow, By: trust.DecidedByUser, Reasons: append(v.Reasons, "allowed once by the person")}, "", nil
	}
	return trust.Verdict{Action: trust.Deny, By: trust.DecidedByUser, Reasons: append(v.Reasons, "denied by the person")}, resp.Reason, nil
}

// watchProgress registers a call about to be forwarded and returns its progress
// token: 128 random bits, so no other server (nor the agent) can guess it. The
// global call IDs (c1, c2, …) are never sent to a server.
func (e *Engine) watchProgress(callID string, req CallRequest, tool ToolInfo) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics first)
	token := "airlock-" + hex.EncodeToString(b[:])
	e.mu.Lock()
	defer e.mu.Unlock()
	e.watchers[token] = &progressWatch{
		server: req.Server, ctx: req.Context, ref: tool.Ref, callID: callID,
		taints: trust.Taints(tool.Class), f: req.OnProgress,
	}
	return token
}

func (e *Engine) unwatchProgress(token string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.watchers, token)
}

// progress routes a progress notification that server sent. It counts only when its
// token is that of a running call to that same server; otherwise it is dropped and
// progress returns false. A message from an untrusted-content tool taints the call's
// context before it is handed on, so that the context is tainted before the agent
// (or the person) can read it.
func (e *Engine) progress(server string, p *mcp.ProgressNotificationParams) bool {
	token, ok := p.ProgressToken.(string)
	if !ok {
		return false
	}
	e.mu.Lock()
	w := e.watchers[token]
	e.mu.Unlock()
	if w == nil || w.server != server {
		return false
	}
	if w.f == nil {
		return true // nobody reads it: nothing is forwarded, nothing taints
	}
	if w.taints && p.Message != "" {
		e.taint(w.ctx, trust.Taint{By: w.ref, CallID: w.callID, At: e.now(), Channel: trust.ChannelProgress})
	}
	w.f(Progress{CallID: w.callID, Server: server, Progress: p.Progress, Total: p.Total, Message: p.Message})
	return true
}

// Pending lists the calls that wait for a person, oldest first (empty when an
// external Approver answers).
func (e *Engine) Pending() []*Pending {
	if e.queue == nil {
		return nil
	}
	return e.queue.list()
}

// Answer answers a pending call by ID. It fails when the call no longer waits
// (answered, timed out or withdrawn).
func (e *Engine) Answer(id uint64, r Response) error {
	if e.queue == nil {
		return errors.New("approvals are answered elsewhere")
	}
	return e.queue.answer(id, r)
}

func (e *Engine) close() {
	if e.queue != nil {
		e.queue.close()
	}
}

// approvalQueue is the built-in Approver: pending calls wait on it until the person
// answers through Engine.Answer.
type approvalQueue struct {
	events *queue
	mu     sync.Mutex
	seq    uint64
	items  []*queued
	closed bool
}

type queued struct {
	p  *Pending
	ch chan Response
}

func newApprovalQueue(events *queue) *approvalQueue { return &approvalQueue{events: events} }

// ErrApprovalClosed is returned when the session closes while a call waits.
var ErrApprovalClosed = errors.New("airlock is closing")

func (q *approvalQueue) Approve(ctx context.Context, p *Pending) (Response, error) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return Response{}, ErrApprovalClosed
	}
	q.seq++
	p.ID = q.seq
	it := &queued{p: p, ch: make(chan Response, 1)}
	q.items = append(q.items, it)
	q.mu.Unlock()
	q.events.push(ApprovalRequested{Pending: p})

	select {
	case r, ok := <-it.ch:
		if !ok {
			return Response{}, ErrApprovalClosed
		}
		q.events.push(ApprovalClosed{ID: p.ID, Outcome: r.Answer.String()})
		return r, nil
	case <-ctx.Done():
		outcome := "withdrawn by the caller"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			outcome = "timed out"
		}
		q.remove(p.ID)
		q.events.push(ApprovalClosed{ID: p.ID, Outcome: outcome})
		return Response{}, ctx.Err()
	}
}

func (q *approvalQueue) remove(id uint64) *queued {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, it := range q.items {
		if it.p.ID == id {
			q.items = append(q.items[:i:i], q.items[i+1:]...)
			return it
		}
	}
	return nil
}

func (q *approvalQueue) answer(id uint64, r Response) error {
	it := q.remove(id)
	if it == nil {
		return errors.New("that call no longer waits for an answer")
	}
	it.ch <- r
	return nil
}

func (q *approvalQueue) list() []*Pending {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]*Pending, len(q.items))
	for i, it := range q.items {
		out[i] = it.p
	}
	return out
}

func (q *approvalQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	for _, it := range q.items {
		close(it.ch)
	}
	q.items = nil
}
