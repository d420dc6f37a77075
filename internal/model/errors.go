package model

import (
	"context"
	"errors"
)

// ErrAgentGone is the cause a caller cancels a call's context with when the agent
// that made the call went away without withdrawing it: its connection closed, its
// session was deleted or ended, its bridge's stdin closed. A question waiting for
// it is withdrawn ("the agent disconnected"), the decision is audited
// trust.DecidedByAgentGone, and nothing of the call runs. It is a
// context.Canceled (errors.Is).
var ErrAgentGone error = agentGoneError{}

type agentGoneError struct{}

func (agentGoneError) Error() string { return "the agent disconnected" }
func (agentGoneError) Unwrap() error { return context.Canceled }

// ErrTokenRevoked is the cause a caller cancels a call's context with when the
// gateway token its agent presented was revoked: it is ErrAgentGone (errors.Is), so
// the call is withdrawn as its agent's (decided_by agent-gone) and nothing of it
// runs, with this error's words in the reasons and the closed question.
var ErrTokenRevoked error = tokenRevokedError{}

type tokenRevokedError struct{}

func (tokenRevokedError) Error() string        { return "the agent's gateway token was revoked" }
func (tokenRevokedError) Is(target error) bool { return target == ErrAgentGone }
func (tokenRevokedError) Unwrap() error        { return context.Canceled }

// ErrResultSchema is wrapped by a call's error when the tool declares an output
// schema and the server's result (one that is not a tool error) has no structured
// content, or structured content the schema does not allow: the result is not
// handed on as valid. The error's words after it name where and what was expected.
// session.ErrResultSchema is this error, so the screens can tell it without
// importing the session.
var ErrResultSchema = errors.New("the server's result does not match its output schema")
