// Package pins is the trust-on-first-use store of tool definitions (pins.json):
// the first definition seen of a tool is pinned, and a later different one is
// reported as changed until a person accepts it ([Store.Accept]).
//
// Invariants: a listing is always compared against the pins this process holds,
// even while the file cannot be read or written (a refused or failed file never
// turns the check off, and pins not yet saved are kept); the file is read and
// written under its lock, merged with what other airlock processes wrote, so no
// process overwrites another's pins ([Store.ObserveThen]); every write is atomic
// and owner-only. A [Store] with an empty path lives in memory only.
package pins
