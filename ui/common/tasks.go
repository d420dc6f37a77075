package common

// Tools that run only as tasks: a tool whose execution.taskSupport is
// "required" must be called as a task (the SEP-2663 extension: the server answers
// at once with a task the client polls). go-sdk v1.8.0 implements no tasks, so
// airlock marks such tools in the list and the detail, and a call of the
// person's explains up front instead of failing after a round trip. "optional"
// tools are called normally.

import (
	"github.com/airlock-mcp/airlock/ui/theme"
)

// Task support values of a tool's execution.taskSupport (model.ToolInfo.TaskSupport).
const (
	TaskRequired = "required"
	taskOptional = "optional"
)

// taskOnlyWhy says, in plain words, what a task-only tool means for a call.
const taskOnlyWhy = "it runs only as a task (a long-running call the client polls, MCP's tasks extension), " +
	"which airlock cannot do yet: calling it would only fail"

// TaskText is the detail view's line for a tool's task support ("" to leave it out).
func TaskText(st *theme.Styles, support string) string {
	switch support {
	case TaskRequired:
		return st.WarnText.Render("⧗ task only") + ": " + taskOnlyWhy
	case taskOptional:
		return "optional: it can run as a task; airlock calls it normally and waits for the result"
	case "", "forbidden":
		return ""
	}
	return Inline(st, support, 40) + st.Muted.Render(" (a value airlock does not know; called normally)")
}
