package session

// The names below are those of the approval engine's and the pins' rooms, kept here
// so that cmd/ and ui/ still say session.Pins and the rest meanwhile.

import (
	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/pins"
)

type (
	Pins      = pins.Store
	PinRecord = pins.Record
)

// OpenPins opens the pins file at path (pins.Open): "" is a store in memory only.
func OpenPins(path string) (*Pins, error) { return pins.Open(path) }

// Identity is the key a server's pins are stored under (pins.Identity).
func Identity(s config.Server) string { return pins.Identity(s) }
