// Package agentmodel is test support: scripted model endpoints that a real agent CLI
// (Claude Code, Codex CLI, Gemini CLI) talks to instead of a model provider, on
// 127.0.0.1. A script is a list of turns; when the agent calls the model, the endpoint
// picks the turn for the conversation's position and answers with text or with a call
// of a named tool, in the provider's wire format (streamed or not). Every request is
// recorded, so a test can assert what the agent sent: the tools it was offered, the
// tool results that reached the model.
//
// Nothing here is a model: the endpoint never reads the conversation's meaning, only
// its shape (how many turns the assistant has had, what the last tool result says).
package agentmodel
