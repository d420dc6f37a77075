// Package config reads airlock's TOML configuration: the policy per tier, the agent
// gateway, the audit log, and the servers with their trust, labels and per-tool
// overrides. Loading is strict: an unknown key is an error naming the key and its line,
// and every invalid value is an error naming its key path. It never connects to anything.
//
// The keys, with their defaults:
//
//	state_dir = ""                 # absolute (C:\... on Windows); "" = DefaultStateDir()
//	[policy]                       # read = "allow", write = "ask", destructive = "ask"
//	approval_timeout = "2m"        # a Go duration, > 0
//	[gateway]                      # absent: no gateway
//	listen = "127.0.0.1:7878"      # loopback (127.x.x.x, ::1, localhost) unless allow_remote = true
//	[limits]                       # beyond a size or waiting limit a call is refused at once
//	max_args_bytes = 8388608       # one call's arguments (8 MiB; at most trust.MaxArgsLimit, 32 MiB)
//	max_waiting_per_context = 16   # calls of one context waiting for a person
//	max_waiting_bytes = 33554432   # argument bytes of every waiting call together (32 MiB)
//	calls_per_minute = 0           # calls of one context in any minute, all tools; 0 = no limit
//	rate_action = "ask"            # ask | deny: what a call beyond calls_per_minute does
//	[notify]                       # a question waits while the terminal is not focused
//	command = []                   # e.g. ["notify-send", "airlock"]: run, no shell, the summary last; [] = OSC 9/777
//	[audit]
//	path = ""                      # absolute; "" = the caller's default under state_dir
//	[servers.NAME]                 # NAME matches ^[a-z0-9][a-z0-9-]{0,31}$
//	command, args, env, cwd        # stdio; ${VAR} and ${VAR:-default} expanded in args and env values
//	inherit_env = []               # stdio: more variables of airlock's environment, by name
//	url, headers                   # http or sse; ${VAR} and ${VAR:-default} expanded in url and header values
//	transport                      # stdio | http | sse; inferred from command or url
//	protocol = ""                  # "" = automatic, or an MCP protocol version
//	connect_timeout = "15s"
//	call_timeout = "60s"
//	trust = "untrusted"            # trusted | untrusted | blocked
//	labels = []                    # private-data | untrusted-content | exfiltration
//	elicitation = "during-calls"   # or "anytime": may ask the person between calls too
//	roots = []                     # absolute paths, ~/path or file:// URIs that exist; declared only when set
//	rate = ""                      # "N/s" | "N/min" | "N/h" (N from 1 to 10000): calls to the server per context
//	rate_action = "ask"            # ask | deny: what a call beyond rate does
//	[servers.NAME.oauth]           # http servers: authorize with OAuth 2.1 (see OAuth)
//	client_id, client_secret, client_metadata_url, issuer, scopes, redirect_port
//	[servers.NAME.tools.TOOL]      # policy, read_only, destructive, idempotent, open_world, labels,
//	                               # rate and rate_action (calls of this tool per context)
package config

import (
	"time"

	"github.com/airlock-mcp/airlock/trust"
)

// Config is a loaded, validated configuration.
type Config struct {
	// Path is the file the config was read from ("" when built in code, as by the demo).
	Path string
	// Policy is the action for each tier unless a tool overrides it.
	Policy trust.Policy
	// ApprovalTimeout is how long an agent call may wait for a person before it is denied.
	ApprovalTimeout time.Duration
	// Gateway configures the agent-facing MCP endpoint; nil when [gateway] is absent.
	Gateway *Gateway
	// AuditPath is the audit log file ("" selects the default under the state dir).
	AuditPath string
	// AuditDecisionsUnsynced is true when [audit] sync_before_forward = false: a
	// call's decision record is written to the log before the call is forwarded but
	// not waited for on disk (docs/audit-durability.md). The default, false, syncs it.
	AuditDecisionsUnsynced bool
	// AuditSegmentBytes is [audit] segment_bytes: the size at which the audit log's
	// file is closed as a segment and a new one begun (0: audit.DefaultSegmentBytes).
	AuditSegmentBytes int64
	// StateDir holds pins, the gateway token and the default audit log: the
	// top-level state_dir key, else DefaultStateDir() (Parse fills it; Default leaves
	// it empty).
	StateDir string
	// Servers lists the configured servers sorted by name.
	Servers []Server
	// Limits bound the arguments of one call and the work that waits for a person;
	// a zero field means its default (DefaultLimits).
	Limits Limits
	// NotifyCommand is [notify] command: the program (and its first arguments) the
	// TUI runs, with a waiting question's one-line summary as the last argument, when
	// the terminal is not focused; nil: the terminal's own notification (OSC 9, 777).
	NotifyCommand []string
	// RulesFile is where remembered decisions are kept (rules_file); "" means
	// rules.toml beside the config file (session.RulesPath).
	RulesFile string
	// Managed is what the managed policy set (nil: no policy file applied);
	// LimitSources names, by [limits] key, the limits the policy set.
	Managed      *Managed
	LimitSources map[string]Source
}

// Limits are the [limits] table: beyond a size or waiting limit a call is refused
// at once; beyond CallsPerMinute it asks or is denied (RateAction).
type Limits struct {
	// MaxArgsBytes is the largest argument object a call may carry (canonical bytes).
	MaxArgsBytes int
	// MaxWaitingPerContext is how many calls of one context may wait for a person.
	MaxWaitingPerContext int
	// MaxWaitingBytes bounds the argument bytes of every waiting call together.
	MaxWaitingBytes int64
	// TaintPruneAfter is how long a tainted context may be idle (no new taint, no
	// call decided) before its taint is pruned from taint.json, audited
	// (limits.taint_prune_after_days, whole days). The person's own context is
	// never pruned.
	TaintPruneAfter time.Duration
	// CallsPerMinute is limits.calls_per_minute: how many calls of one context (the
	// person's, or one agent token's) run unasked in any minute, all tools together
	// (0: no limit). RateAction is limits.rate_action: trust.Ask (the default when
	// CallsPerMinute is set) or trust.Deny for a call beyond it.
	CallsPerMinute int
	RateAction     trust.Action
}

// Gateway is the [gateway] table.
type Gateway struct {
	// Listen is the host:port to serve on; loopback unless AllowRemote. "" leaves
	// the gateway off unless a run passes --gateway ADDR.
	Listen string
	// AllowRemote permits a non-loopback Listen address.
	AllowRemote bool
	// NameBudget is the longest tool or prompt name the gateway serves (1 to 64
	// bytes; 0: trust.DefaultNameBudget). A client puts its own prefix before it
	// (mcp__airlock__) and accepts at most 64 bytes in all; a longer or dotted
	// SERVER__TOOL is served under a mapped name (trust.MapServedNames).
	NameBudget int
}

// Transport says how airlock reaches a server.
type Transport string

// The transports.
const (
	TransportStdio Transport = "stdio"
	TransportHTTP  Transport = "http"
	TransportSSE   Transport = "sse"
)

// Server is one [servers.NAME] table after validation and ${VAR} expansion.
type Server struct {
	// Name matches ^[a-z0-9][a-z0-9-]{0,31}$.
	Name string
	// Transport is inferred from URL (http) or Command (stdio) unless set.
	Transport Transport
	// Command, Args, Env and Cwd start a stdio server. Command "airlock" means the
	// running airlock executable itself.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// InheritEnv names variables of airlock's own environment passed to a stdio
	// server beyond the minimal base set (inherit_env); an unset one is skipped.
	InheritEnv []string
	// URL and Headers reach an http or sse server.
	URL     string
	Headers map[string]string
	// ArgsAsWritten and URLAsWritten are Args and URL before ${VAR} expansion (nil and
	// "" when built in code): what may be stored or shown, as an expanded value can
	// hold a secret.
	ArgsAsWritten []string
	URLAsWritten  string
	// Protocol is "" (automatic) or an MCP protocol version such as "2025-11-25".
	Protocol string
	// ConnectTimeout bounds connecting and initializing; CallTimeout bounds one call.
	ConnectTimeout time.Duration
	CallTimeout    time.Duration
	// Trust is the person's trust in this server (untrusted unless set).
	Trust trust.ServerTrust
	// Labels are legs this server's tools fill whatever their annotations say.
	Labels []trust.Leg
	// Tools holds per-tool overrides keyed by tool name.
	Tools map[string]Tool
	// OAuth, when set, has airlock authorize with the server's authorization server
	// (OAuth 2.1, authorization code with PKCE); nil when the server has no
	// [servers.NAME.oauth] table. Only for http servers.
	OAuth *OAuth
	// Elicitation says when the server may ask the person for input: ElicitDuringCalls
	// (the default, "") only while a call to it is in flight, ElicitAnytime whenever.
	Elicitation string
	// Resources and Prompts are the policy for reading this server's resources and
	// getting its prompts (resources = "allow" | "ask" | "deny"); ActionUnset means
	// the read tier's policy (docs/channels.md).
	Resources trust.Action
	Prompts   trust.Action
	// Roots are the absolute paths (existing when loaded) airlock answers the
	// server's roots/list with, as file:// URIs; nil when roots is not set: airlock
	// then does not declare the roots capability to this server.
	Roots []string
	// Sandbox, when set, fences the stdio server's process (files, network,
	// limits); nil when the server has no [servers.NAME.sandbox] table.
	Sandbox *Sandbox
	// Rate, when set, is rate and rate_action: how many calls to this server, all
	// its tools together, one context may make in a window (nil: no limit).
	Rate *Rate

	// What the managed policy set on this server (the zero values: nothing).
	// TrustSource names the policy when it made Trust stricter than the person's;
	// TrustCap is the loosest trust the policy lets the server have (a what-if
	// cannot go past it) when TrustCapSource is set. Blocked says why the policy
	// blocks the server ("" when it does not). PolicyRates are the policy's rates,
	// kept beside Rate: a call must be under each.
	TrustSource     Source
	TrustCap        trust.ServerTrust
	TrustCapSource  Source
	Blocked         string
	ResourcesSource Source
	PromptsSource   Source
	LabelsSource    Source
	SandboxSource   Source
	PolicyRates     []SourcedRate
}

// SourcedRate is a rate the managed policy set, with its source.
type SourcedRate struct {
	Rate   Rate
	Source Source
}

// Sandbox is a [servers.NAME.sandbox] table: what a fenced stdio server may reach
// beyond the files its command needs to run (docs/platforms.md says what each
// platform enforces).
type Sandbox struct {
	// Read and Write are absolute clean paths that existed when loaded; a write path
	// is readable too. ReadAsWritten and WriteAsWritten are the entries as the
	// config spells them ("~" kept), for display.
	Read, Write                   []string
	ReadAsWritten, WriteAsWritten []string
	// Network is NetworkNone (the default) or NetworkAll.
	Network string
	// Required (the default) means a fence that cannot be applied in full keeps the
	// server from starting; false starts it unfenced, marked so.
	Required bool
	// MemoryBytes, CPUSeconds and Processes are optional limits (0: none):
	// RLIMIT_DATA, RLIMIT_CPU and RLIMIT_NPROC on Linux and macOS.
	MemoryBytes int64
	CPUSeconds  int64
	Processes   int64
}

// The network values of a sandbox.
const (
	NetworkNone = "none"
	NetworkAll  = "all"
)

// The elicitation values of a server.
const (
	ElicitDuringCalls = "during-calls"
	ElicitAnytime     = "anytime"
)

// OAuth is a [servers.NAME.oauth] table. An empty table is enough: airlock then
// registers itself with the authorization server dynamically. Registration is tried
// in this order: ClientMetadataURL when the server supports client ID metadata
// documents, then ClientID, then dynamic client registration.
type OAuth struct {
	// ClientID is a client registered with the authorization server beforehand.
	ClientID string
	// ClientSecret is that client's secret, "" for a public client. ${VAR} is
	// expanded in it, and it is never shown in an error.
	ClientSecret string
	// ClientMetadataURL is the https URL (with a path) of a client ID metadata
	// document describing airlock, used as the client ID where the server supports it.
	ClientMetadataURL string
	// Issuer, when set, is the only authorization server the pre-registered ClientID
	// (and its secret) may be used with.
	Issuer string
	// Scopes are the scopes to ask for; empty asks for what the server's challenge or
	// metadata names.
	Scopes []string
	// RedirectPort is the port of the loopback redirect URI
	// http://127.0.0.1:PORT/callback; 0 picks a free port on the first connect and
	// holds it until airlock exits.
	RedirectPort int
}

// Tool is one [servers.NAME.tools.TOOL] table.
type Tool struct {
	// Policy overrides the tier's action for this tool (ActionUnset: no override).
	Policy trust.Action
	// Asserted are hints the person asserts; they win over anything the server says.
	Asserted trust.Hints
	// Labels are legs this tool fills whatever its annotations say.
	Labels []trust.Leg
	// Rules are the tool's argument rules ([[servers.NAME.tools.TOOL.rules]]), in
	// file order, each named by its key path and line (docs/rules.md).
	Rules []trust.Rule
	// Rate, when set, is the tool's rate and rate_action: how many calls of this
	// tool one context may make in a window (nil: no limit).
	Rate *Rate

	// What the managed policy set on this tool. Cap is the action its calls are
	// held to after every other setting (Action unset: none); PolicyRules are the
	// policy's deny and ask rules, which decide before the person's rules;
	// PolicyRates are kept beside Rate.
	Cap         Cap
	PolicyRules []trust.Rule
	PolicyRates []SourcedRate
}

// The default limits (DefaultLimits).
const (
	DefaultMaxArgsBytes         = 8 << 20
	DefaultMaxWaitingPerContext = 16
	DefaultMaxWaitingBytes      = 32 << 20
	// DefaultTaintPruneAfterDays is limits.taint_prune_after_days when unset.
	DefaultTaintPruneAfterDays = 30
)

// DefaultLimits are the limits when the config sets none.
func DefaultLimits() Limits {
	return Limits{MaxArgsBytes: DefaultMaxArgsBytes, MaxWaitingPerContext: DefaultMaxWaitingPerContext, MaxWaitingBytes: DefaultMaxWaitingBytes,
		TaintPruneAfter: DefaultTaintPruneAfterDays * 24 * time.Hour}
}

// WithDefaults fills every zero field with its default.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if l.MaxArgsBytes <= 0 {
		l.MaxArgsBytes = d.MaxArgsBytes
	}
	if l.MaxWaitingPerContext <= 0 {
		l.MaxWaitingPerContext = d.MaxWaitingPerContext
	}
	if l.MaxWaitingBytes <= 0 {
		l.MaxWaitingBytes = d.MaxWaitingBytes
	}
	if l.TaintPruneAfter <= 0 {
		l.TaintPruneAfter = d.TaintPruneAfter
	}
	return l
}

// Default timeouts, used when a server does not set its own.
const (
	DefaultConnectTimeout  = 15 * time.Second
	DefaultCallTimeout     = 60 * time.Second
	DefaultApprovalTimeout = 2 * time.Minute
)
