//go:build !unix

package main

// noRaceExitSleep leaves the race runtime's exit sleep alone where a process
// cannot be started again in place.
func noRaceExitSleep() {}
