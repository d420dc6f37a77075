package approval

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/internal/secrets"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-mcp/airlock/session/audit"
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

// Engine decides every call: allow, deny, or ask a person. It keeps, per context, the
// tools the person allowed for the context and the taint. One Engine serves the
// person's own calls and every agent session. Engine is safe for concurrent use.
type Engine struct {
	approver model.Approver
	queue    *approvalQueue // nil when an external model.Approver is used
	timeout  time.Duration
	now      func() time.Time
	limits   config.Limits
	// record writes an audit record of the engine's own (grants, revokes, taint
	// cleared); nil without an audit log.
	record func(audit.Record) error
	store  *taintStore // nil keeps taint in memory only
	// home expands "~" in path arguments for rules.
	home string
	// rules are the remembered decisions (rules.toml).
	rules *rulesStore

	mu       sync.Mutex
	grants   map[string]map[trust.Ref]*Grant
	taints   map[string]trust.Taint
	unsaved  map[string]trust.Taint // taints taint.json could not take yet
	clients  map[string]string      // the client name each agent context gave, as given
	seq      uint64
	watchers map[string]*progressWatch // by progress token
	waiting  map[string]int            // calls waiting for a person, per context
	waitSize int64                     // argument bytes of every waiting call
	// clearing counts, per context, the person's clears waiting for taint.json's
	// lock with the engine let go; sinceClear are the taints marked meanwhile, which
	// the clear keeps (they came after the person's answer, and nobody saw them).
	clearing   map[string]int
	sinceClear map[string]trust.Taint
	// rulesChanged is told which server's tool a remembered rule was saved or revoked
	// for in this process, so that the hazards are recomputed (nil: nobody).
	rulesChanged func(server string)
	// rulesOff are the rules the person turned off for this session (what-if), by
	// name; they decide no call.
	rulesOff map[string]trust.Ref
	// ruleHits counts, by rule name (a config key path or a rules.toml id), the
	// calls each rule matched in this process.
	ruleHits map[string]int

	// unreadable is why taint.json cannot be read now (nil: it can); while it is
	// set every context is treated as tainted (taintLocked).
	unreadable *unreadableStore
	// seen is when this process last decided a call of each tainted context
	// (touchLocked), so that pruning never takes a context in use.
	seen map[string]time.Time
	// ruleLast is when each rule of ruleHits last matched.
	ruleLast map[string]time.Time
	// known are the secrets known by their value (nil: none).
	known []secrets.Known
	// rates holds calls to the configured rate limits (nil: none is set).
	rates *rateBook
}

func (e *Engine) SetRulesOff(off map[string]trust.Ref) {
	e.mu.Lock()
	e.rulesOff = off
	e.mu.Unlock()
}

// RuleOff reports whether the rule named name is turned off for this session.
func (e *Engine) RuleOff(name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, off := e.rulesOff[name]
	return off
}

// withoutOff drops the rules turned off for this session from a tool's sets (a new
// set is compiled only while some rule of the tool is off).
func (e *Engine) withoutOff(sets []*trust.RuleSet, lists [][]trust.Rule) ([]*trust.RuleSet, [][]trust.Rule) {
	e.mu.Lock()
	off := e.rulesOff
	e.mu.Unlock()
	if len(off) == 0 {
		return sets, lists
	}
	for i, rules := range lists {
		if !slices.ContainsFunc(rules, func(r trust.Rule) bool { _, ok := off[r.Name]; return ok }) {
			continue
		}
		kept := slices.DeleteFunc(slices.Clone(rules), func(r trust.Rule) bool { _, ok := off[r.Name]; return ok })
		lists[i], sets[i] = kept, trust.NewRuleSet(kept)
	}
	return sets, lists
}

func (e *Engine) countRule(name string) {
	now := e.now()
	e.mu.Lock()
	if e.ruleHits == nil {
		e.ruleHits = map[string]int{}
		e.ruleLast = map[string]time.Time{}
	}
	e.ruleHits[name]++
	e.ruleLast[name] = now
	e.mu.Unlock()
}

// RuleLastMatch is when the rule named name last matched a call in this process
// (zero when it has not).
func (e *Engine) RuleLastMatch(name string) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ruleLast[name]
}

// RuleMatches is how many calls the rule named name (a config key path such as
// servers.web.tools.fetch_url.rules[0], or a remembered rule's id) matched in this
// process: once per call, whatever it then decided.
func (e *Engine) RuleMatches(name string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ruleHits[name]
}

// progressWatch is one running call's progress token: whose it is, and where its
// Progress goes.
type progressWatch struct {
	server string
	ctx    string
	ref    trust.Ref
	callID string
	taints bool // the tool's text is untrusted content: a forwarded message taints
	f      func(model.Progress)
}

// Options are what an [Engine] is made with; the zero value of each is said.
type Options struct {
	// Approver is asked every question; nil: the engine's own queue, answered
	// through [Engine.Answer], which tells Events of each question and its end.
	Approver model.Approver
	// Events is told of each question of the engine's own queue as it is asked
	// (model.ApprovalRequested) and as it ends (model.ApprovalClosed).
	Events func(model.Event)
	// Timeout bounds how long a question waits (zero or less: two minutes).
	Timeout time.Duration
	// Now is the engine's clock.
	Now func() time.Time
	// Limits are the [limits] calls are held to (zero: config.DefaultLimits).
	Limits config.Limits
	// LimitSources names, by [limits] key, the limits the managed policy set
	// (config.Config.LimitSources): a rate sentence names the policy's file and
	// line for calls_per_minute.
	LimitSources map[string]config.Source
	// RulesFile is rules.toml, the remembered rules ("": none are kept).
	RulesFile string
	// StateDir holds taint.json ("": taint is kept in memory only).
	StateDir string
	// Record writes an audit record of the engine's own (grants, revokes, taint
	// cleared); nil without an audit log.
	Record func(audit.Record) error
	// RulesChanged is told which server's tool a remembered rule was saved or
	// revoked for in this process (nil: nobody).
	RulesChanged func(server string)
	// Secrets are the secrets known by their value (the values of the environment
	// variables airlock passes to its servers): a call to a tool that can carry data
	// out whose arguments hold one asks, as one that holds a secret shape does (nil:
	// only shapes are looked for). The values never reach an error, an event or a
	// log: only the Known's name is ever shown.
	Secrets []secrets.Known
	// Servers are the configured servers, whose rates (Server.Rate and each
	// Tool.Rate) calls are held to, as they are to Limits.CallsPerMinute; the
	// counts are kept in StateDir's rates.json ("": in memory).
	Servers []config.Server
}

// New is an Engine made with o.
func New(o Options) *Engine {
	e := newEngine(o.Approver, nil, o.Timeout, o.Now)
	if o.Approver == nil {
		e.queue = newApprovalQueue(o.Events)
		e.approver = e.queue
	}
	if o.Limits != (config.Limits{}) {
		e.limits = o.Limits
	}
	e.rules = newRulesStore(o.RulesFile, e.home)
	e.rulesChanged = o.RulesChanged
	e.store = openTaintStore(o.StateDir)
	e.rates = newRateBook(o.Servers, e.limits, o.LimitSources, o.StateDir)
	e.record = o.Record
	e.known = o.Secrets
	return e
}

func newEngine(a model.Approver, q *approvalQueue, timeout time.Duration, now func() time.Time) *Engine {
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	return &Engine{
		approver: a,
		queue:    q,
		timeout:  timeout,
		now:      now,
		limits:   config.DefaultLimits(),
		home:     homeDir(),
		grants:   map[string]map[trust.Ref]*Grant{},
		taints:   map[string]trust.Taint{},
		watchers: map[string]*progressWatch{},
		waiting:  map[string]int{},
	}
}

// ContextKey is the context a call's Context names: "" is the person's own.
func ContextKey(c string) string {
	if c == "" {
		return model.PersonContext
	}
	return c
}

// Decide returns what the engine would do with a call to tool in context ctxName now,
// before any person is asked. A grant counts only while the tool is what it was
// granted for (see Grant); a grant that no longer binds is ended here, audited.
// While rules.toml cannot be read, a tool a remembered rule could decide asks, as in
// DecideCall.
func (e *Engine) Decide(ctxName string, tool model.ToolInfo) trust.Verdict {
	var unreadable error
	if e.rules != nil {
		e.rules.byToolNow() // looks at the file once, as a call would
		unreadable = e.rules.problemFor(tool.Ref)
	}
	k := ContextKey(ctxName)
	e.mu.Lock()
	e.loadTaintsLocked()
	granted, ended := e.grantForLocked(k, tool)
	if tool.Managed.Holds() {
		granted = false // no grant outranks the policy's hold
	}
	v := trust.Decide(tool.Class, granted, e.taintLocked(k))
	e.mu.Unlock()
	if unreadable != nil {
		v = askUnreadableRules(v, unreadable)
	}
	if ended != nil {
		e.audit(ended.record("grant-ended", ended.endReason, ended.endBy))
	}
	return v
}

// DecideCall is Decide for one call's canonical arguments: the tool's rules apply
// (trust.DecideRules). local says the server runs on this machine, so paths are
// also compared with their links resolved. rule is the rule that matched (nil: none).
func (e *Engine) DecideCall(ctxName string, tool model.ToolInfo, args []byte, local bool) (v trust.Verdict, rule *trust.Rule) {
	v, rule, _ = e.decideCall(ctxName, tool, args, local, true)
	return v, rule
}

// RecheckCall is DecideCall without looking for secrets again: the last look
// before a decided call is forwarded, at the same arguments and (ToolChanges
// holds it to that) the same tool, legs included, so the secrets found when it was
// decided are the ones there are, and a secret only ever makes a call ask, which
// the decision already did. The arguments are not read a second time (about 7 ms
// a MiB).
func (e *Engine) RecheckCall(ctxName string, tool model.ToolInfo, args []byte, local bool) (v trust.Verdict, rule *trust.Rule) {
	v, rule, _ = e.decideCall(ctxName, tool, args, local, false)
	return v, rule
}

// decideCall is DecideCall with the secrets found in the arguments (nil when the
// tool cannot carry data out, or none were found). A call that would run unasked
// and holds one asks (trust.DecidedBySecret), whatever the policy, a rule or a
// grant say; a denial stays a denial.
func (e *Engine) decideCall(ctxName string, tool model.ToolInfo, args []byte, local, scan bool) (v trust.Verdict, rule *trust.Rule, found []secrets.Finding) {
	sets, lists := []*trust.RuleSet{tool.RuleSet}, [][]trust.Rule{tool.Rules}
	if tool.RuleSet == nil && len(tool.Rules) > 0 { // a model.ToolInfo not built by a listing
		sets[0] = trust.NewRuleSet(tool.Rules)
	}
	var unreadable error
	if e.rules != nil {
		if set, saved := e.rules.forTool(tool.Ref); set != nil {
			sets, lists = append(sets, set), append(lists, saved)
		}
		unreadable = e.rules.problemFor(tool.Ref)
	}
	sets, lists = e.withoutOff(sets, lists)
	schema := tool.RuleSchema
	if schema == nil && slices.ContainsFunc(lists, func(l []trust.Rule) bool { return len(l) > 0 }) {
		schema = trust.ParseSchema(tool.InputSchema)
	}
	held := tool.Managed.Holds()
	var policyRule *trust.Rule
	var policyNotes []string
	if h := tool.Managed; h != nil && len(h.Rules) > 0 {
		// The policy's deny and ask rules are matched on their own, before the
		// person's: however specific, no rule of the person's outranks them, and
		// no live change turns them off.
		if schema == nil {
			schema = trust.ParseSchema(tool.InputSchema)
		}
		set := h.RuleSet
		if set == nil {
			set = trust.NewRuleSet(h.Rules)
		}
		policyRule, policyNotes = ruleFor([]*trust.RuleSet{set}, [][]trust.Rule{h.Rules}, args, e.home, local, schema)
		bare := tool
		bare.RuleSet = nil // the policy's rules are checked against the schema here
		if broken := brokenRule(bare, [][]trust.Rule{h.Rules}, schema); broken != nil && (policyRule == nil || policyRule.Policy != trust.Deny) {
			policyRule = broken
		}
	}
	rule, notes := ruleFor(sets, lists, args, e.home, local, schema)
	if broken := brokenRule(tool, lists, schema); broken != nil && (rule == nil || rule.Policy != trust.Deny) {
		// Fail closed: a rule that can never match asks for every call, unless a
		// deny rule that does match denies it.
		rule = broken
	}
	if policyRule != nil && (rule == nil || rule.Policy != trust.Deny || policyRule.Policy == trust.Deny) {
		rule, notes = policyRule, append(policyNotes, notes...)
		held = true
	}
	k := ContextKey(ctxName)
	e.mu.Lock()
	e.loadTaintsLocked()
	e.touchLocked(k)
	granted, ended := e.grantForLocked(k, tool)
	applied := rule
	heldWhy := ""
	switch {
	case rule != nil && rule.Source == RulesFile && rule.Policy == trust.Allow && tool.Class.Tier >= trust.TierDestructive:
		// A remembered "always allow" is refused for a destructive tool when it is
		// saved; a tool that became destructive since (a new definition accepted)
		// does not inherit it either: the destructive confirmation stays.
		applied = nil
		heldWhy = "remembered rule " + rule.Label() + " would have allowed this call, but a remembered decision never covers a destructive tool"
	case held && rule != nil && rule.Policy == trust.Allow:
		applied = nil
		heldWhy = "rule " + rule.Label() + " would have allowed this call, but " + tool.Managed.PolicyHeld()
	}
	if held && granted {
		granted = false
		if heldWhy == "" && tool.Managed.Holds() {
			heldWhy = "your grant for this context would have allowed this call, but " + tool.Managed.PolicyHeld()
		}
	}
	v = trust.DecideRules(tool.Class, granted, e.taintLocked(k), applied)
	if heldWhy != "" {
		v.Reasons = append(v.Reasons, heldWhy)
	}
	v.Reasons = withPathNotes(v, notes)
	e.mu.Unlock()
	if unreadable != nil {
		v = askUnreadableRules(v, unreadable)
	}
	if ended != nil {
		e.audit(ended.record("grant-ended", ended.endReason, ended.endBy))
	}
	if scan && v.Action != trust.Deny {
		if found = e.secretsIn(tool, args); len(found) > 0 {
			v = askForSecrets(v, found)
		}
	}
	return v, rule, found
}

// secretsIn finds the secrets in the arguments of a call to a tool that can carry
// data out (trust.LegExfiltration); any other tool's arguments are not read.
func (e *Engine) secretsIn(tool model.ToolInfo, args []byte) []secrets.Finding {
	if !tool.Class.Has(trust.LegExfiltration) {
		return nil
	}
	return secrets.Find(args, e.known)
}

// askForSecrets turns a verdict that allows into a question whose first reason
// names the secrets found; a verdict that already asks keeps the sentence that made
// it ask first (taint's, a rule's) and says the secrets next.
func askForSecrets(v trust.Verdict, found []secrets.Finding) trust.Verdict {
	why := secrets.Sentence(found)
	if v.Action == trust.Allow {
		return trust.Verdict{Action: trust.Ask, By: trust.DecidedBySecret, Reasons: slices.Insert(slices.Clone(v.Reasons), 0, why)}
	}
	at := 0
	if len(v.Reasons) > 0 && (v.By == trust.DecidedByTaint || v.By == trust.DecidedByRule) {
		at = 1
	}
	v.Reasons = slices.Insert(slices.Clone(v.Reasons), at, why)
	return v
}

// Taint returns the taint of a context (zero when clean).
func (e *Engine) Taint(ctxName string) trust.Taint {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.loadTaintsLocked()
	return e.taintLocked(ContextKey(ctxName))
}

// EndContext ends a context's grants (an agent session ended), audited. Its taint
// stays: the untrusted text lives in the agent's conversation, not in its session,
// and only the person clears it (ClearTaint).
func (e *Engine) EndContext(ctxName string) {
	e.mu.Lock()
	k := ContextKey(ctxName)
	gs := e.grants[k]
	delete(e.grants, k)
	e.mu.Unlock()
	for _, g := range sortedGrants(gs) {
		e.audit(g.record("grant-ended", "the context ended", trust.DecidedByPolicy))
	}
}

// MarkTainted marks a context tainted (the gateway, for what it forwarded from a
// source that taints); the first cause is kept and taint never decreases.
// With a state dir the taint is written to taint.json at once, so it survives a
// reconnect and a restart of airlock.
func (e *Engine) MarkTainted(ctxName string, t trust.Taint) {
	if !t.Tainted() {
		return // a taint that names no cause changes nothing
	}
	e.mu.Lock()
	e.loadTaintsLocked()
	k := ContextKey(ctxName)
	var pruned []audit.Record
	if e.clearing[k] > 0 {
		// The context's taint still counts until the waiting clear is written, so
		// nothing below records this one: the clear keeps it.
		if e.sinceClear == nil {
			e.sinceClear = map[string]trust.Taint{}
		}
		mergeTaint(e.sinceClear, k, t)
	}
	if !e.taints[k].Tainted() {
		pruned = e.addTaintLocked(k, t)
	}
	e.mu.Unlock()
	for _, r := range pruned {
		e.audit(r)
	}
}

// NewCallID returns a call ID no other call of this process had (what the audit
// log's records of one call share).
func (e *Engine) NewCallID() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	return callIDPrefix + strconv.FormatUint(e.seq, 10)
}

// Limits are the [limits] the engine holds calls to, defaults filled in.
func (e *Engine) Limits() config.Limits { return e.limits }

// Decision is how [Engine.Authorize] decided one call.
type Decision struct {
	Verdict trust.Verdict
	// Rule names the argument rule that decided ("NAME (SOURCE)"), "" when none did.
	Rule string
	// PersonReason is the person's own reason for a denial, if they gave one.
	PersonReason string
	// Matched is the name of the argument rule that matched the call (audited),
	// "" when none did.
	Matched string
	// Asked is true when a person (or an external approver) was asked; Shown is then
	// the taint the question showed, and AskedBecause the sentence that made it ask
	// (askedBecause), which every ending but the person's answer puts first.
	Asked        bool
	Shown        trust.Taint
	AskedBecause string
}

// Because is the reasons of a question's ending that no person decided (a timeout,
// a withdrawal, a change while it waited): why it asked, then how it ended, so the
// record never loses what made airlock ask.
func (d Decision) Because(ending string) []string {
	if d.AskedBecause == "" {
		return []string{ending}
	}
	return []string{d.AskedBecause, ending}
}

// maxSubjectShown bounds the resource URI or prompt name in askedBecause.
const maxSubjectShown = 256

// askedBecause is the sentence that made the call ask: the taint of its context, the
// rule that asks, the secrets in its arguments, or the policy (the last of the
// classification's reasons, c, is the policy's).
func askedBecause(v trust.Verdict, rule *trust.Rule, shown trust.Taint, c []string) string {
	switch {
	case v.By == trust.DecidedByTaint && shown.Tainted():
		ch := shown.Channel
		if ch == "" {
			ch = trust.ChannelResult
		}
		s := "asked because the context is tainted by " + shown.By.Qualified() + " (" + ch
		if subj := shown.Subject; subj != "" {
			cut := ""
			if len(subj) > maxSubjectShown {
				subj, cut = subj[:maxSubjectShown], "…" // a URI can be long; the record keeps its start
			}
			s += " " + strconv.Quote(subj) + cut
		}
		if shown.CallID != "" {
			s += ", call " + shown.CallID
		}
		return s + ")"
	case v.By == trust.DecidedByRule && rule != nil:
		return "asked because " + rule.Sentence()
	case v.By == trust.DecidedBySecret && len(v.Reasons) > 0:
		return "asked because " + v.Reasons[0]
	case v.By != trust.DecidedByTaint && len(c) > 0:
		return "asked because " + c[len(c)-1]
	case len(v.Reasons) > 0:
		return "asked because " + v.Reasons[0]
	}
	return "asked because the policy asks"
}

// Authorize decides a call and, when it asks, waits for the approver within the
// approval timeout. The verdict it returns is Allow or Deny, with the exact decider.
// err is the caller's ctx error when the caller withdrew the call (model.ErrAgentGone when
// its agent went away).
func (e *Engine) Authorize(ctx context.Context, callID string, req model.CallRequest, tool model.ToolInfo, local bool) (d Decision, err error) {
	v, rule, found := e.decideCall(req.Context, tool, req.Args, local, true)
	if rule != nil && !rule.Broken {
		// Counted here, once per call: the check just before forwarding decides
		// again, and that is not a second match.
		e.countRule(rule.Name)
		defer func() { d.Matched = rule.Name }()
	}
	k := ContextKey(req.Context)
	// Held here, once per call, as the rule is counted: recheck's DecideCall takes
	// no second slot.
	v, rated := e.holdToRates(k, tool, v)
	ruled := ""
	if rule != nil && v.By == trust.DecidedByRule {
		ruled = rule.Label()
	}
	if v.Action == trust.Deny {
		if v.By != trust.DecidedByRule {
			v.By = denier(tool)
		}
		return Decision{Verdict: v, Rule: ruled}, nil
	}
	if v.Action != trust.Ask {
		return Decision{Verdict: v, Rule: ruled}, nil
	}
	size := int64(len(req.Args))
	e.mu.Lock()
	switch {
	case e.waiting[k] >= e.limits.MaxWaitingPerContext:
		e.mu.Unlock()
		return Decision{Verdict: refused(fmt.Sprintf("%d calls of this context already wait for a person (the limit is %d); try again after they are answered", e.waiting[k], e.limits.MaxWaitingPerContext))}, nil
	case e.waitSize+size > e.limits.MaxWaitingBytes:
		e.mu.Unlock()
		return Decision{Verdict: refused(fmt.Sprintf("the calls that wait for a person already hold %d bytes of arguments and this one has %d (the limit is %d in all); try again after they are answered", e.waitSize, size, e.limits.MaxWaitingBytes))}, nil
	}
	e.waiting[k]++
	e.waitSize += size
	shown := e.taintLocked(k)
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.waiting[k]--
		if e.waiting[k] == 0 {
			delete(e.waiting, k)
		}
		e.waitSize -= size
		e.mu.Unlock()
	}()

	now := e.now()
	p := &model.Pending{
		CallID:      callID,
		Request:     req,
		Tool:        tool,
		Fingerprint: tool.Fingerprint,
		Tier:        tool.Class.Tier,
		Verdict:     v,
		Rule:        rule,
		Taint:       shown,
		Secrets:     secretFindings(found),
		ArgsSHA256:  trust.ArgsSHA256(req.Args),
		Created:     now,
		Deadline:    now.Add(e.timeout),
	}
	if len(found) > 0 {
		p.ArgsMasked = secrets.Mask(req.Args, e.known)
	}
	if heldCall(tool, rule) {
		p.Held = policyHeld(tool, rule)
	}
	d = Decision{Asked: true, Shown: shown, AskedBecause: askedBecause(v, rule, shown, tool.Class.Reasons)}
	if rated != nil && rated.why != "" {
		d.AskedBecause = "asked because " + rated.why
	}
	actx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	resp, err := e.approver.Approve(actx, p)
	var stale *staleError
	switch {
	case err == nil:
	case errors.As(err, &stale):
		d.Verdict = trust.Verdict{Action: trust.Deny, By: stale.by, Reasons: d.Because(stale.msg)}
		return d, nil
	case AgentGone(ctx):
		d.Verdict = trust.Verdict{Action: trust.Deny, By: trust.DecidedByAgentGone, Reasons: d.Because(GoneWhy(ctx) + " while the call waited for a person")}
		return d, model.ErrAgentGone
	case ctx.Err() != nil:
		why := "the caller withdrew the call while it waited for a person"
		var w *model.Withdrawal
		if errors.As(context.Cause(ctx), &w) {
			why = w.Why
		}
		d.Verdict = trust.Verdict{Action: trust.Deny, By: trust.DecidedByAgentCancelled, Reasons: d.Because(why)}
		return d, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded) || actx.Err() == context.DeadlineExceeded:
		d.Verdict = trust.Verdict{Action: trust.Deny, By: trust.DecidedByTimeout, Reasons: d.Because("nobody answered within " + e.timeout.String())}
		return d, nil
	default:
		d.Verdict = trust.Verdict{Action: trust.Deny, By: trust.DecidedByPolicy, Reasons: d.Because("asking a person failed, so the call is denied: " + err.Error())}
		return d, nil
	}
	by := answeredBy(v.By, resp.By)
	if heldCall(tool, rule) && (resp.Answer == model.AllowForContext || resp.Remember != nil && resp.Answer != model.Deny) {
		// The dialog never offers these for a call the policy holds; an answer
		// that asks for one allows nothing.
		d.Verdict = trust.Verdict{Action: trust.Deny, By: by, Reasons: append(v.Reasons, "the answer was to allow beyond this call, but "+policyHeld(tool, rule))}
		return d, nil
	}
	if resp.Remember != nil && (resp.Answer == model.Deny || resp.Answer == model.AllowOnce || resp.Answer == model.AllowForContext) {
		// Only a deliberate answer is remembered: an answer outside these three is
		// denied below and never saved as a rule.
		policy := trust.Deny
		if resp.Answer != model.Deny {
			policy = trust.Allow
		}
		if _, err := e.RememberRule(*resp.Remember, policy, tool, "the dialog, call "+callID+" in context "+k); err != nil {
			d.Verdict = trust.Verdict{Action: trust.Deny, By: by, Reasons: append(v.Reasons, "the rule could not be saved, so the call is denied: "+err.Error())}
			return d, nil
		}
	}
	switch resp.Answer {
	case model.AllowForContext:
		if tool.Class.Tier >= trust.TierDestructive {
			// The dialog never offers this; an answer that asks for it was not given
			// to the question a destructive call shows, so it allows nothing.
			d.Verdict = trust.Verdict{Action: trust.Deny, By: trust.DecidedByPolicy, Reasons: append(v.Reasons, "the answer was to allow this tool for this context: "+noContextGrant)}
			return d, nil
		}
		if denied := e.countAllowed(k, rated); denied != nil {
			d.Verdict = *denied
			return d, nil
		}
		e.grant(req.Context, callID, tool)
		d.Verdict = trust.Verdict{Action: trust.Allow, By: by, Reasons: append(v.Reasons, "allowed for this context by "+answerer(by))}
		return d, nil
	case model.AllowOnce:
		if denied := e.countAllowed(k, rated); denied != nil {
			d.Verdict = *denied
			return d, nil
		}
		d.Verdict = trust.Verdict{Action: trust.Allow, By: by, Reasons: append(v.Reasons, "allowed once by "+answerer(by))}
		return d, nil
	}
	why := "denied by the person"
	if resp.By != "" && resp.Reason != "" {
		why = resp.Reason
	}
	d.Verdict = trust.Verdict{Action: trust.Deny, By: by, Reasons: append(v.Reasons, why)}
	d.PersonReason = resp.Reason
	return d, nil
}

// answeredBy is the decider written for a call that asked (asked is what made it
// ask) and then got an answer from its approver (by, zero for the person): the
// person or the command line's --yes, after taint when taint made it ask. Any other
// decider the approver names (policy, for no terminal to ask on) stands as it is.
func answeredBy(asked, by trust.DecidedBy) trust.DecidedBy {
	if by == "" {
		by = trust.DecidedByPerson
	}
	if asked != trust.DecidedByTaint {
		return by
	}
	switch by {
	case trust.DecidedByPerson:
		return trust.DecidedByTaintThenPerson
	case trust.DecidedByFlag:
		return trust.DecidedByTaintThenFlag
	}
	return by
}

// answerer names who gave an allowing answer, for the reason sentence.
func answerer(by trust.DecidedBy) string {
	if by == trust.DecidedByFlag || by == trust.DecidedByTaintThenFlag {
		return "--yes on the command line (nobody was asked)"
	}
	return "the person"
}

// heldCall reports whether the managed policy holds this call: its tool or tier
// is held at ask or deny, or a rule of the policy's decided it. Nothing but the
// person's answer for this one call then allows it.
func heldCall(tool model.ToolInfo, rule *trust.Rule) bool {
	return tool.Managed.Holds() || rule != nil && strings.HasPrefix(rule.Source, "policy ")
}

// policyHeld is the sentence of a held call.
func policyHeld(tool model.ToolInfo, rule *trust.Rule) string {
	if tool.Managed.Holds() {
		return tool.Managed.PolicyHeld()
	}
	return "the team policy's rule " + rule.Label() + " decides this call: it cannot be allowed for the context or always"
}

// secretFindings are the findings as a question shows them (nil for none).
func secretFindings(found []secrets.Finding) []model.SecretFinding {
	var out []model.SecretFinding
	for _, f := range found {
		out = append(out, model.SecretFinding{Path: f.Path, Sentence: f.Sentence()})
	}
	return out
}

// noContextGrant is why an answer that allows a destructive tool for a context
// allows nothing.
const noContextGrant = "a destructive tool is never allowed for a context (every call asks), so the call is denied and nothing was granted"

// denier is who denied a call that Decide denies without asking.
func denier(tool model.ToolInfo) trust.DecidedBy {
	switch {
	case tool.Pin == trust.PinChanged:
		return trust.DecidedByPin
	case tool.Disabled:
		return trust.DecidedByDisabled
	}
	return trust.DecidedByPolicy
}

// refused is the verdict of a call refused at once by a limit.
func refused(why string) trust.Verdict {
	return trust.Verdict{Action: trust.Deny, By: trust.DecidedByPolicy, Reasons: []string{why}}
}

// staleError withdraws a question whose tool changed while it waited.
type staleError struct {
	by  trust.DecidedBy
	msg string
}

func (e *staleError) Error() string { return e.msg }

// WatchProgress registers a call about to be forwarded and returns its progress
// token: 128 random bits, so no other server (nor the agent) can guess it. The
// global call IDs (c1, c2, …) are never sent to a server.
func (e *Engine) WatchProgress(callID string, req model.CallRequest, tool model.ToolInfo) string {
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

func (e *Engine) UnwatchProgress(token string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.watchers, token)
}

// Progress routes a progress notification that server sent. It counts only when its
// token is that of a running call to that same server; otherwise it is dropped and
// Progress returns false. A message from an untrusted-content tool taints the call's
// context before it is handed on, so that the context is tainted before the agent
// (or the person) can read it.
func (e *Engine) Progress(server string, p *mcp.ProgressNotificationParams) bool {
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
		e.MarkTainted(w.ctx, trust.Taint{By: w.ref, CallID: w.callID, At: e.now(), Channel: trust.ChannelProgress})
	}
	w.f(model.Progress{CallID: w.callID, Server: server, Progress: p.Progress, Total: p.Total, Message: p.Message})
	return true
}

// Pending lists the calls that wait for a person, oldest first (empty when an
// external Approver answers).
func (e *Engine) Pending() []*model.Pending {
	if e.queue == nil {
		return nil
	}
	return e.queue.list()
}

// Answer answers a pending call by ID. It fails when the call no longer waits
// (answered, timed out or withdrawn).
func (e *Engine) Answer(id uint64, r model.Response) error {
	if e.queue == nil {
		return errors.New("approvals are answered elsewhere")
	}
	return e.queue.answer(id, r)
}

// OwnQueue reports whether the engine asks its own queue (no Approver was given),
// so that waiting questions can be withdrawn ([Engine.WithdrawChanged]).
func (e *Engine) OwnQueue() bool { return e.queue != nil }

// WithdrawChanged ends the waiting question p without an answer when its tool
// changed since it was asked: now is the tool as listed now (listed false: it is no
// longer listed). A withdrawn question denies its call; it never allows one.
func (e *Engine) WithdrawChanged(p *model.Pending, now model.ToolInfo, listed bool) {
	if e.queue == nil {
		return
	}
	var changes []string
	by := trust.DecidedByPolicy
	if !listed {
		changes = []string{"it is no longer listed"}
	} else if changes = ToolChanges(p.Tool, now); len(changes) > 0 {
		by = ChangedBy(p.Tool, now)
	}
	if len(changes) > 0 {
		e.queue.withdraw(p.ID, &staleError{by: by, msg: ChangedSentence(p.Tool.Ref, "you were deciding", changes)})
	}
}

// Close ends every waiting question of the engine's own queue: they are answered
// errApprovalClosed, and no new one waits; and it lets go of the taint file the
// engine holds open (statefile.HoldWritten), which is read again at the next look.
func (e *Engine) Close() {
	if e.queue != nil {
		e.queue.close()
	}
	e.mu.Lock()
	if e.store != nil {
		e.store.setLast(statefile.Stamp{}, nil, nil)
	}
	e.mu.Unlock()
}

// approvalQueue is the built-in Approver: pending calls wait on it until the person
// answers through Engine.Answer.
type approvalQueue struct {
	events func(model.Event)
	mu     sync.Mutex
	seq    uint64
	items  []*queued
	closed bool
}

type queued struct {
	p     *model.Pending
	ch    chan model.Response
	stale chan *staleError
}

func newApprovalQueue(events func(model.Event)) *approvalQueue { return &approvalQueue{events: events} }

// errApprovalClosed is returned when the session closes while a call waits.
var errApprovalClosed = errors.New("airlock is closing")

func (q *approvalQueue) Approve(ctx context.Context, p *model.Pending) (model.Response, error) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return model.Response{}, errApprovalClosed
	}
	q.seq++
	p.ID = q.seq
	it := &queued{p: p, ch: make(chan model.Response, 1), stale: make(chan *staleError, 1)}
	q.items = append(q.items, it)
	q.mu.Unlock()
	q.events(model.ApprovalRequested{Pending: p})

	select {
	case r, ok := <-it.ch:
		if !ok {
			return model.Response{}, errApprovalClosed
		}
		outcome := r.Answer.String()
		if r.Answer == model.AllowForContext && p.Tool.Class.Tier >= trust.TierDestructive {
			outcome = "refused: " + noContextGrant
		}
		q.events(model.ApprovalClosed{ID: p.ID, Outcome: outcome})
		return r, nil
	case se := <-it.stale:
		q.events(model.ApprovalClosed{ID: p.ID, Outcome: se.msg, Stale: true})
		return model.Response{}, se
	case <-ctx.Done():
		outcome := "withdrawn by the caller"
		var w *model.Withdrawal
		switch {
		case errors.As(context.Cause(ctx), &w):
			outcome = w.Why
		case AgentGone(ctx):
			outcome = GoneWhy(ctx)
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			outcome = "timed out"
		}
		q.remove(p.ID)
		q.events(model.ApprovalClosed{ID: p.ID, Outcome: outcome})
		return model.Response{}, ctx.Err()
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

func (q *approvalQueue) answer(id uint64, r model.Response) error {
	it := q.remove(id)
	if it == nil {
		return errors.New("that call no longer waits for an answer")
	}
	it.ch <- r
	return nil
}

// withdraw ends a waiting question without an answer: what it showed changed.
func (q *approvalQueue) withdraw(id uint64, se *staleError) bool {
	it := q.remove(id)
	if it == nil {
		return false
	}
	it.stale <- se
	return true
}

func (q *approvalQueue) list() []*model.Pending {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]*model.Pending, len(q.items))
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

// GoneWhy says why ctx's agent went away: "the agent disconnected", or the
// cause's own words (model.ErrTokenRevoked).
func GoneWhy(ctx context.Context) string {
	if c := context.Cause(ctx); c != nil && errors.Is(c, model.ErrAgentGone) {
		return c.Error()
	}
	return model.ErrAgentGone.Error()
}

// AgentGone reports whether ctx ended because its agent went away.
func AgentGone(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), model.ErrAgentGone)
}
