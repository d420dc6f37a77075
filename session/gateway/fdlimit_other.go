//go:build !unix

package gateway

// fdLimit is 0 where descriptors have no per-process limit to read (Windows
// handles are bounded by memory): the configured bounds apply as they are.
func fdLimit() int { return 0 }
