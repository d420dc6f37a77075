package pins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-mcp/airlock/session/config"
	"github.com/airlock-mcp/airlock/session/internal/testhooks"
	"github.com/airlock-mcp/airlock/session/statefile"
	"github.com/airlock-mcp/airlock/trust"
)

// Store is the trust-on-first-use store of tool definitions. The
// first definition seen of a tool is pinned; a later different one is reported as
// changed, and stays changed until the person accepts it. A Store with an empty path
// lives in memory only (the demo uses that, so every demo starts clean). Store is safe
// for concurrent use.
type Store struct {
	mu   sync.Mutex
	path string
	data pinFile
	// stamp identifies the file data was last read from or written as (a stat
	// before the read, after the write); zero when data may differ from the file.
	// update skips reading the file again while the file under the lock is still
	// that one (statefile.Stamp: the same file, size, mode, owner, modification and
	// change time, settled): a write renames a new file into place, but a later one
	// may be given the inode number it freed within one tick of a coarse clock, and
	// a hand edit may put the old modification time back. held keeps the file this
	// process last wrote open while its stamp is kept (statefile.HoldWritten).
	stamp statefile.Stamp
	held  io.Closer
	// unsaved says that data holds pins the file may lack: a change to them could
	// not be written. The next update reads the file again and keeps them
	// (keepUnsaved): a pin must not be forgotten because a disk was full.
	unsaved bool
}

// setStamp keeps st (and held, the file it names held open, or nil) as the file's
// stamp, letting go of the file held before.
func (p *Store) setStamp(st statefile.Stamp, held io.Closer) {
	if p.held != nil {
		_ = p.held.Close()
	}
	p.stamp, p.held = st, held
}

type pinFile struct {
	Version int                   `json:"version"`
	Servers map[string]*serverPin `json:"servers"`
	// apart holds, by identity and tool name, the pins this process held that the
	// file replaced with another definition while this process could not write
	// (keepUnsaved): what the person here saw. A tool is not the same here until its
	// definition is that one again or it is accepted here. Never written.
	apart map[string]map[string]toolPin
}

type serverPin struct {
	Name         string             `json:"name"`
	Instructions string             `json:"instructions_sha256"`
	PinnedAt     time.Time          `json:"pinned_at"`
	Tools        map[string]toolPin `json:"tools"`
}

type toolPin struct {
	Fingerprint string          `json:"sha256"`
	PinnedAt    time.Time       `json:"pinned_at"`
	Definition  json.RawMessage `json:"definition"`
}

// Record is one pinned tool as `airlock pins list` shows it.
type Record struct {
	Identity    string
	Server      string
	Tool        string
	Fingerprint string
	PinnedAt    time.Time
	Definition  json.RawMessage
}

// OpenPins loads the store at path, or starts an empty one when the file does not
// exist. An empty path gives an in-memory store.
func Open(path string) (*Store, error) {
	p := &Store{path: path, data: emptyPins()}
	if path == "" {
		return p, nil
	}
	stamp, _ := statefile.StampPath(path)
	data, err := readPins(path)
	if err != nil {
		return nil, err
	}
	p.data = data
	p.setStamp(stamp, nil)
	return p, nil
}

func emptyPins() pinFile {
	return pinFile{Version: 1, Servers: map[string]*serverPin{}}
}

// pinFileReads counts readPins calls, for tests.
var pinFileReads atomic.Int64

// readPins reads the pins file at path; a missing file is an empty store.
func readPins(path string) (pinFile, error) {
	pinFileReads.Add(1)
	data := emptyPins()
	b, err := statefile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return data, nil
	}
	if statefile.Refused(err) {
		return data, fmt.Errorf("pins: %w", err)
	}
	if err != nil {
		return data, fmt.Errorf("reading pins: %w", err)
	}
	if err := json.Unmarshal(b, &data); err != nil {
		return data, fmt.Errorf("reading pins %s: %w", path, err)
	}
	if data.Servers == nil {
		data.Servers = map[string]*serverPin{}
	}
	return data, nil
}

// update runs change on the newest pins and saves them when change reports them
// changed. Other airlock processes may share the file (the TUI, `airlock call`,
// `pins accept`), so on disk this is read-merge-write under an exclusive lock on
// PATH.lock: the file is read again under the lock and change applied to what is
// there, so no process overwrites another's pins. p.mu is held.
func (p *Store) update(change func(*pinFile) (dirty bool, err error)) error {
	_, err := p.updateThen(change, nil, nil)
	return err
}

// updateThen is update, except that with saved not nil a needed save is left to a
// goroutine, which keeps p.mu and the file lock until the file is written (so the
// read-merge-write stays whole for this process and for others), then unlocks p.mu
// and calls saved with the save's error. The goroutine starts when the caller calls
// write, which it must do exactly once when write is not nil; then the caller must
// not unlock p.mu. saved is called only then. before, when not nil, runs in that
// goroutine ahead of the save, with p.mu and the file lock held: work change left
// for the write (see observeLazy).
func (p *Store) updateThen(change func(*pinFile) (dirty bool, err error), saved func(error), before func()) (write func(), err error) {
	done := func(err error) error { return err }
	if p.path == "" {
		_, err := change(&p.data)
		return nil, done(err)
	}
	if err := os.MkdirAll(filepath.Dir(p.path), 0o700); err != nil {
		return nil, done(fmt.Errorf("creating %s: %w", filepath.Dir(p.path), err))
	}
	lf, err := statefile.OpenLock(p.path + ".lock")
	if err != nil {
		return nil, done(fmt.Errorf("locking pins: %w", err))
	}
	if err := statefile.Lock(lf); err != nil {
		lf.Close()
		return nil, done(fmt.Errorf("locking pins: %w", err))
	}
	unlock := func() {
		statefile.Unlock(lf)
		lf.Close()
	}
	kept := false // pins held unsaved were added to the file's: they must be written
	stamp, _ := statefile.StampPath(p.path)
	if !p.stamp.Unchanged(stamp) {
		// Another process wrote the file, this one has not read it, or it changed
		// too recently for its stat to vouch for it: read it again under the lock.
		p.setStamp(statefile.Stamp{}, nil)
		data, err := readPins(p.path)
		if err != nil {
			unlock()
			return nil, done(err)
		}
		data.apart = p.data.apart
		if p.unsaved && keepUnsaved(&data, &p.data) {
			kept = true
		}
		p.data = data
		p.setStamp(stamp, nil)
	}
	dirty, err := change(&p.data)
	dirty = dirty || kept
	if err != nil || !dirty {
		if err != nil {
			p.setStamp(statefile.Stamp{}, nil) // change may have left data half changed
		}
		unlock()
		return nil, done(err)
	}
	p.setStamp(statefile.Stamp{}, nil)
	save := func() error {
		defer unlock()
		if before != nil {
			before()
		}
		if err := p.saveLocked(); err != nil {
			p.unsaved = true
			return err
		}
		p.unsaved = false
		if st, held, err := statefile.HoldWritten(p.path); err == nil { // under the lock, right after the write
			p.setStamp(st, held)
		}
		return nil
	}
	if saved == nil {
		return nil, save()
	}
	return func() {
		go func() {
			err := save()
			p.mu.Unlock()
			saved(err)
		}()
	}, nil
}

// keepUnsaved adds to file, the pins just read from the file, every server and tool
// pin of held (this process's, with a change that could not be written) that file
// lacks, and reports whether it added any. A pin the file has stays in the file:
// another process wrote it since (airlock pins accept, or a listing seen there).
// Where it differs from the one held here, the held one is kept apart (file.apart):
// the person here saw that definition, so the file's is changed here, not the same
// (another process's first sight of a server that changed in between must not pass
// here unseen).
func keepUnsaved(file, held *pinFile) bool {
	added := false
	for id, sp := range held.Servers {
		fsp := file.Servers[id]
		if fsp == nil {
			file.Servers[id] = sp
			added = true
			continue
		}
		for name, tp := range sp.Tools {
			ftp, ok := fsp.Tools[name]
			if !ok {
				if fsp.Tools == nil {
					fsp.Tools = map[string]toolPin{}
				}
				fsp.Tools[name] = tp
				added = true
				continue
			}
			if ftp.Fingerprint != tp.Fingerprint {
				if _, ok := file.apart[id][name]; !ok {
					if file.apart == nil {
						file.apart = map[string]map[string]toolPin{}
					}
					if file.apart[id] == nil {
						file.apart[id] = map[string]toolPin{}
					}
					file.apart[id][name] = tp
				}
			}
		}
	}
	return added
}

// Identity is the key a server's pins are stored under: the server's name, and for
// stdio the command, its arguments, working directory and the names (never the
// values) of its configured environment; for http and sse the URL. Environment values
// are left out because secrets rotate: a new token must not make every tool look new
// (and a changed tool look first-seen). The name is in because two servers of one
// config may differ only in environment values (one program, two databases). A name
// whose identity changed is still compared against the pins it had (see observe).
func Identity(s config.Server) string {
	// Args and URL as written (with their ${VAR} references): an expanded value may
	// be a secret, and pins.json must not hold it.
	args, u := s.Args, s.URL
	if s.ArgsAsWritten != nil {
		args = s.ArgsAsWritten
	}
	if s.URLAsWritten != "" {
		u = s.URLAsWritten
	}
	if s.Transport == config.TransportStdio {
		b, _ := json.Marshal(append([]string{s.Command, s.Cwd}, args...))
		id := "stdio:" + string(b)
		if len(s.Env) > 0 {
			keys := make([]string, 0, len(s.Env))
			for k := range s.Env {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			names, _ := json.Marshal(keys)
			id += " env:" + string(names)
		}
		return id + " name:" + s.Name
	}
	return string(s.Transport) + ":" + u + " name:" + s.Name
}

// Listed is one tool of a listing as the store compares it: its name, the exact
// bytes the server sent for it, and their canonical fingerprint (trust.ToolFingerprint;
// "" when the definition could not be fingerprinted, which never compares same).
type Listed struct {
	Name        string
	Raw         json.RawMessage
	Fingerprint string
}

// Outcome is what the store says of one listing of a server.
type Outcome struct {
	// tools is every listed name's pin state and when the definition it compares
	// against was pinned (a duplicate name: the first tool listed under it); nil
	// when allNew.
	tools map[string]Seen
	// allNew says that the server was seen for the first time (no pins under its
	// identity or its name): every listed tool is new, pinned at firstSight.
	allNew              bool
	firstSight          time.Time
	InstructionsChanged bool
	Removed             []string
	dirty               bool // the pins changed and were saved
	// Inherited: no pins existed under this identity, but the server's name had pins
	// under another one; they were copied and the listing compared against them.
	Inherited bool
}

// decided reports whether the outcome says anything (observeLocked or observeLazy
// ran).
func (o *Outcome) decided() bool { return o.tools != nil || o.allNew }

// Tool is the outcome of the listed tool name (a name the listing did not hold is
// not asked).
func (o *Outcome) Tool(name string) (Seen, bool) {
	if o.allNew {
		return Seen{State: trust.PinNew, PinnedAt: o.firstSight}, true
	}
	ps, ok := o.tools[name]
	return ps, ok
}

// Seen is one listed tool's outcome.
type Seen struct {
	State    trust.PinState
	PinnedAt time.Time
}

// observe compares one listing with the pins, pinning what is seen for the first
// time, and saves the store when it changed.
func (p *Store) observe(identity, server, instructions string, tools []Listed, now time.Time) (Outcome, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out Outcome
	err := p.update(func(data *pinFile) (bool, error) {
		out = observeLocked(data, identity, server, instructions, tools, now)
		return out.dirty, nil
	})
	if err != nil && !out.decided() {
		// The file could not be locked, read or trusted (it went bad while airlock
		// runs): compare against the pins this process holds, never against nothing,
		// so a changed tool stays blocked. Nothing is saved; the caller reports err.
		out = observeLocked(&p.data, identity, server, instructions, tools, now)
		p.unsaved = p.unsaved || out.dirty
	}
	return out, err
}

// ObserveThen is observe, except that the pins file is written in the background:
// the outcome is decided under the lock as in observe, and the lock (the file's and
// p.mu) is held until the file is written, so no other process or listing reads
// pins.json in between; only this listing's caller goes on without waiting for the
// write. The write starts when the caller calls write, which it must do exactly
// once; write is nil when nothing is to be written. The caller shows the listing
// first, so that the two do not share the processors. saved is called, from another
// goroutine, with the write's error when a write was started, and not otherwise
// (then the error, if any, is returned as by observe). Every other use of the
// store, and WaitSaved, waits for that write.
//
// A first sight is decided without pinning (observeLazy): the pins are made in the
// write's goroutine, before the file is written, while p.mu is held.
func (p *Store) ObserveThen(identity, server, instructions string, tools []Listed, now time.Time, saved func(error)) (out Outcome, write func(), err error) {
	p.mu.Lock()
	var pin func()
	write, err = p.updateThen(func(data *pinFile) (bool, error) {
		out, pin = observeLazy(data, identity, server, instructions, tools, now)
		return out.dirty, nil
	}, saved, func() {
		if pin != nil {
			pin()
			pin = nil
		}
	})
	if write != nil {
		return out, write, nil // the goroutine pins, writes and unlocks p.mu
	}
	defer p.mu.Unlock()
	if pin != nil {
		pin() // nothing is written: the pins are made now, in memory
	}
	if err != nil && !out.decided() {
		out = observeLocked(&p.data, identity, server, instructions, tools, now)
		p.unsaved = p.unsaved || out.dirty
	}
	return out, nil, err
}

// WaitSaved returns once no pins file write started by ObserveThen is under way.
func (p *Store) WaitSaved() {
	p.mu.Lock()
	//lint:ignore SA2001 an empty critical section: waiting for the writer is the point
	p.mu.Unlock()
}

// Close waits for a write under way and lets go of the file the store holds open
// (statefile.HoldWritten); the store still works, reading the file again at its
// next look.
func (p *Store) Close() {
	p.mu.Lock()
	p.setStamp(statefile.Stamp{}, nil)
	p.mu.Unlock()
}

// observeLazy is observeLocked, except on a first sight of the server (no pins under
// its identity, none under its name): that is decided without a look at the tools,
// every one is new, and the pinning (two maps of every tool and a copy of every
// definition: 15 ms of the first screen at 10,000 tools) is returned as pin, to run
// under p.mu before anything reads data or writes it to the file.
func observeLazy(data *pinFile, identity, server, instructions string, tools []Listed, now time.Time) (Outcome, func()) {
	if data.Servers[identity] != nil || latestByName(data, server) != nil {
		return observeLocked(data, identity, server, instructions, tools, now), nil
	}
	out := Outcome{allNew: true, firstSight: now, dirty: true}
	return out, func() { observeLocked(data, identity, server, instructions, tools, now) }
}

// observeLocked is observe on data, which it changes.
func observeLocked(data *pinFile, identity, server, instructions string, tools []Listed, now time.Time) Outcome {
	// Every map is sized for the listing: a first sight of 10,000 tools otherwise
	// grows each of them a dozen times before the listing is shown.
	out := Outcome{tools: make(map[string]Seen, len(tools))}
	sp := data.Servers[identity]
	dirty := false
	if sp == nil {
		if prev := latestByName(data, server); prev != nil {
			// The name's command, arguments, folder or environment names changed (or the
			// pins file predates this identity): start from what the name had pinned,
			// so that a changed tool is still changed, not new.
			sp = &serverPin{Name: server, Instructions: prev.Instructions, PinnedAt: prev.PinnedAt, Tools: maps.Clone(prev.Tools)}
			if sp.Tools == nil {
				sp.Tools = map[string]toolPin{}
			}
			out.Inherited = true
		} else {
			sp = &serverPin{Name: server, Instructions: trust.InstructionsFingerprint(instructions), PinnedAt: now, Tools: make(map[string]toolPin, len(tools))}
		}
		data.Servers[identity] = sp
		dirty = true
	}
	if sp.Instructions != trust.InstructionsFingerprint(instructions) {
		out.InstructionsChanged = true
	}
	var fresh []int // tools pinned now, whose definitions are copied below
	for i, t := range tools {
		name := t.Name
		if _, dup := out.tools[name]; dup {
			continue // duplicates are blocked by name; the first one is pinned
		}
		old, ok := sp.Tools[name]
		here, apart := data.apart[identity][name]
		seen := Seen{State: trust.PinChanged, PinnedAt: old.PinnedAt}
		switch {
		case !ok:
			fresh = append(fresh, i)
			seen = Seen{State: trust.PinNew, PinnedAt: now}
			dirty = true
		case apart:
			// The person here saw another definition than the file's: that one is
			// what this listing is compared against (see keepUnsaved).
			seen.PinnedAt = here.PinnedAt
			if here.Fingerprint == t.Fingerprint && t.Fingerprint != "" {
				seen.State = trust.PinSame
			}
		case old.Fingerprint == t.Fingerprint && t.Fingerprint != "":
			seen.State = trust.PinSame
		}
		out.tools[name] = seen
	}
	for name := range sp.Tools {
		if _, ok := out.tools[name]; !ok {
			out.Removed = append(out.Removed, name)
		}
	}
	// A new pin's definition is copied out of the listing's read buffer, all of
	// them into one block: the store lives as long as airlock, and a definition
	// that points into a page would keep the whole page (a server may pad one to
	// megabytes around a single new tool, at every list_changed) alive with it.
	size := 0
	for _, i := range fresh {
		size += len(tools[i].Raw)
	}
	block := make([]byte, 0, size)
	for _, i := range fresh {
		t := &tools[i]
		start := len(block)
		block = append(block, t.Raw...)
		sp.Tools[t.Name] = toolPin{Fingerprint: t.Fingerprint, PinnedAt: now, Definition: json.RawMessage(block[start:len(block):len(block)])}
	}
	sort.Strings(out.Removed)
	out.dirty = dirty
	return out
}

// Accept pins the given definitions (tool name -> raw definition) and, when
// instructions is not nil, the server's instructions, replacing what was pinned.
func (p *Store) Accept(identity, server string, instructions *string, defs map[string]json.RawMessage, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	fps := make(map[string]string, len(defs))
	for name, raw := range defs {
		fp, err := trust.ToolFingerprint(raw)
		if err != nil {
			return fmt.Errorf("pinning %s: %w", name, err)
		}
		fps[name] = fp
	}
	return p.update(func(data *pinFile) (bool, error) {
		sp := data.Servers[identity]
		if sp == nil {
			sp = &serverPin{Name: server, PinnedAt: now, Tools: map[string]toolPin{}}
			data.Servers[identity] = sp
		}
		if instructions != nil {
			sp.Instructions = trust.InstructionsFingerprint(*instructions)
		}
		for name, raw := range defs {
			delete(data.apart[identity], name)
			// A copy: raw may point into a listing's page (see observeLocked).
			sp.Tools[name] = toolPin{Fingerprint: fps[name], PinnedAt: now, Definition: bytes.Clone(raw)}
		}
		return true, nil
	})
}

// Pinned returns the pinned definition of one tool, if any.
func (p *Store) Pinned(identity, tool string) (Record, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	sp := p.data.Servers[identity]
	if sp == nil {
		return Record{}, false
	}
	t, ok := p.data.apart[identity][tool]
	if !ok {
		t, ok = sp.Tools[tool]
	}
	if !ok {
		return Record{}, false
	}
	return Record{Identity: identity, Server: sp.Name, Tool: tool, Fingerprint: t.Fingerprint, PinnedAt: t.PinnedAt, Definition: t.Definition}, true
}

// latestByName returns the most recently pinned entry of a server name under any
// identity in data, or nil.
func latestByName(data *pinFile, name string) *serverPin {
	var best *serverPin
	var bestID string
	for id, sp := range data.Servers {
		if sp.Name != name {
			continue
		}
		if best == nil || sp.PinnedAt.After(best.PinnedAt) || (sp.PinnedAt.Equal(best.PinnedAt) && id > bestID) {
			best, bestID = sp, id
		}
	}
	return best
}

// SharedNames says, one sentence per server name, which names have pins under more
// than one identity (a changed command, arguments, folder or environment names, or a
// pins file from before identities left out environment values).
func (p *Store) SharedNames() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	count := map[string]int{}
	for _, sp := range p.data.Servers {
		count[sp.Name]++
	}
	var out []string
	for name, n := range count {
		if n > 1 {
			out = append(out, fmt.Sprintf("server %s has pins under %d identities (its command, arguments, working directory or environment names changed); a new identity starts from the latest", name, n))
		}
	}
	sort.Strings(out)
	return out
}

// List returns every pinned tool sorted by server then tool.
func (p *Store) List() []Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Record
	for id, sp := range p.data.Servers {
		for name, t := range sp.Tools {
			out = append(out, Record{Identity: id, Server: sp.Name, Tool: name, Fingerprint: t.Fingerprint, PinnedAt: t.PinnedAt, Definition: t.Definition})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].Tool < out[j].Tool
	})
	return out
}

// saveLocked writes the store atomically (temp file in the same folder, fsync,
// rename) with mode 0600.
func (p *Store) saveLocked() error {
	if p.path == "" {
		return nil
	}
	if testhooks.PinsSave != nil {
		if err := testhooks.PinsSave(); err != nil {
			return err
		}
	}
	b, err := encodePins(p.data) // json.MarshalIndent's bytes, in one pass
	if err != nil {
		return err
	}
	return statefile.WriteFile(p.path, b) // through a synced temporary file, owner-only
}
