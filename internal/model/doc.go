// Package model holds the value types that the session reports and the user
// interfaces read: tools and servers as listed, calls and their outcomes, the
// questions a person answers, and the events of a session.
//
// It is a leaf: of airlock it imports only trust, and besides the standard library
// only go-sdk's mcp package, for the protocol's own values it reports as received
// (a server's Implementation and Capabilities, a read's or a get's result). It does
// no I/O and starts no goroutines, so that the UI and CLI packages can read what
// the session reports without importing the session itself.
package model
