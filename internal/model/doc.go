// Package model holds the value types that the session reports and the user
// interfaces read: tools and servers as listed, calls and their outcomes, the
// questions a person answers, and the events of a session.
//
// It is a leaf: it imports only trust and the standard library, does no I/O and
// starts no goroutines, so that the UI and CLI packages can read what the session
// reports without importing the session itself.
package model
