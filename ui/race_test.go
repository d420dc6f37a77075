//go:build race

package ui

// raceEnabled is true under the race detector, which makes timing meaningless.
const raceEnabled = true
