//go:build !linux

package main

import "os"

// drainInput is a no-op where airlock has no portable way to discard typed-ahead
// input (the questions still show everything before they read).
func drainInput(*os.File) func() { return func() {} }
