package session_test

import "github.com/airlock-mcp/airlock/session/config"

type configTool = config.Tool
