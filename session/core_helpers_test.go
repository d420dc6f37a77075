package session_test

import "github.com/airlock-mcp/airlock/session/config"

type (
	configT    = config.Config
	configTool = config.Tool
)
