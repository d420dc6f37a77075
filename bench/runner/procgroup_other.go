//go:build !unix

package main

import "os/exec"

// ownGroup does nothing here: killGroup kills the process, whose stdio servers end
// when their input closes.
func ownGroup(*exec.Cmd) {}

// killGroup kills cmd's process.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
