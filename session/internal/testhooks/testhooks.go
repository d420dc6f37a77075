// Package testhooks holds the hooks that the tests of session and its rooms set
// to make a room fail on purpose; nothing outside tests sets them, and each is
// nil (no effect) unless a test set it.
package testhooks

// PinsSave, when set, runs before each write of a pins file; its error fails the
// write.
var PinsSave func() error

// RulesLook, when set, is told the path of a rules file each time the approval
// engine looks at it (one lstat each).
var RulesLook func(path string)
