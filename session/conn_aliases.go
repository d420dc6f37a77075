package session

// The names below moved to session/conn with the connections; they are kept here
// for the packages that still say session.Ring, session.OriginBoundClient and the
// rest, until each imports conn (or the name moves on to the package it belongs to).

import (
	"net/http"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/conn"
)

// Ring keeps the newest lines of a server's stderr (conn.Ring).
type Ring = conn.Ring

// MaxMessageBytes bounds one JSON-RPC message a server sends (conn.MaxMessageBytes).
const MaxMessageBytes = conn.MaxMessageBytes

// MaxToolPages and MaxToolsPerServer bound one server's tool listing (conn.ListTools).
const MaxToolPages, MaxToolsPerServer = conn.MaxToolPages, conn.MaxToolsPerServer

// MaxCatalogPages and MaxCatalogItems bound one server's resource, template and
// prompt listings (conn.ListResources and the rest).
const MaxCatalogPages, MaxCatalogItems = conn.MaxCatalogPages, conn.MaxCatalogItems

// ErrBodyTooLarge and ErrCrossOriginRedirect are the errors of the HTTP transports.
var ErrBodyTooLarge, ErrCrossOriginRedirect = conn.ErrBodyTooLarge, conn.ErrCrossOriginRedirect

// NewRing returns a stderr ring (conn.NewRing).
func NewRing(maxBytes int, onLine func(string)) *Ring { return conn.NewRing(maxBytes, onLine) }

// OriginBoundClient is the HTTP client of a remote server (conn.OriginBoundClient).
func OriginBoundClient(url string, headers map[string]string) *http.Client {
	return conn.OriginBoundClient(url, headers)
}

// RedactURL is a URL as airlock shows it (conn.RedactURL).
func RedactURL(raw string) string { return conn.RedactURL(raw) }

// EnvNames are the environment variable names a stdio server receives (conn.EnvNames).
func EnvNames(s config.Server) []string { return conn.EnvNames(s) }
