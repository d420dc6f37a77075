// Package dialog holds airlock's modal dialogs as pure models: a dialog turns
// key presses into an Action value and the root model acts on it (answers the
// approval engine, closes the dialog). A dialog never talks to the session,
// never starts goroutines and never decides anything on a timer, so every key
// path can be tested by calling Update directly.
//
// Confirm is the approval dialog for a pending call. The elicitation form
// (a server asking the person for input) lives in package ui/form as
// form.NewElicitation, because it shares the schema-driven field machinery of
// the call form.
//
// Every string a server or an agent controls is escaped with safetext before
// it is rendered, and multi-line untrusted text is wrapped first and given a
// gutter second (see package wrap).
package dialog

import "github.com/airlock-mcp/airlock/internal/model"

// Action is what a dialog decided. A nil Action means nothing is decided yet;
// the concrete values are AllowCall and DenyCall.
type Action interface {
	action()
}

// AllowCall allows pending call ID. Scope is model.AllowOnce or
// model.AllowForContext, never model.Deny. Remember, when set, is the rule
// the person saves with it ("Always allow"): the engine writes it to rules.toml.
type AllowCall struct {
	ID       uint64
	Scope    model.Answer
	Remember *model.RuleProposal
}

// DenyCall denies pending call ID, with the person's optional reason (which
// may be empty). Remember, when set, is the rule saved with it ("Always deny").
type DenyCall struct {
	ID       uint64
	Reason   string
	Remember *model.RuleProposal
}

func (AllowCall) action() {}
func (DenyCall) action()  {}

// Response converts the action into the answer the approval engine takes:
// AllowCall gives its Scope, DenyCall gives Deny with its reason.
func Response(a Action) (id uint64, r model.Response, ok bool) {
	switch a := a.(type) {
	case AllowCall:
		return a.ID, model.Response{Answer: a.Scope, Remember: a.Remember}, true
	case DenyCall:
		return a.ID, model.Response{Answer: model.Deny, Reason: a.Reason, Remember: a.Remember}, true
	}
	return 0, model.Response{}, false
}
