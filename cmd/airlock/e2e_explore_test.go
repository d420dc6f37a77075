//go:build unix

package main

import (
	"testing"
)

// On the real binary at 80x24 with the real server-everything:
// a tool that runs only as a task is marked in the list; i opens the server's info
// (capabilities, deprecated logging); r lists its resources, enter reads one
// through the engine; p lists its prompts, the argument form gets completion
// suggestions from the server (ctrl+n takes one, the second field's depend on
// the first), and ctrl+s gets the prompt, shown role by role.
func TestE2E_ExploreEverythingResourcesAndPrompts(t *testing.T) {
	s := everythingScreen(t, "trusted", "")
	s.waitFor("⧗ task only")
	s.waitFor("i info")
	s.keys("i")
	s.waitFor("Server everything")
	s.waitFor("mcp-servers/everything")
	s.waitFor("✓ resources   subscribe")
	s.waitFor("logging     deprecated")

	s.keys("r")
	s.waitFor("Resources of everything")
	s.waitFor("architecture.md")
	s.waitFor("Dynamic Text Resource")
	s.keys("\r")
	s.waitFor("Resource everything › demo://resource/static/document/archit")
	s.waitFor("Everything Server – Architecture")
	s.keys(keyEsc)
	s.waitFor("Resources of everything")
	s.keys(keyEsc)
	s.waitFor("Server everything")

	s.keys("p")
	s.waitFor("Prompts of everything")
	s.waitFor("completable-prompt")
	s.keys("j")
	s.keys("j")
	s.keys("\r")
	s.waitFor("get prompt everything › completable-prompt")
	s.keys("E")
	s.waitFor("suggested (ctrl+n): Engineering")
	s.keys("\x0e") // ctrl+n
	s.waitFor("department *  Engineering")
	s.keys(keyTab)
	s.waitFor("Alice")
	s.keys("\x0e")
	s.keys(keyCtrlS)
	s.waitFor("Prompt everything › completable-prompt")
	s.waitFor("── user")
	s.waitFor("Please promote Alice to the head of the Engineering team.")
}
