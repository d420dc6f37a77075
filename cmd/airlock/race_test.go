//go:build race

package main

// raceBuild says the test binary was built with -race.
const raceBuild = true
