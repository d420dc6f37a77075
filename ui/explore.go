package ui

// The root's part of exploring a server (docs/explore.md): opening the server
// info view and, from it, the resources and prompts views, reading and getting through the Manager (which
// may ask a question: the overlay shows it, as for calls), the argument forms of
// templates and prompts with debounced completions, subscriptions and
// resources/updated.

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/yosida95/uritemplate/v3"

	"github.com/airlock-mcp/airlock/internal/model"
	"github.com/airlock-mcp/airlock/session"
	"github.com/airlock-mcp/airlock/ui/common"
	"github.com/airlock-mcp/airlock/ui/form"
	"github.com/airlock-mcp/airlock/ui/screens/channels"
	"github.com/airlock-mcp/airlock/ui/screens/output"
	"github.com/airlock-mcp/airlock/ui/screens/serverinfo"
)

// formKind is what the open form's Submit is for.
type formKind int

const (
	formCall     formKind = iota // a tool's call (formFor)
	formPrompt                   // a prompt's arguments (formPrompt)
	formTemplate                 // a resource template's variables (formTemplate)
)

// completeDelay is how long typing must pause before a completion is asked for
// (debounce); at most one request per field value is made.
const completeDelay = 250 * time.Millisecond

// maxFormArgs bounds the fields a prompt's or template's form gets.
const maxFormArgs = 64

// explore is the root's state of the explore views.
type explore struct {
	kind     formKind
	server   string
	prompt   model.PromptInfo
	template model.ResourceTemplateInfo
	// seq numbers completion requests: a tick or an answer for an older one is
	// dropped. asked is the field and value last asked for.
	seq   uint64
	asked [2]string
	// subs are the person's subscriptions per server (URI → gen of the
	// connection subscribed on) and updated the URIs that changed since read.
	subs    map[string]map[string]uint64
	updated map[string]map[string]bool
	// last is what the output view's "again" repeats.
	last output.Output
}

// openInfo shows a server's info view over the current screen; esc returns to it.
func (m *Model) openInfo(name string) {
	s, ok := m.serverInfo(name)
	if !ok {
		return
	}
	m.info.Open(s, m.sess.Stderr(name))
	m.push(screenInfo)
}

// serverInfo is the snapshot's view of one server.
func (m *Model) serverInfo(name string) (model.ServerInfo, bool) {
	for _, s := range m.snap.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return model.ServerInfo{}, false
}

// refreshInfo shows the info view's server as the newest snapshot has it.
func (m *Model) refreshInfo() {
	name := m.info.Server.Name
	if s, ok := m.serverInfo(name); ok {
		m.info.Refresh(s, m.sess.Stderr(name))
	}
}

// openResources shows the info view's server's resources.
func (m *Model) openResources(name string) {
	s, ok := m.serverInfo(name)
	if !ok {
		return
	}
	m.res.SetServer(s, m.subscribedOf(s), m.ex.updated[name])
	m.push(screenRes)
}

// openPrompts shows the info view's server's prompts.
func (m *Model) openPrompts(name string) {
	s, ok := m.serverInfo(name)
	if !ok {
		return
	}
	m.prompts.SetServer(s)
	m.push(screenPrompts)
}

// subscribedOf is the URIs subscribed on the server's current connection.
func (m *Model) subscribedOf(s model.ServerInfo) map[string]bool {
	out := map[string]bool{}
	for uri, gen := range m.ex.subs[s.Name] {
		if gen == s.Gen {
			out[uri] = true
		}
	}
	return out
}

// refreshExplore gives the open explore views the newest snapshot.
func (m *Model) refreshExplore() {
	if s, ok := m.serverInfo(m.res.Server.Name); ok && m.res.Server.Name != "" {
		m.res.SetServer(s, m.subscribedOf(s), m.ex.updated[s.Name])
	}
	if s, ok := m.serverInfo(m.prompts.Server.Name); ok && m.prompts.Server.Name != "" {
		m.prompts.SetServer(s)
	}
}

// readDoneMsg and promptDoneMsg report a finished read or get.
type readDoneMsg struct{ out output.Output }

// readCmd reads a resource through the Manager (the engine decides; it may ask).
func readCmd(ctx context.Context, sess *session.Manager, server, uri string) tea.Cmd {
	return func() tea.Msg {
		res, err := sess.ReadResource(ctx, model.ReadRequest{Server: server, URI: uri})
		return readDoneMsg{out: output.Output{Server: server, URI: uri, Read: res, Err: err}}
	}
}

// promptCmd gets a prompt through the Manager.
func promptCmd(ctx context.Context, sess *session.Manager, server, name string, args map[string]string) tea.Cmd {
	return func() tea.Msg {
		raw, _ := json.Marshal(args)
		res, err := sess.GetPrompt(ctx, model.PromptRequest{Server: server, Name: name, Args: raw})
		return readDoneMsg{out: output.Output{Server: server, Prompt: name, Args: args, Got: res, Err: err}}
	}
}

// startRead reads a resource; the status says so until it ends.
func (m *Model) startRead(server, uri string) (*Model, tea.Cmd) {
	m.status = "reading " + common.Inline(m.St, uri, 60) + " of " + common.Inline(m.St, server, 32) + "…"
	return m, readCmd(m.ctx, m.sess, server, uri)
}

// readDone shows what a read or get returned.
func (m *Model) readDone(msg readDoneMsg) (*Model, tea.Cmd) {
	o := msg.out
	m.taint = m.sess.Engine().Taint("")
	what := common.Inline(m.St, o.What(), 60)
	switch {
	case o.Err != nil:
		m.status = "✗ " + what + ": " + common.Inline(m.St, o.Err.Error(), 100)
	case o.Read != nil:
		m.status = "✓ read " + what
		if u := m.ex.updated[o.Server]; u != nil {
			delete(u, o.URI) // read again: the change is seen
		}
	default:
		m.status = "✓ got prompt " + what
	}
	if (o.Read != nil && o.Read.Tainted) || (o.Got != nil && o.Got.Tainted) {
		m.status += " · ⚠ untrusted content: your context is tainted"
	}
	m.ex.last = o
	m.output.Show(o)
	if m.screen != screenOutput {
		m.push(screenOutput)
	}
	m.refreshExplore()
	return m, nil
}

// subscribedMsg reports the end of a subscribe or unsubscribe.
type subscribedMsg struct {
	server, uri string
	gen         uint64
	on          bool
	err         error
}

func subscribeCmd(ctx context.Context, sess *session.Manager, server, uri string, gen uint64, on bool) tea.Cmd {
	return func() tea.Msg {
		var err error
		if on {
			err = sess.Subscribe(ctx, server, uri)
		} else {
			err = sess.Unsubscribe(ctx, server, uri)
		}
		return subscribedMsg{server: server, uri: uri, gen: gen, on: on, err: err}
	}
}

func (m *Model) subscribed(msg subscribedMsg) (*Model, tea.Cmd) {
	uri := common.Inline(m.St, msg.uri, 60)
	if msg.err != nil {
		m.status = "✗ could not change the subscription to " + uri + ": " + common.Inline(m.St, msg.err.Error(), 100)
		return m, nil
	}
	if m.ex.subs == nil {
		m.ex.subs = map[string]map[string]uint64{}
	}
	if m.ex.subs[msg.server] == nil {
		m.ex.subs[msg.server] = map[string]uint64{}
	}
	if msg.on {
		m.ex.subs[msg.server][msg.uri] = msg.gen
		m.status = "◉ subscribed to " + uri + ": a change marks it ●"
	} else {
		delete(m.ex.subs[msg.server], msg.uri)
		if u := m.ex.updated[msg.server]; u != nil {
			delete(u, msg.uri)
		}
		m.status = "unsubscribed from " + uri
	}
	m.refreshExplore()
	return m, nil
}

// resourceUpdated marks a subscribed resource that changed.
func (m *Model) resourceUpdated(e model.ResourceUpdated) {
	if gen, ok := m.ex.subs[e.Server][e.URI]; !ok || gen != e.Gen {
		return // not the person's subscription (an agent's, or an old connection's)
	}
	if m.ex.updated == nil {
		m.ex.updated = map[string]map[string]bool{}
	}
	if m.ex.updated[e.Server] == nil {
		m.ex.updated[e.Server] = map[string]bool{}
	}
	m.ex.updated[e.Server][e.URI] = true
	m.status = "● " + common.Inline(m.St, e.URI, 60) + " of " + common.Inline(m.St, e.Server, 32) + " changed (r, then enter reads it again)"
	m.refreshExplore()
}

// subscribe asks the session to subscribe to a resource, or to end it.
func (m *Model) subscribe(i channels.Subscribe) (*Model, tea.Cmd) {
	if i.On {
		m.status = "subscribing to " + common.Inline(m.St, i.URI, 60) + "…"
	} else {
		m.status = "unsubscribing from " + common.Inline(m.St, i.URI, 60) + "…"
	}
	return m, subscribeCmd(m.ctx, m.sess, i.Server.Name, i.URI, i.Server.Gen, i.On)
}

// outputAgain reads the output's resource again, or opens its prompt's form
// again while the prompt is listed.
func (m *Model) outputAgain(o output.Output) (*Model, tea.Cmd) {
	if o.URI != "" {
		return m.startRead(o.Server, o.URI)
	}
	if s, ok := m.serverInfo(o.Server); ok {
		for _, p := range s.Prompts {
			if p.Name == o.Prompt {
				m.pop()
				return m.openPromptForm(s, p)
			}
		}
	}
	m.status = "the prompt is no longer listed"
	return m, nil
}

// argSchema is a JSON Schema object of string properties for a form: a prompt's
// arguments or a template's variables (names bounded to maxFormArgs).
func argSchema(names []string, required map[string]bool, desc map[string]string) json.RawMessage {
	type prop struct {
		Type        string `json:"type"`
		Description string `json:"description,omitempty"`
	}
	props := map[string]prop{}
	var req []string
	for i, n := range names {
		if i >= maxFormArgs {
			break
		}
		props[n] = prop{Type: "string", Description: desc[n]}
		if required[n] {
			req = append(req, n)
		}
	}
	sort.Strings(req)
	b, _ := json.Marshal(struct {
		Type       string          `json:"type"`
		Properties map[string]prop `json:"properties"`
		Required   []string        `json:"required,omitempty"`
	}{"object", props, req})
	return b
}

// openPromptForm opens the argument form of a prompt (even one without
// arguments: the form says what will be got and enter gets it).
func (m *Model) openPromptForm(s model.ServerInfo, p model.PromptInfo) (*Model, tea.Cmd) {
	var names []string
	req, desc := map[string]bool{}, map[string]string{}
	for _, a := range p.Arguments {
		names = append(names, a.Name)
		req[a.Name] = a.Required
		desc[a.Name] = channels.FirstNonEmpty(a.Description, a.Title)
	}
	m.ex.kind, m.ex.server, m.ex.prompt = formPrompt, s.Name, p
	return m.openArgsForm("get prompt ", s.Name, p.Name, argSchema(names, req, desc))
}

// openTemplateForm opens the form of a template's variables.
func (m *Model) openTemplateForm(s model.ServerInfo, t model.ResourceTemplateInfo) (*Model, tea.Cmd) {
	tpl, err := uritemplate.New(t.URITemplate)
	if err != nil {
		m.status = "✗ the template cannot be read: " + common.Inline(m.St, err.Error(), 100)
		return m, nil
	}
	names := tpl.Varnames()
	req := map[string]bool{}
	for _, n := range names {
		req[n] = true
	}
	m.ex.kind, m.ex.server, m.ex.template = formTemplate, s.Name, t
	return m.openArgsForm("read template ", s.Name, t.URITemplate, argSchema(names, req, nil))
}

func (m *Model) openArgsForm(verb, server, name string, schema json.RawMessage) (*Model, tea.Cmd) {
	m.form = form.NewFor(verb, server, name, schema, *m.St)
	m.form.SetSize(m.layout.modalW, m.layout.modalH)
	m.ex.asked = [2]string{}
	m.push(screenForm)
	cmd := m.askCompletion()
	return m, cmd
}

// applyArgsForm acts on a prompt's or template's form.
func (m *Model) applyArgsForm(act form.Action, cmd tea.Cmd) (*Model, tea.Cmd) {
	switch a := act.(type) {
	case form.Cancel:
		m.pop()
	case form.Submit:
		args := map[string]string{}
		if err := json.Unmarshal(a.Args, &args); err != nil {
			m.status = "✗ the arguments cannot be read back: " + common.Inline(m.St, err.Error(), 80)
			return m, cmd
		}
		m.pop()
		if m.ex.kind == formPrompt {
			m.status = "getting prompt " + common.Inline(m.St, m.ex.prompt.Name, 40) + "…"
			return m, tea.Batch(cmd, promptCmd(m.ctx, m.sess, m.ex.server, m.ex.prompt.Name, args))
		}
		tpl, err := uritemplate.New(m.ex.template.URITemplate)
		if err != nil {
			m.status = "✗ the template cannot be read: " + common.Inline(m.St, err.Error(), 100)
			return m, cmd
		}
		vals := uritemplate.Values{}
		for k, v := range args {
			vals.Set(k, uritemplate.String(v))
		}
		uri, err := tpl.Expand(vals)
		if err != nil {
			m.status = "✗ the template cannot be filled in: " + common.Inline(m.St, err.Error(), 100)
			return m, cmd
		}
		var c2 tea.Cmd
		m, c2 = m.startRead(m.ex.server, uri)
		return m, tea.Batch(cmd, c2)
	}
	ask := m.askCompletion()
	return m, tea.Batch(cmd, ask)
}

// completeTickMsg fires completeDelay after the focused field last changed.
type completeTickMsg struct{ seq uint64 }

// completedMsg carries a server's completion values for a field.
type completedMsg struct {
	seq   uint64
	field string
	c     *model.Completion
	err   error
}

// askCompletion schedules a completion for the focused field of a prompt's or
// template's form when its value changed, if the server offers completions.
func (m *Model) askCompletion() tea.Cmd {
	if m.screen != screenForm || m.ex.kind == formCall {
		return nil
	}
	s, ok := m.serverInfo(m.ex.server)
	if !ok || !s.Completions {
		return nil
	}
	name, value, ok := m.form.Focused()
	if !ok || [2]string{name, value} == m.ex.asked {
		return nil
	}
	m.ex.asked = [2]string{name, value}
	m.ex.seq++
	seq := m.ex.seq
	return tea.Tick(completeDelay, func(time.Time) tea.Msg { return completeTickMsg{seq: seq} })
}

// completeNow asks the server, once the person paused typing.
func (m *Model) completeNow(msg completeTickMsg) (*Model, tea.Cmd) {
	if msg.seq != m.ex.seq || m.screen != screenForm || m.ex.kind == formCall {
		return m, nil
	}
	name, value, ok := m.form.Focused()
	if !ok {
		return m, nil
	}
	req := model.CompleteRequest{Server: m.ex.server, Argument: name, Value: value, Resolved: m.form.Values()}
	delete(req.Resolved, name)
	if m.ex.kind == formPrompt {
		req.Prompt = m.ex.prompt.Name
	} else {
		req.Template = m.ex.template.URITemplate
	}
	sess, ctx, seq := m.sess, m.ctx, msg.seq
	return m, func() tea.Msg {
		c, err := sess.Complete(ctx, req)
		return completedMsg{seq: seq, field: name, c: c, err: err}
	}
}

// completed shows a completion's values under its field.
func (m *Model) completed(msg completedMsg) (*Model, tea.Cmd) {
	if msg.seq != m.ex.seq || m.screen != screenForm || m.ex.kind == formCall {
		return m, nil
	}
	if msg.err != nil {
		m.status = "no suggestions: " + common.Inline(m.St, msg.err.Error(), 100)
		return m, nil
	}
	m.form.SetSuggestions(msg.field, msg.c.Values, msg.c.HasMore)
	if msg.c.Tainted {
		m.taint = m.sess.Engine().Taint("")
	}
	return m, nil
}

// openHistory shows a server's protocol history over the current screen.
func (m *Model) openHistory(name string) {
	if name == "" {
		m.status = "no server to show the history of"
		return
	}
	m.history.Open(m.sess.History(name))
	m.push(screenHistory)
}

// historyServer is the server whose history H opens: the one whose info, resources
// or prompts are shown, else the selected server or tool's, else the first.
func (m *Model) historyServer() string {
	switch {
	case m.screen == screenInfo:
		return m.info.Server.Name
	case m.screen == screenDetail && m.detail.Tool.Ref.Server != "":
		return m.detail.Tool.Ref.Server
	}
	if t, ok := m.tools.SelectedTool(); ok && m.screen == screenMain && m.focus == paneTools {
		return t.Ref.Server
	}
	if s := m.servers.Selected(); s != "" {
		return s
	}
	if len(m.snap.Servers) > 0 {
		return m.snap.Servers[0].Name
	}
	return ""
}

// refreshHistory shows the history view's server as it is now, once per batch of
// session events while the view is on top (g asks for it between events).
func (m *Model) refreshHistory() {
	if m.screen == screenHistory {
		m.history.Refresh(m.historyOf(m.history.H.Server, m.history.H.Agent))
	}
}

// historyOf is the kept history of the agent session agent when set, else of the
// server.
func (m *Model) historyOf(server, agent string) model.History {
	if agent != "" {
		return m.sess.AgentHistory(agent)
	}
	return m.sess.History(server)
}

// nextHistorySource shows the history of the source after the one shown: each
// server in the list's order, then each agent session kept at the gateway, then the
// first server again.
func (m *Model) nextHistorySource(server, agent string) {
	type src struct{ server, agent string }
	var all []src
	for _, s := range m.snap.Servers {
		all = append(all, src{server: s.Name})
	}
	for _, a := range m.sess.AgentHistorySources() {
		all = append(all, src{agent: a.Key})
	}
	if len(all) == 0 {
		return
	}
	next := all[0]
	for i, s := range all {
		if (agent != "" && s.agent == agent) || (agent == "" && s.agent == "" && s.server == server) {
			next = all[(i+1)%len(all)]
			break
		}
	}
	// No status line: the heading says whose history it is, and a status would
	// outlive the view.
	m.history.Open(m.historyOf(next.server, next.agent))
}

// pingedMsg is a ping's outcome.
type pingedMsg struct {
	server string
	took   time.Duration
	err    error
}

func pingCmd(sess *session.Manager, server string) tea.Cmd {
	return func() tea.Msg {
		d, err := sess.Ping(context.Background(), server)
		return pingedMsg{server, d, err}
	}
}

// pinged says the ping's latency in the status line and the server's info.
func (m *Model) pinged(msg pingedMsg) {
	name := common.Inline(m.St, msg.server, 32)
	var line string
	if msg.err != nil {
		line = "✗ no answer: " + common.Inline(m.St, msg.err.Error(), 120)
		m.status = "✗ ping " + name + ": " + common.Inline(m.St, msg.err.Error(), 120)
	} else {
		line = "✓ answered in " + latency(msg.took) + " (at " + m.now().Format("15:04:05") + ")"
		m.status = "✓ " + name + " answered ping in " + latency(msg.took)
	}
	if m.info.Server.Name == msg.server {
		m.info.SetLive(line, "")
	}
}

// latency is a round trip in words: microseconds below a millisecond, else
// milliseconds to a tenth.
func latency(d time.Duration) string {
	if d < time.Millisecond {
		return strconv.FormatInt(d.Microseconds(), 10) + " µs"
	}
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
}

// logLevelMsg is the outcome of logging/setLevel.
type logLevelMsg struct {
	server, level string
	err           error
}

func logLevelCmd(sess *session.Manager, server, level string) tea.Cmd {
	return func() tea.Msg {
		return logLevelMsg{server, level, sess.SetLogLevel(context.Background(), server, level)}
	}
}

func (m *Model) logLevelSet(msg logLevelMsg) {
	name := common.Inline(m.St, msg.server, 32)
	if msg.err != nil {
		m.status = "✗ log level of " + name + ": " + common.Inline(m.St, msg.err.Error(), 120)
		return
	}
	m.status = "✓ " + name + " sends log messages from " + msg.level + " up (logs: l, history: H)"
	if m.info.Server.Name == msg.server {
		m.info.SetLive("", msg.level)
	}
}

// openRoots shows a server's roots over its info view; esc returns to it.
func (m *Model) openRoots(name string) {
	s, ok := m.serverInfo(name)
	if !ok {
		return
	}
	m.roots.Open(s)
	m.push(screenRoots)
}

// refreshRoots shows the roots view's server as the newest snapshot has it.
func (m *Model) refreshRoots() {
	if s, ok := m.serverInfo(m.roots.Server.Name); ok {
		m.roots.Refresh(s)
	}
}

// rootsEditedMsg is the outcome of adding (path, whose URI is added) or
// removing (uri) a root.
type rootsEditedMsg struct {
	server, path, added, uri string
	reconnects               bool
	err                      error
}

// addRootCmd adds a root; reconnects says the server connected without roots (so
// it is reconnected to declare them, not notified).
func addRootCmd(sess *session.Manager, server, entry string, reconnects bool) tea.Cmd {
	return func() tea.Msg {
		p, uri, err := sess.AddRoot(server, entry)
		return rootsEditedMsg{server: server, path: p, added: uri, reconnects: reconnects, err: err}
	}
}

func removeRootCmd(sess *session.Manager, server, uri string) tea.Cmd {
	return func() tea.Msg {
		return rootsEditedMsg{server: server, uri: uri, err: sess.RemoveRoot(server, uri)}
	}
}

// rootsEdited says a root's change in the roots view and the status line; the
// list is the session's own after it.
func (m *Model) rootsEdited(msg rootsEditedMsg) {
	name := common.Inline(m.St, msg.server, 32)
	var note string
	switch {
	case msg.err != nil:
		note = m.St.ErrorText.Render("✗ ") + common.Inline(m.St, msg.err.Error(), 0)
		m.status = "✗ roots of " + name + ": " + common.Inline(m.St, msg.err.Error(), 120)
	case msg.uri != "":
		p := serverinfo.RootPath(msg.uri)
		note = m.St.OKText.Render("✓ ") + "removed " + common.Inline(m.St, p, 0) + " for this session; the server was told (roots/list_changed)"
		m.status = "✓ " + name + " is no longer told of " + common.Inline(m.St, p, 60)
	default:
		told := "the server was told (roots/list_changed)"
		if msg.reconnects {
			told = "the server is reconnected to declare roots"
		}
		note = m.St.OKText.Render("✓ ") + "added " + common.Inline(m.St, msg.path, 0) + " for this session; " + told
		m.status = "✓ " + name + " is told of " + common.Inline(m.St, msg.path, 60) + " for this session"
	}
	s, ok := m.sess.Snapshot().Server(msg.server) // the change is in it, maybe not yet in m.snap
	if !ok || m.roots.Server.Name != msg.server {
		return
	}
	m.roots.Changed(s, note, msg.added)
}
