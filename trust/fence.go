package trust

// Fence is what a stdio server's sandbox enforces, as the launcher reported it
// before the server started. The zero value is a server with no fence asked for.
// Only an applied fence changes what the risk model believes: a fence that was
// asked for and not applied is an unfenced server that says so.
type Fence struct {
	// Requested says the config asks for a sandbox.
	Requested bool
	// Applied says the launcher applied every part that was asked for.
	Applied bool
	// Network is the config's network setting: "none" or "all".
	Network string
	// Read and Write are the folders beyond the command's own that the server may
	// read and write, as written in the config ("~" kept).
	Read, Write []string
	// Detail says what was applied ("Landlock ABI 7, network namespace") or, when
	// it was not, why.
	Detail string
}

// NoNetwork reports whether the server cannot reach the network itself: its
// fence was applied with network = "none".
func (f Fence) NoNetwork() bool { return f.Applied && f.Network == "none" }
