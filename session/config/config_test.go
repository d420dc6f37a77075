package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/airlock-mcp/airlock/trust"
)

// designExample is the full example config of the product contract, verbatim.
const designExample = `[policy]                      # what each tier does unless a server or tool says otherwise
read = "allow"                # allow | ask | deny
write = "ask"
destructive = "ask"           # blocked is always deny
approval_timeout = "2m"       # an agent call nobody answers is denied after this

[gateway]                     # agent-facing MCP endpoint (streamable HTTP)
listen = "127.0.0.1:7878"     # loopback only unless allow_remote = true

[audit]
path = ""                     # default: $XDG_STATE_HOME/airlock/audit.jsonl

[servers.notes]               # server names: ^[a-z0-9][a-z0-9-]{0,31}$
command = "airlock"
args = ["demo-server", "notes"]
env = { NOTES_DIR = "/tmp/notes" }
trust = "trusted"             # trusted | untrusted (default) | blocked
labels = ["private-data"]     # private-data | untrusted-content | exfiltration

[servers.notes.tools.delete_note]
policy = "ask"                # allow | ask | deny, overrides [policy] for this tool

[servers.web]
url = "http://127.0.0.1:9000/mcp"          # transport inferred: url -> http, command -> stdio
transport = "http"                          # http | sse | stdio
headers = { Authorization = "Bearer ${WEB_TOKEN}" }   # ${VAR} from the environment; unset = error
protocol = ""                               # "" = auto, or "2025-11-25" / "2026-07-28"
connect_timeout = "15s"
call_timeout = "60s"

[servers.mail.tools.send_email]
open_world = true             # user-asserted hints: read_only, destructive, idempotent, open_world
labels = ["exfiltration"]
`

// mailServer completes designExample: the example shows only servers.mail's tool table.
const mailServer = `
[servers.mail]
command = "airlock"
args = ["demo-server", "mail"]
`

func envOf(m map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// baseEnv is the environment of every case unless it sets its own.
var baseEnv = map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/state"}

func ptr[T any](v T) *T { return &v }

// cfg is Default as Parse fills it for baseEnv, changed by f.
func cfg(f func(c *Config)) *Config {
	c := Default()
	c.Path = "config.toml"
	c.StateDir = "/state/airlock"
	if f != nil {
		f(c)
	}
	return c
}

// stdio is a valid stdio server as Parse fills it, changed by f.
func stdio(name string, f func(s *Server)) Server {
	s := Server{
		Name:           name,
		Transport:      TransportStdio,
		Command:        "srv",
		ConnectTimeout: DefaultConnectTimeout,
		CallTimeout:    DefaultCallTimeout,
	}
	if f != nil {
		f(&s)
	}
	return s
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		src  string
		env  map[string]string // nil: baseEnv
		want *Config           // nil when an error is wanted
		err  string            // the whole error text
	}{
		// Happy paths.
		{name: "empty file", src: ``, want: cfg(nil)},
		{
			name: "limits and elicitation",
			src:  "[limits]\nmax_args_bytes = 1024\nmax_waiting_per_context = 2\nmax_waiting_bytes = 4096\n[servers.a]\ncommand = \"x\"\nelicitation = \"anytime\"\n",
			want: cfg(func(c *Config) {
				c.Limits = Limits{MaxArgsBytes: 1024, MaxWaitingPerContext: 2, MaxWaitingBytes: 4096}
				c.Servers = []Server{{Name: "a", Transport: TransportStdio, Command: "x", ConnectTimeout: 15 * time.Second, CallTimeout: 60 * time.Second, Elicitation: ElicitAnytime}}
			}),
		},
		{name: "limits not positive", src: "[limits]\nmax_args_bytes = 0\n", err: "config.toml:2: limits.max_args_bytes: want a positive integer up to 1099511627776, got 0"},
		{name: "max args over the ceiling", src: "[limits]\nmax_args_bytes = 33554433\n", err: "config.toml:2: limits.max_args_bytes: want at most 33554432 (32 MiB: the longest arguments an audit record holds whole), got 33554433"},
		{name: "max args at the ceiling", src: "[limits]\nmax_args_bytes = 33554432\n", want: cfg(func(c *Config) { c.Limits = Limits{MaxArgsBytes: 32 << 20} })},
		{name: "taint prune age", src: "[limits]\ntaint_prune_after_days = 7\n", want: cfg(func(c *Config) { c.Limits = Limits{TaintPruneAfter: 7 * 24 * time.Hour} })},
		{name: "taint prune age not positive", src: "[limits]\ntaint_prune_after_days = 0\n", err: "config.toml:2: limits.taint_prune_after_days: want a positive integer up to 1099511627776, got 0"},
		{name: "taint prune age too long", src: "[limits]\ntaint_prune_after_days = 40000\n", err: "config.toml:2: limits.taint_prune_after_days: want at most 36500 days (100 years), got 40000"},
		{name: "taint prune age wrong type", src: "[limits]\ntaint_prune_after_days = \"30d\"\n", err: "config.toml:2: limits.taint_prune_after_days: want an integer, got string"},
		{name: "limits wrong type", src: "[limits]\nmax_waiting_bytes = \"64MiB\"\n", err: "config.toml:2: limits.max_waiting_bytes: want an integer, got string"},
		{
			name: "rates on a server, a tool and every call of a context",
			src:  "[limits]\ncalls_per_minute = 60\n[servers.a]\ncommand = \"x\"\nrate = \"10/s\"\nrate_action = \"deny\"\n[servers.a.tools.fetch]\nrate = \"3/min\"\n[servers.a.tools.send]\nrate = \"5/h\"\nrate_action = \"ask\"\n",
			want: cfg(func(c *Config) {
				c.Limits = Limits{CallsPerMinute: 60, RateAction: trust.Ask}
				c.Servers = []Server{{Name: "a", Transport: TransportStdio, Command: "x", ConnectTimeout: 15 * time.Second, CallTimeout: 60 * time.Second,
					Rate: &Rate{N: 10, Per: time.Second, Action: trust.Deny},
					Tools: map[string]Tool{
						"fetch": {Rate: &Rate{N: 3, Per: time.Minute, Action: trust.Ask}},
						"send":  {Rate: &Rate{N: 5, Per: time.Hour, Action: trust.Ask}},
					}}}
			}),
		},
		{name: "calls per minute denied beyond", src: "[limits]\ncalls_per_minute = 1\nrate_action = \"deny\"\n", want: cfg(func(c *Config) { c.Limits = Limits{CallsPerMinute: 1, RateAction: trust.Deny} })},
		{name: "calls per minute not positive", src: "[limits]\ncalls_per_minute = 0\n", err: "config.toml:2: limits.calls_per_minute: want a positive integer up to 1099511627776, got 0"},
		{name: "calls per minute over the ceiling", src: "[limits]\ncalls_per_minute = 10001\n", err: "config.toml:2: limits.calls_per_minute: want at most 10000, got 10001"},
		{name: "limits rate action alone", src: "[limits]\nrate_action = \"deny\"\n", err: "config.toml:2: limits.rate_action: set without calls_per_minute beside it"},
		{name: "limits rate action unknown", src: "[limits]\ncalls_per_minute = 5\nrate_action = \"allow\"\n", err: `config.toml:3: limits.rate_action: want ask|deny, got "allow"`},
		{name: "rate per day", src: "[servers.a]\ncommand = \"x\"\nrate = \"3/day\"\n", err: `config.toml:3: servers.a.rate: want "N/s", "N/min" or "N/h" with N from 1 to 10000, got "3/day"`},
		{name: "rate of zero", src: "[servers.a]\ncommand = \"x\"\nrate = \"0/min\"\n", err: `config.toml:3: servers.a.rate: want "N/s", "N/min" or "N/h" with N from 1 to 10000, got "0/min"`},
		{name: "rate over the ceiling", src: "[servers.a]\ncommand = \"x\"\nrate = \"10001/h\"\n", err: `config.toml:3: servers.a.rate: want "N/s", "N/min" or "N/h" with N from 1 to 10000, got "10001/h"`},
		{name: "rate with a sign", src: "[servers.a]\ncommand = \"x\"\nrate = \"+3/min\"\n", err: `config.toml:3: servers.a.rate: want "N/s", "N/min" or "N/h" with N from 1 to 10000, got "+3/min"`},
		{name: "rate a number", src: "[servers.a]\ncommand = \"x\"\nrate = 3\n", err: `config.toml:3: servers.a.rate: want a string, got integer`},
		{name: "tool rate without a unit", src: "[servers.a]\ncommand = \"x\"\n[servers.a.tools.t]\nrate = \"3\"\n", err: `config.toml:4: servers.a.tools.t.rate: want "N/s", "N/min" or "N/h" with N from 1 to 10000, got "3"`},
		{name: "tool rate action unknown", src: "[servers.a]\ncommand = \"x\"\n[servers.a.tools.t]\nrate = \"3/s\"\nrate_action = \"block\"\n", err: `config.toml:5: servers.a.tools.t.rate_action: want ask|deny, got "block"`},
		{name: "server rate action alone", src: "[servers.a]\ncommand = \"x\"\nrate_action = \"deny\"\n", err: "config.toml:3: servers.a.rate_action: set without rate beside it"},
		{
			name: "resources and prompts policy",
			src:  "[servers.a]\ncommand = \"x\"\nresources = \"ask\"\nprompts = \"deny\"\n",
			want: cfg(func(c *Config) {
				c.Servers = []Server{{Name: "a", Transport: TransportStdio, Command: "x", ConnectTimeout: 15 * time.Second, CallTimeout: 60 * time.Second, Resources: trust.Ask, Prompts: trust.Deny}}
			}),
		},
		{name: "resources policy unknown", src: "[servers.a]\ncommand = \"x\"\nresources = \"maybe\"\n", err: `config.toml:3: servers.a.resources: want allow|ask|deny, got "maybe"`},
		{name: "prompts policy wrong type", src: "[servers.a]\ncommand = \"x\"\nprompts = true\n", err: `config.toml:3: servers.a.prompts: want a string, got boolean`},
		{name: "elicitation unknown", src: "[servers.a]\ncommand = \"x\"\nelicitation = \"always\"\n", err: `config.toml:3: servers.a.elicitation: want during-calls|anytime, got "always"`},
		{
			name: "design example with mail's command",
			src:  designExample + mailServer,
			env:  map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/state", "WEB_TOKEN": "t0k"},
			want: cfg(func(c *Config) {
				c.Gateway = &Gateway{Listen: "127.0.0.1:7878"}
				c.Servers = []Server{
					{
						Name: "mail", Transport: TransportStdio, Command: "airlock",
						Args:           []string{"demo-server", "mail"},
						ConnectTimeout: 15 * time.Second, CallTimeout: 60 * time.Second,
						Tools: map[string]Tool{"send_email": {
							Asserted: trust.Hints{OpenWorld: ptr(true)},
							Labels:   []trust.Leg{trust.LegExfiltration},
						}},
					},
					{
						Name: "notes", Transport: TransportStdio, Command: "airlock",
						Args:           []string{"demo-server", "notes"},
						Env:            map[string]string{"NOTES_DIR": "/tmp/notes"},
						ConnectTimeout: 15 * time.Second, CallTimeout: 60 * time.Second,
						Trust:  trust.Trusted,
						Labels: []trust.Leg{trust.LegPrivateData},
						Tools:  map[string]Tool{"delete_note": {Policy: trust.Ask}},
					},
					{
						Name: "web", Transport: TransportHTTP, URL: "http://127.0.0.1:9000/mcp",
						Headers:        map[string]string{"Authorization": "Bearer t0k"},
						ConnectTimeout: 15 * time.Second, CallTimeout: 60 * time.Second,
					},
				}
			}),
		},
		{
			name: "top-level keys and policy",
			src: `state_dir = "/var/lib/airlock"
[policy]
read = "ask"
write = "deny"
destructive = "deny"
approval_timeout = "30s"
[audit]
path = "/var/log/airlock.jsonl"
`,
			want: cfg(func(c *Config) {
				c.StateDir = "/var/lib/airlock"
				c.Policy = trust.Policy{Read: trust.Ask, Write: trust.Deny, Destructive: trust.Deny}
				c.ApprovalTimeout = 30 * time.Second
				c.AuditPath = "/var/log/airlock.jsonl"
			}),
		},
		{
			name: "audit decisions written, not synced, before forwarding",
			src:  "[audit]\nsync_before_forward = false\n",
			want: cfg(func(c *Config) { c.AuditDecisionsUnsynced = true }),
		},
		{
			name: "audit decisions synced before forwarding, said outright",
			src:  "[audit]\nsync_before_forward = true\n",
			want: cfg(func(c *Config) {}),
		},
		{
			name: "audit sync_before_forward not a boolean",
			src:  "[audit]\npath = \"/var/log/a.jsonl\"\nsync_before_forward = \"no\"\n",
			err:  `config.toml:3: audit.sync_before_forward: want true or false, got string`,
		},
		{
			name: "audit segment size",
			src:  "[audit]\nsegment_bytes = 1048576\n",
			want: cfg(func(c *Config) { c.AuditSegmentBytes = 1 << 20 }),
		},
		{
			name: "audit segment size not positive",
			src:  "[audit]\nsegment_bytes = 0\n",
			err:  `config.toml:2: audit.segment_bytes: want a positive integer up to 1099511627776, got 0`,
		},
		{
			name: "state dir falls back to HOME when XDG_STATE_HOME is relative",
			src:  ``,
			env:  map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "rel"},
			want: cfg(func(c *Config) { c.StateDir = "/home/u/.local/state/airlock" }),
		},
		{
			name: "gateway table without listen is off",
			src:  "[gateway]\n",
			want: cfg(func(c *Config) { c.Gateway = &Gateway{} }),
		},
		{
			name: "gateway on ::1",
			src:  "[gateway]\nlisten = \"[::1]:9\"\n",
			want: cfg(func(c *Config) { c.Gateway = &Gateway{Listen: "[::1]:9"} }),
		},
		{
			name: "gateway on localhost",
			src:  "[gateway]\nlisten = \"localhost:0\"\n",
			want: cfg(func(c *Config) { c.Gateway = &Gateway{Listen: "localhost:0"} }),
		},
		{
			name: "gateway on 127.1.2.3",
			src:  "[gateway]\nlisten = \"127.1.2.3:80\"\n",
			want: cfg(func(c *Config) { c.Gateway = &Gateway{Listen: "127.1.2.3:80"} }),
		},
		{
			name: "gateway name budget",
			src:  "[gateway]\nname_budget = 20\n",
			want: cfg(func(c *Config) { c.Gateway = &Gateway{NameBudget: 20} }),
		},
		{
			name: "gateway remote when allowed",
			src:  "[gateway]\nlisten = \"0.0.0.0:7878\"\nallow_remote = true\n",
			want: cfg(func(c *Config) { c.Gateway = &Gateway{Listen: "0.0.0.0:7878", AllowRemote: true} }),
		},
		{
			name: "servers sorted, sse, explicit stdio, hints",
			src: `[servers.zed]
command = "srv"
transport = "stdio"
cwd = "/tmp"
call_timeout = "5m"
[servers.alpha]
url = "https://example.com/sse"
transport = "sse"
protocol = "2025-11-25"
connect_timeout = "1s"
trust = "blocked"
labels = ["untrusted-content", "exfiltration"]
[servers.alpha.tools.rm]
policy = "deny"
read_only = false
destructive = true
idempotent = true
open_world = false
`,
			want: cfg(func(c *Config) {
				c.Servers = []Server{
					{
						Name: "alpha", Transport: TransportSSE, URL: "https://example.com/sse",
						Protocol: "2025-11-25", ConnectTimeout: time.Second, CallTimeout: DefaultCallTimeout,
						Trust:  trust.BlockedServer,
						Labels: []trust.Leg{trust.LegUntrustedContent, trust.LegExfiltration},
						Tools: map[string]Tool{"rm": {Policy: trust.Deny, Asserted: trust.Hints{
							ReadOnly: ptr(false), Destructive: ptr(true), Idempotent: ptr(true), OpenWorld: ptr(false),
						}}},
					},
					stdio("zed", func(s *Server) { s.Cwd = "/tmp"; s.CallTimeout = 5 * time.Minute }),
				}
			}),
		},
		{
			name: "expansion of ${NAME} in args, env, url and header values",
			src: `[servers.a]
command = "srv"
args = ["${A}"]
env = { X = "${A}-${B_2}", Y = "$A $ ${A}$", Z = "" }
[servers.b]
url = "http://127.0.0.1/${A}"
headers = { "X-Key" = "${A}" }
`,
			env: map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/state", "A": "a", "B_2": ""},
			want: cfg(func(c *Config) {
				c.Servers = []Server{
					stdio("a", func(s *Server) {
						s.Args = []string{"a"}
						s.Env = map[string]string{"X": "a-", "Y": "$A $ a$", "Z": ""}
					}),
					{
						Name: "b", Transport: TransportHTTP, URL: "http://127.0.0.1/a",
						Headers:        map[string]string{"X-Key": "a"},
						ConnectTimeout: DefaultConnectTimeout, CallTimeout: DefaultCallTimeout,
					},
				}
			}),
		},
		{
			name: "oauth tables",
			src: `[servers.a]
url = "https://mcp.example.com/mcp"
[servers.a.oauth]
[servers.b]
url = "https://mcp.example.com/b"
headers = { X-Team = "t" }
[servers.b.oauth]
client_id = "airlock-cli"
client_secret = "${B_SECRET}"
issuer = "https://auth.example.com"
scopes = ["mcp:read", "offline_access"]
redirect_port = 8765
[servers.c]
url = "https://mcp.example.com/c"
oauth = { client_metadata_url = "https://airlock.example/client.json" }
`,
			env: map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/state", "B_SECRET": "shh"},
			want: cfg(func(c *Config) {
				web := func(name, url string, o *OAuth) Server {
					return Server{Name: name, Transport: TransportHTTP, URL: url, OAuth: o,
						ConnectTimeout: DefaultConnectTimeout, CallTimeout: DefaultCallTimeout}
				}
				b := web("b", "https://mcp.example.com/b", &OAuth{
					ClientID: "airlock-cli", ClientSecret: "shh", Issuer: "https://auth.example.com",
					Scopes: []string{"mcp:read", "offline_access"}, RedirectPort: 8765,
				})
				b.Headers = map[string]string{"X-Team": "t"}
				c.Servers = []Server{
					web("a", "https://mcp.example.com/mcp", &OAuth{}),
					b,
					web("c", "https://mcp.example.com/c", &OAuth{ClientMetadataURL: "https://airlock.example/client.json"}),
				}
			}),
		},
		{
			name: "oauth errors",
			src: `[servers.a]
command = "srv"
oauth = {}
[servers.b]
url = "https://mcp.example.com/b"
headers = { authorization = "Bearer x" }
[servers.b.oauth]
client_secret = "${UNSET}"
issuer = "auth.example.com"
client_metadata_url = "https://airlock.example/"
scopes = ["a b", ""]
redirect_port = 70000
trsut = 1
[servers.c]
url = "https://mcp.example.com/c"
transport = "sse"
[servers.c.oauth]
client_secret = "x"
[servers.e]
url = "https://mcp.example.com/e"
oauth = { redirect_port = "80" }
`,
			err: `config.toml:3: servers.a.oauth: OAuth is only for http servers (streamable HTTP), not stdio
config.toml:6: servers.b.headers.authorization: OAuth sets the Authorization header: remove it, or the [servers.b.oauth] table
config.toml:8: servers.b.oauth.client_secret: environment variable UNSET is not set
config.toml:9: servers.b.oauth.issuer: only with client_id: it says which authorization server that client belongs to
config.toml:9: servers.b.oauth.issuer: want an http or https URL, got scheme ""
config.toml:10: servers.b.oauth.client_metadata_url: want an https URL with a path, where the client ID metadata document is served
config.toml:11: servers.b.oauth.scopes[0]: want a scope token: printable ASCII without spaces, quotes or backslashes, got "a b"
config.toml:11: servers.b.oauth.scopes[1]: want a scope token: printable ASCII without spaces, quotes or backslashes, got ""
config.toml:12: servers.b.oauth.redirect_port: want a port from 0 to 65535, got 70000
config.toml:13: unknown key servers.b.oauth.trsut
config.toml:17: servers.c.oauth: OAuth is only for http servers (streamable HTTP), not sse
config.toml:18: servers.c.oauth.client_secret: only with client_id
config.toml:21: servers.e.oauth.redirect_port: want an integer, got string`,
		},
		{
			name: "oauth not a table",
			src:  "[servers.d]\nurl = \"https://mcp.example.com/d\"\noauth = \"yes\"\n",
			err:  `config.toml:3: servers.d.oauth: want a table, got string`,
		},
		{
			name: "quoted keys",
			src:  "[servers.\"we\\u0062\"]\ncommand = \"srv\"\n['servers'.'web'.tools.'a.b']\npolicy = \"allow\"\n",
			want: cfg(func(c *Config) {
				c.Servers = []Server{stdio("web", func(s *Server) { s.Tools = map[string]Tool{"a.b": {Policy: trust.Allow}} })}
			}),
		},

		// TOML syntax.
		{
			name: "syntax: unterminated string",
			src:  "[policy]\nread = \"allow\n",
			err:  `config.toml:2:14: strings cannot contain newlines`,
		},
		{
			name: "syntax: duplicate key",
			src:  "[policy]\nread = \"allow\"\nread = \"ask\"\n",
			err:  `config.toml:3:1: Key 'policy.read' has already been defined.`,
		},
		{
			name: "syntax: bad value",
			src:  "[gateway]\n\nlisten = 127.0.0.1\n",
			err:  `config.toml:3:10: Invalid float value: "127.0.0.1"`,
		},

		// Unknown keys.
		{
			name: "unknown key",
			src:  "[servers.web]\nurl = \"http://127.0.0.1:9000/mcp\"\ntrsut = \"trusted\"\n",
			err:  `config.toml:3: unknown key servers.web.trsut`,
		},
		{
			name: "unknown keys sorted by line, reported once per table",
			src: `polcy = "x"
[policy]
reed = "allow"
[servers.web]
url = "http://127.0.0.1:9000/mcp"
Trust = "trusted"
[servers.web.tools.t]
polcy = "ask"
hints = { read_only = true }
[extra.deep]
a = 1
b = 2
`,
			err: `config.toml:1: unknown key polcy
config.toml:3: unknown key policy.reed
config.toml:6: unknown key servers.web.Trust; did you mean trust?
config.toml:8: unknown key servers.web.tools.t.polcy
config.toml:9: unknown key servers.web.tools.t.hints
config.toml:10: unknown key extra.deep`,
		},
		{
			name: "table name with wrong case",
			src:  "[Servers.web]\nurl = \"http://127.0.0.1:9000/mcp\"\n",
			err:  `config.toml:1: unknown key Servers; did you mean servers?`,
		},
		{
			name: "blocked tier in policy",
			src:  "[policy]\nread = \"allow\"\nblocked = \"allow\"\n",
			err:  `config.toml:3: policy.blocked: the blocked tier is always deny; only read, write and destructive can be set`,
		},
		{
			name: "blocked tier in an inline policy table",
			src:  "policy = { read = \"allow\", blocked = \"deny\" }\n",
			err:  `config.toml:1: policy.blocked: the blocked tier is always deny; only read, write and destructive can be set`,
		},

		// Tables that are not tables.
		{
			name: "tables of the wrong type",
			src: `policy = "ask"
[[servers.web]]
url = "http://127.0.0.1:9000/mcp"
[servers.x]
tools = 1
[servers.y.tools]
t = "deny"
`,
			err: `config.toml:1: policy: want a table, got string
config.toml:2: servers.web: want a table, got array of tables
config.toml:5: servers.x.tools: want a table, got integer
config.toml:7: servers.y.tools.t: want a table, got string`,
		},

		// Values.
		{
			name: "trust",
			src:  "[servers.web]\nurl = \"http://127.0.0.1:9000/mcp\"\ntrust = \"yes\"\n",
			err:  `config.toml:3: servers.web.trust: want trusted|untrusted|blocked, got "yes"`,
		},
		{
			name: "policy actions",
			src:  "[policy]\nread = \"maybe\"\nwrite = \"blocked\"\ndestructive = \"\"\n",
			err: `config.toml:2: policy.read: want allow|ask|deny, got "maybe"
config.toml:3: policy.write: want allow|ask|deny, got "blocked"
config.toml:4: policy.destructive: want allow|ask|deny, got ""`,
		},
		{
			name: "tool policy",
			src:  "[servers.x]\ncommand = \"srv\"\n[servers.x.tools.rm]\npolicy = \"blocked\"\n",
			err:  `config.toml:4: servers.x.tools.rm.policy: want allow|ask|deny, got "blocked"`,
		},
		{
			name: "server names",
			src: `[servers.Web]
command = "srv"
[servers.my_web]
command = "srv"
[servers."my web"]
command = "srv"
[servers.abcdefghij-abcdefghij-abcdefghij-x]
command = "srv"
[servers.-web]
command = "srv"
[servers.abcdefghij-abcdefghij-abcdefghi-]
command = "srv"
`,
			err: `config.toml:1: servers.Web: server name must match ^[a-z0-9][a-z0-9-]{0,31}$
config.toml:3: servers.my_web: server name must match ^[a-z0-9][a-z0-9-]{0,31}$
config.toml:5: servers."my web": server name must match ^[a-z0-9][a-z0-9-]{0,31}$
config.toml:7: servers.abcdefghij-abcdefghij-abcdefghij-x: server name must match ^[a-z0-9][a-z0-9-]{0,31}$
config.toml:9: servers.-web: server name must match ^[a-z0-9][a-z0-9-]{0,31}$`,
		},
		{
			name: "command and url",
			src:  "[servers.x]\ncommand = \"srv\"\nurl = \"http://127.0.0.1/mcp\"\n",
			err:  `config.toml:1: servers.x: set command or url, not both`,
		},
		{
			name: "neither command nor url",
			src:  "[servers.x]\ntrust = \"trusted\"\n",
			err:  `config.toml:1: servers.x: set command (stdio) or url (http, sse)`,
		},
		{
			name: "design example verbatim: servers.mail has only a tool table",
			src:  designExample,
			env:  map[string]string{"HOME": "/home/u", "WEB_TOKEN": "t0k"},
			err:  `config.toml:31: servers.mail: set command (stdio) or url (http, sse)`,
		},
		{
			name: "unknown transport",
			src:  "[servers.x]\nurl = \"http://127.0.0.1/mcp\"\ntransport = \"ws\"\n",
			err:  `config.toml:3: servers.x.transport: want stdio|http|sse, got "ws"`,
		},
		{
			name: "unknown transport with command and url",
			src:  "[servers.x]\nurl = \"http://127.0.0.1/mcp\"\ncommand = \"srv\"\ntransport = \"ws\"\n",
			err: `config.toml:1: servers.x: set command or url, not both
config.toml:4: servers.x.transport: want stdio|http|sse, got "ws"`,
		},
		{
			name: "transport against command or url",
			src: `[servers.a]
url = "http://127.0.0.1/mcp"
transport = "stdio"
[servers.b]
command = "srv"
transport = "http"
[servers.c]
command = "srv"
transport = "sse"
`,
			err: `config.toml:3: servers.a.transport: stdio needs command, not url
config.toml:6: servers.b.transport: http needs url, not command
config.toml:9: servers.c.transport: sse needs url, not command`,
		},
		{
			name: "keys of the other transport",
			src: `[servers.a]
url = "http://127.0.0.1/mcp"
args = ["x"]
env = { A = "b" }
cwd = "/tmp"
[servers.b]
command = "srv"
headers = { A = "b" }
`,
			err: `config.toml:3: servers.a.args: only for stdio servers (command)
config.toml:4: servers.a.env: only for stdio servers (command)
config.toml:5: servers.a.cwd: only for stdio servers (command)
config.toml:8: servers.b.headers: only for http and sse servers (url)`,
		},
		{
			name: "urls",
			src: `[servers.a]
url = "ftp://127.0.0.1/mcp"
[servers.b]
url = "http://[::1/mcp"
[servers.c]
url = "http:///mcp"
[servers.d]
url = "localhost:9000/mcp"
`,
			err: `config.toml:2: servers.a.url: want an http or https URL, got scheme "ftp"
config.toml:4: servers.b.url: invalid URL: missing ']' in host
config.toml:6: servers.c.url: URL has no host
config.toml:8: servers.d.url: want an http or https URL, got scheme "localhost"`,
		},
		{
			name: "durations",
			src: `[policy]
approval_timeout = "-1m"
[servers.x]
command = "srv"
connect_timeout = "5 parsecs"
call_timeout = "0s"
[servers.y]
command = "srv"
connect_timeout = 15
`,
			err: `config.toml:2: policy.approval_timeout: want a positive duration, got "-1m0s"
config.toml:5: servers.x.connect_timeout: invalid duration "5 parsecs"
config.toml:6: servers.x.call_timeout: want a positive duration, got "0s"
config.toml:9: servers.y.connect_timeout: want a duration such as "15s", got integer`,
		},
		{
			name: "labels",
			src: `[servers.x]
command = "srv"
labels = ["private-data", "pii", 3, "secret", "persistent"]
[servers.x.tools.t]
labels = "exfiltration"
[servers.x.tools.u]
labels = ["untrusted"]
`,
			err: `config.toml:3: servers.x.labels[1]: want private-data|untrusted-content|exfiltration|persistent, got "pii"
config.toml:3: servers.x.labels[2]: want a string, got integer
config.toml:3: servers.x.labels[3]: want private-data|untrusted-content|exfiltration|persistent, got "secret"
config.toml:5: servers.x.tools.t.labels: want an array of strings, got string
config.toml:7: servers.x.tools.u.labels[0]: want private-data|untrusted-content|exfiltration|persistent, got "untrusted"`,
		},
		{
			name: "protocol",
			src:  "[servers.x]\ncommand = \"srv\"\nprotocol = \"2025-01-01\"\n",
			err:  `config.toml:3: servers.x.protocol: want "" or one of 2024-11-05|2025-03-26|2025-06-18|2025-11-25|2026-07-28, got "2025-01-01"`,
		},
		{
			name: "unset variables",
			src: `[servers.web]
url = "http://127.0.0.1:9000/mcp"
headers = { Authorization = "Bearer ${WEB_TOKEN}", "X-Two" = "${A}${B}${A}", "X-Bad" = "sk-live-123${oops" }
[servers.x]
command = "srv"
env = { TOKEN = "${TOKEN}", "" = "v", "A=B" = "v" }
`,
			err: `config.toml:3: servers.web.headers.Authorization: environment variable WEB_TOKEN is not set
config.toml:3: servers.web.headers.X-Bad: malformed ${...} reference: want ${NAME} or ${NAME:-default}, NAME made of letters, digits and _, not starting with a digit
config.toml:3: servers.web.headers.X-Two: environment variable A is not set
config.toml:3: servers.web.headers.X-Two: environment variable B is not set
config.toml:6: servers.x.env."": invalid environment variable name
config.toml:6: servers.x.env."A=B": invalid environment variable name
config.toml:6: servers.x.env.TOKEN: environment variable TOKEN is not set`,
		},
		{
			name: "variables in env, args, url and headers, with defaults, and inherit_env",
			src: `[servers.x]
command = "srv"
args = ["--dir", "${DATA_DIR}", "--mode=${MODE:-fast}", "${EMPTY:-}"]
env = { TOKEN = "${TOKEN}", LEVEL = "${LEVEL:-info}", SET = "${SET_EMPTY:-x}" }
inherit_env = ["SSH_AUTH_SOCK", "http_proxy"]
[servers.web]
url = "https://${HOST:-api.example.com}/mcp?team=${TEAM}"
headers = { Authorization = "Bearer ${TOKEN}", X-Default = "${NOPE:-a:-b}" }
`,
			env: map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/state", "DATA_DIR": "/data", "TOKEN": "t0k", "TEAM": "t1", "SET_EMPTY": ""},
			want: cfg(func(c *Config) {
				c.Servers = []Server{
					{
						Name: "web", Transport: TransportHTTP, URL: "https://api.example.com/mcp?team=t1",
						Headers:        map[string]string{"Authorization": "Bearer t0k", "X-Default": "a:-b"},
						ConnectTimeout: 15 * time.Second, CallTimeout: 60 * time.Second,
					},
					{
						Name: "x", Transport: TransportStdio, Command: "srv",
						Args:           []string{"--dir", "/data", "--mode=fast", ""},
						Env:            map[string]string{"TOKEN": "t0k", "LEVEL": "info", "SET": "x"},
						InheritEnv:     []string{"SSH_AUTH_SOCK", "http_proxy"},
						ConnectTimeout: 15 * time.Second, CallTimeout: 60 * time.Second,
					},
				}
			}),
		},
		{
			name: "unset variables in args and url, bad inherit_env",
			src: `[servers.x]
command = "srv"
args = ["ok", "--key=${API_KEY}"]
inherit_env = ["GOOD", "BAD=NAME", 3]
[servers.web]
url = "https://h/mcp?k=${URL_KEY}"
inherit_env = ["A"]
[servers.y]
command = "srv"
inherit_env = "HOME"
`,
			err: `config.toml:3: servers.x.args[1]: environment variable API_KEY is not set
config.toml:4: servers.x.inherit_env[1]: want an environment variable name (letters, digits and _, not starting with a digit), got "BAD=NAME"
config.toml:4: servers.x.inherit_env[2]: want a string, got integer
config.toml:6: servers.web.url: environment variable URL_KEY is not set
config.toml:7: servers.web.inherit_env: only for stdio servers (command)
config.toml:10: servers.y.inherit_env: want an array of strings, got string`,
		},
		{
			name: "malformed references",
			src:  "[servers.web]\nurl = \"http://127.0.0.1/mcp\"\nheaders = { A = \"${}\", B = \"${1X}\", C = \"${A-B}\" }\n",
			err: `config.toml:3: servers.web.headers.A: malformed ${...} reference: want ${NAME} or ${NAME:-default}, NAME made of letters, digits and _, not starting with a digit
config.toml:3: servers.web.headers.B: malformed ${...} reference: want ${NAME} or ${NAME:-default}, NAME made of letters, digits and _, not starting with a digit
config.toml:3: servers.web.headers.C: malformed ${...} reference: want ${NAME} or ${NAME:-default}, NAME made of letters, digits and _, not starting with a digit`,
		},
		{
			name: "bad headers",
			src:  "[servers.web]\nurl = \"http://127.0.0.1/mcp\"\nheaders = { \"X Y\" = \"v\", Auth = \"${TOKEN}\", N = 5 }\n",
			env:  map[string]string{"HOME": "/h", "TOKEN": "secret\r\nX-Injected: 1"},
			err: `config.toml:3: servers.web.headers."X Y": invalid header name
config.toml:3: servers.web.headers.Auth: header value has a control character
config.toml:3: servers.web.headers.N: want a string, got integer`,
		},
		{
			name: "gateway not on loopback",
			src:  "[gateway]\nlisten = \"0.0.0.0:7878\"\n",
			err:  `config.toml:2: gateway.listen: host "0.0.0.0" is not loopback (127.x.x.x, ::1 or localhost); set gateway.allow_remote = true to listen on it`,
		},
		{
			name: "gateway on all interfaces",
			src:  "[gateway]\nlisten = \":7878\"\n",
			err:  `config.toml:2: gateway.listen: host "" is not loopback (127.x.x.x, ::1 or localhost); set gateway.allow_remote = true to listen on it`,
		},
		{
			name: "gateway name budget out of range",
			src:  "[gateway]\nname_budget = 65\n",
			err:  `config.toml:2: gateway.name_budget: want an integer from 1 to 64 (the longest tool name agent clients accept, their prefix included), got 65`,
		},
		{
			name: "gateway name budget zero or not a number",
			src:  "[gateway]\nname_budget = 0\n",
			err:  `config.toml:2: gateway.name_budget: want an integer from 1 to 64 (the longest tool name agent clients accept, their prefix included), got 0`,
		},
		{
			name: "gateway name budget a string",
			src:  "[gateway]\nlisten = \"127.0.0.1:1\"\nname_budget = \"44\"\n",
			err:  `config.toml:3: gateway.name_budget: want an integer, got string`,
		},
		{
			name: "gateway without port",
			src:  "[gateway]\nlisten = \"7878\"\n",
			err:  `config.toml:2: gateway.listen: want host:port, got "7878"`,
		},
		{
			name: "gateway port and allow_remote",
			src:  "[gateway]\nlisten = \"localhost:78787\"\nallow_remote = \"yes\"\n",
			err: `config.toml:2: gateway.listen: want a port from 0 to 65535, got "78787"
config.toml:3: gateway.allow_remote: want true or false, got string`,
		},
		{
			name: "relative paths",
			src:  "state_dir = \"~/.airlock\"\n[audit]\npath = \"audit.jsonl\"\n",
			err: `config.toml:1: state_dir: want an absolute path, got "~/.airlock"
config.toml:3: audit.path: want an absolute path, got "audit.jsonl"`,
		},
		{
			name: "values of the wrong type",
			src: `state_dir = 1
[policy]
read = true
[servers.x]
command = ["srv"]
args = "a b"
env = "A=b"
trust = 1
[servers.x.tools.t]
read_only = "yes"
open_world = 1
`,
			err: `config.toml:1: state_dir: want a string, got integer
config.toml:3: policy.read: want a string, got boolean
config.toml:5: servers.x.command: want a string, got array
config.toml:6: servers.x.args: want an array of strings, got string
config.toml:7: servers.x.env: want a table of strings, got string
config.toml:8: servers.x.trust: want a string, got integer
config.toml:10: servers.x.tools.t.read_only: want true or false, got string
config.toml:11: servers.x.tools.t.open_world: want true or false, got integer`,
		},
		{
			name: "array of inline tables is a type error, not unknown keys",
			src:  "[servers.x]\ncommand = \"srv\"\nargs = [{ a = 1 }]\n",
			err:  `config.toml:3: servers.x.args[0]: want a string, got table`,
		},
		{
			name: "empty tool name",
			src:  "[servers.x]\ncommand = \"srv\"\n[servers.x.tools.\"\"]\npolicy = \"ask\"\n",
			err:  `config.toml:3: servers.x.tools."": tool name is empty`,
		},
		{
			name: "lines after multi-line values",
			src: `[servers.x]
command = "srv"
args = [
  "a", # a comment with ] and " in it
  """multi
line ] "quoted" """,
  '''literal
]''',
]
env = {
  A = "x", # TOML 1.1: newlines in inline tables
}
description = """
trust = "no" ""\"
"""
trust = "no"
`,
			err: `config.toml:13: unknown key servers.x.description
config.toml:16: servers.x.trust: want trusted|untrusted|blocked, got "no"`,
		},
		{
			name: "lines of dotted and quoted keys",
			src: `servers.x.command = "srv"
servers."x".tools."a b".policy = "maybe"
[servers."W\u0065b"]
command = "srv"
`,
			err: `config.toml:2: servers.x.tools."a b".policy: want allow|ask|deny, got "maybe"
config.toml:3: servers.Web: server name must match ^[a-z0-9][a-z0-9-]{0,31}$`,
		},
		{
			name: "errors of all kinds in line order",
			src: `[policy]
read = "maybe"
[servers.Web]
url = "ws://127.0.0.1/mcp"
trsut = "yes"
headers = { Authorization = "Bearer ${WEB_TOKEN}" }
`,
			err: `config.toml:2: policy.read: want allow|ask|deny, got "maybe"
config.toml:3: servers.Web: server name must match ^[a-z0-9][a-z0-9-]{0,31}$
config.toml:4: servers.Web.url: want an http or https URL, got scheme "ws"
config.toml:5: unknown key servers.Web.trsut
config.toml:6: servers.Web.headers.Authorization: environment variable WEB_TOKEN is not set`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env
			if env == nil {
				env = baseEnv
			}
			got, gotErr := parseText(tt.src, "config.toml", env)
			if diff := cmp.Diff(tt.err, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got, ignoreAsWritten); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			if got != nil {
				if err := got.Validate(); err != nil {
					t.Errorf("Validate of a parsed config: %v", err)
				}
			}
		})
	}
}

func TestParseNeverEchoesSecrets(t *testing.T) {
	const secret = "s3cr3t-value"
	src := `[servers.web]
url = "http://127.0.0.1/mcp"
headers = { "Bad Name" = "${T}", B = "` + secret + `${MISSING}", C = "` + secret + `${bad-name}" }
[servers.x]
url = "http://127.0.0.1/mcp"
headers = { A = "${T}" }
env = { A = "` + secret + `${MISSING}", B = "${T}" }
[servers.o]
url = "http://127.0.0.1/mcp"
oauth = { client_secret = "` + secret + `${MISSING}", redirect_port = "` + secret + `" }
[servers.p]
url = "http://127.0.0.1/mcp"
oauth = { client_secret = "` + secret + `\u0001" }
`
	env := envOf(map[string]string{"HOME": "/h", "T": secret + "\n"})
	_, err := Parse([]byte(src), "config.toml", env)
	if err == nil {
		t.Fatal("Parse succeeded")
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error echoes a secret:\n%v", err)
	}
}

func TestErrorFields(t *testing.T) {
	src := "[servers.web]\nurl = \"http://127.0.0.1/mcp\"\n\ntrust = \"yes\"\nlabels = [\"pii\"]\n"
	_, err := Parse([]byte(src), "/etc/airlock.toml", envOf(baseEnv))
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %T does not unwrap to many", err)
	}
	var got []Error
	for _, e := range joined.Unwrap() {
		var ce *Error
		if !errors.As(e, &ce) {
			t.Fatalf("%T is not an *Error", e)
		}
		got = append(got, Error{File: ce.File, Line: ce.Line, Col: ce.Col, Key: ce.Key, Msg: ce.Msg})
	}
	want := []Error{
		{File: "/etc/airlock.toml", Line: 4, Key: "servers.web.trust", Msg: `want trusted|untrusted|blocked, got "yes"`},
		{File: "/etc/airlock.toml", Line: 5, Key: "servers.web.labels[0]", Msg: `want private-data|untrusted-content|exfiltration|persistent, got "pii"`},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Error{})); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}

	_, err = Parse([]byte("a = \n"), "", envOf(baseEnv))
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("syntax error %T is not an *Error", err)
	}
	if diff := cmp.Diff(`config:1:5: expected value but found '\n' instead`, se.Error()); diff != "" {
		t.Errorf("syntax error (-want +got):\n%s", diff)
	}
	if se.Line != 1 || se.Col != 5 {
		t.Errorf("syntax error at %d:%d, want 1:5", se.Line, se.Col)
	}
}

func TestValidate(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
	c := Default()
	c.Policy.Read = trust.ActionUnset
	c.ApprovalTimeout = 0
	c.Gateway = &Gateway{Listen: "7878"}
	c.Servers = []Server{
		{Name: "a", Command: "srv", Transport: TransportStdio, ConnectTimeout: time.Second, CallTimeout: time.Second},
		{Name: "a", Command: "srv", ConnectTimeout: time.Second, CallTimeout: time.Second},
		{
			Name: "b", URL: "http://127.0.0.1/", Transport: TransportHTTP, Trust: trust.ServerTrust(7),
			Tools: map[string]Tool{"t": {Policy: trust.Action(9)}},
		},
	}
	want := `gateway.listen: want host:port, got "7878"
policy.approval_timeout: want a positive duration, got "0s"
policy.read: want allow|ask|deny, got ""
servers.a: duplicate server name
servers.a.transport: want stdio|http|sse, got ""
servers.b.call_timeout: want a positive duration, got "0s"
servers.b.connect_timeout: want a positive duration, got "0s"
servers.b.tools.t.policy: want allow|ask|deny, got "action(9)"
servers.b.trust: want trusted|untrusted|blocked, got "trust(7)"`
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate succeeded")
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	t.Setenv("XDG_STATE_HOME", "/xdg/state")
	t.Setenv("AIRLOCK_TEST_TOKEN", "tok")
	src := "[servers.web]\nurl = \"http://127.0.0.1/mcp\"\nheaders = { A = \"${AIRLOCK_TEST_TOKEN}\" }\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Path: path, Policy: trust.DefaultPolicy(), ApprovalTimeout: DefaultApprovalTimeout,
		StateDir: "/xdg/state/airlock",
		Servers: []Server{{
			Name: "web", Transport: TransportHTTP, URL: "http://127.0.0.1/mcp", Headers: map[string]string{"A": "tok"},
			ConnectTimeout: DefaultConnectTimeout, CallTimeout: DefaultCallTimeout,
		}},
	}
	if diff := cmp.Diff(want, got, ignoreAsWritten); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}

	if err := os.WriteFile(path, []byte("[polcy]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	if diff := cmp.Diff(path+":1: unknown key polcy", errText(err)); diff != "" {
		t.Errorf("Load of a bad file (-want +got):\n%s", diff)
	}

	_, err = Load(filepath.Join(dir, "missing.toml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want fs.ErrNotExist", err)
	}
}

// ignoreAsWritten leaves out the unexpanded args and url, checked on their own in
// TestParse_AsWrittenKeepsReferences.
var ignoreAsWritten = cmpopts.IgnoreFields(Server{}, "ArgsAsWritten", "URLAsWritten")

// TestParse_AsWrittenKeepsReferences: args and url are expanded, and kept as written
// too, so what is stored (pin identities) never holds an expanded secret.
func TestParse_AsWrittenKeepsReferences(t *testing.T) {
	src := "[servers.x]\ncommand = \"srv\"\nargs = [\"--key=${K}\", 5, \"b\"]\n[servers.y]\nurl = \"https://h/mcp?k=${K}\"\n"
	_, err := Parse([]byte(src), "config.toml", envOf(map[string]string{"HOME": "/h", "K": "s3cret"}))
	if err == nil || !strings.Contains(err.Error(), "servers.x.args[1]: want a string, got integer") {
		t.Fatalf("Parse: %v", err)
	}
	src = strings.Replace(src, ", 5", "", 1)
	c, err := Parse([]byte(src), "config.toml", envOf(map[string]string{"HOME": "/h", "K": "s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	x, y := c.Servers[0], c.Servers[1]
	if !slices.Equal(x.Args, []string{"--key=s3cret", "b"}) || !slices.Equal(x.ArgsAsWritten, []string{"--key=${K}", "b"}) {
		t.Errorf("args %q, as written %q", x.Args, x.ArgsAsWritten)
	}
	if y.URL != "https://h/mcp?k=s3cret" || y.URLAsWritten != "https://h/mcp?k=${K}" {
		t.Errorf("url %q, as written %q", y.URL, y.URLAsWritten)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestDefaultPaths(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	for _, tt := range []struct {
		name, config, state string
		wantPath, wantState string
	}{
		{"xdg", "/xdg/config", "/xdg/state", "/xdg/config/airlock/config.toml", "/xdg/state/airlock"},
		{"unset", "", "", "/home/u/.config/airlock/config.toml", "/home/u/.local/state/airlock"},
		{"relative", "rel/config", "rel/state", "/home/u/.config/airlock/config.toml", "/home/u/.local/state/airlock"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", tt.config)
			t.Setenv("XDG_STATE_HOME", tt.state)
			path, err := DefaultPath()
			if err != nil {
				t.Fatal(err)
			}
			state, err := DefaultStateDir()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tt.wantPath, tt.wantState}, []string{path, state}); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKeyLines(t *testing.T) {
	src := "\uFEFF# comment\n" + `a = 1
b.c = "x" # c
[t]
s = 'lit'
m = """
x"""
in = { k = 1, n.o = [1, { p = 2 }] }
"q k" = 1979-05-27 07:32:00Z
[[arr]]
e = 1
[[arr]]
e = 2
`
	want := map[string]int{
		"a": 2, "b": 3, "b.c": 3, "t": 4, "t.s": 5, "t.m": 6, "t.in": 8, "t.in.k": 8,
		"t.in.n": 8, "t.in.n.o": 8, `t."q k"`: 9, "arr": 10, "arr.e": 11,
		"arr[0]": 10, "arr[1]": 12,
	}
	if diff := cmp.Diff(want, keyLines(src)); diff != "" {
		t.Errorf("keyLines (-want +got):\n%s", diff)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(designExample))
	f.Add([]byte(designExample + mailServer))
	f.Add([]byte("[gateway]\nlisten = \":7878\"\n[servers.Web]\nurl = \"ftp://x\"\ntrsut = 1\n"))
	f.Add([]byte("[servers.x]\ncommand = \"srv\"\nargs = [\n\"\"\"a\n]\"\"\", '''b''']\nenv = {\n A = \"${A}${\",\n}\n"))
	f.Add([]byte("policy = { read = \"allow\", blocked = \"deny\" }\n[[servers.y]]\n"))
	f.Add([]byte("a = \n"))
	const secret = "fuzz-secret-9c1e"
	env := func(name string) (string, bool) {
		switch name {
		case "HOME":
			return "/home/fuzz", true
		case "UNSET":
			return "", false
		}
		return secret, true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz.toml", env)
		if err != nil {
			if c != nil {
				t.Fatal("Parse returned a config and an error")
			}
			if !strings.Contains(string(data), secret) && strings.Contains(err.Error(), secret) {
				t.Fatalf("error echoes an environment value:\n%v", err)
			}
			return
		}
		for _, s := range c.Servers {
			if !validName(s.Name) {
				t.Fatalf("server name %q accepted", s.Name)
			}
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted a config that Validate rejects: %v", err)
		}
	})
}
