package demo

import (
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/trust"
)

// Config returns the demo's configuration, built in code: the four demo servers
// started as `airlock demo-server NAME` over stdio, docs, web and notes trusted, notes
// labelled private-data, mail untrusted, delete_note asking before it runs, the
// default policy (reads run, writes and destructive calls ask) and a two-minute
// approval timeout. Path, StateDir and AuditPath are empty and Gateway is nil: the
// caller decides where state goes and whether agents may connect. Each call returns
// a new Config that the caller may modify. config.example.toml describes the same
// servers.
func Config() *config.Config {
	server := func(name string, t trust.ServerTrust, labels ...trust.Leg) config.Server {
		return config.Server{
			Name:           name,
			Transport:      config.TransportStdio,
			Command:        "airlock",
			Args:           []string{"demo-server", name},
			ConnectTimeout: config.DefaultConnectTimeout,
			CallTimeout:    config.DefaultCallTimeout,
			Trust:          t,
			Labels:         labels,
		}
	}
	notes := server("notes", trust.Trusted, trust.LegPrivateData)
	notes.Tools = map[string]config.Tool{"delete_note": {Policy: trust.Ask}}
	return &config.Config{
		Policy:          trust.DefaultPolicy(),
		ApprovalTimeout: config.DefaultApprovalTimeout,
		Servers: []config.Server{ // sorted by name, as config.Config requires
			server("docs", trust.Trusted),
			server("mail", trust.Untrusted),
			notes,
			server("web", trust.Trusted),
		},
	}
}
