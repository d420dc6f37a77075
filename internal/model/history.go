package model

import "time"

// HistoryMessage is one JSON-RPC message that passed a server's connection, as
// airlock's protocol history keeps it: which way it went, when, what it was, and its
// bytes as sent (cut at a bound, said by Cut). Every field but At and Out is
// server-controlled when the message came in.
type HistoryMessage struct {
	Seq uint64
	At  time.Time
	// Out is true for what airlock sent, false for what the server sent.
	Out bool
	// Kind is "request", "notification", "response" or "error".
	Kind string
	// Method is the request's or notification's method; for a response, the method
	// of the request it answers when airlock still knew it.
	Method string
	// ID is the request's or response's id as JSON ("" for a notification).
	ID string
	// Size is the message's encoded size in bytes; Raw holds at most a bound of them
	// and Cut says when Raw is shorter.
	Size int
	Raw  []byte
	Cut  bool
}

// History is a server's kept protocol messages, oldest first, and how many older
// ones the bound made it forget.
type History struct {
	Server string
	// Agent is the key of the agent session (HistorySource.Key) when the history is
	// an agent's exchange with the gateway, and Server then its label; "" for a
	// server's.
	Agent    string
	Ended    bool
	Messages []HistoryMessage
	Dropped  int
	// Bytes is what Messages' Raw hold in all.
	Bytes int
}

// HistorySource is one agent session at the gateway whose protocol messages are
// kept: Key names it to the session, Label is who it is as the approval dialog shows
// an agent (the session's number at the gateway, first so that a cut never makes two
// alike, then the client name and the context).
type HistorySource struct {
	Key   string
	Label string
	// Ended is true once the session is gone (its history is kept, bounded).
	Ended bool
}
