package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/airlock-mcp/airlock/session/statefile"
)

// rotate closes the current file as the next segment (PATH.NNNNNN, never renamed
// again or deleted) and opens a new, empty PATH whose first record will name it.
// Called by the committing goroutine under the lock.
func (a *Log) rotate() error {
	a.release()
	if a.damage != nil {
		return a.damage // bytes past the records that are not fill: left in this file
	}
	if err := syncFile(a.f); err != nil {
		return err
	}
	segs, err := segments(a.path)
	if err != nil {
		return err
	}
	n := 1
	if len(segs) > 0 {
		n = segs[len(segs)-1].n + 1
	}
	name := segmentName(a.path, n)
	if _, err := os.Lstat(name); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s is in the way", name)
	}
	if err := os.Rename(a.path, name); err != nil {
		return err
	}
	f, err := statefile.OpenWrite(a.path)
	// The rename and the new file's name both durable before the first record, a
	// call's decision, is synced into it: an fsync of a new file does not make its
	// name durable, and a power loss could take the file and the decision with it.
	syncDir(filepath.Dir(a.path))
	if err != nil {
		return err // the next commit opens PATH again and goes on from the segment
	}
	a.f.Close()
	a.f, a.size, a.fileSize = f, 0, 0
	a.start = &Link{File: filepath.Base(name), Seq: a.seq, Hash: a.prev}
	a.holdOpen()
	return nil
}

// syncDir makes a rename or a new file in dir durable (best effort: not every
// system can sync a folder).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// Sealed is what Seal did.
type Sealed struct {
	// MovedTo is where the old log went (PATH.sealed-TIME; its segments and head
	// beside it under that name).
	MovedTo string
	// Verified is what verifying the old log found, and Problem why it failed
	// (nil: it verified).
	Verified Summary
	Problem  error
	// First is the new log's first record, which names the old log and its head.
	First Record
}

// Seal moves the audit log at path aside, whole (its segments, the current file and
// its head, renamed to PATH.sealed-TIME…), and starts a new log at path whose first
// record (kind "sealed") names the old log and the head it had (the head file's
// record, or the last record that verified when the head is unreadable), with
// what verifying it found. Nothing is deleted. It holds the log's lock throughout;
// a running airlock opens the new log at its next record. It is how a person goes
// on after airlock refused a damaged log (`airlock audit seal --start-new`).
func Seal(path string) (Sealed, error) {
	var out Sealed
	lockf, _, err := lockLog(path, nil, nil)
	if err != nil {
		return out, fmt.Errorf("sealing audit log: %w", err)
	}
	defer lockf.Close()
	defer statefile.Unlock(lockf)

	out.Verified, out.Problem = verifyLog(path, false, nil)
	head, herr := readHead(path)
	segs, err := segments(path)
	if err != nil {
		return out, fmt.Errorf("sealing audit log: %w", err)
	}
	if !exists(path) && len(segs) == 0 {
		return out, fmt.Errorf("sealing audit log: there is no audit log at %s", path)
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	moved := path + ".sealed-" + stamp
	for i := 2; exists(moved) || exists(moved+".head") || exists(segmentName(moved, 1)); i++ {
		moved = fmt.Sprintf("%s.sealed-%s-%d", path, stamp, i)
	}
	link := &Link{File: filepath.Base(moved), Seq: uint64(out.Verified.Records), Hash: out.Verified.LastHash}
	var why []string
	if herr == nil {
		link.Seq, link.Hash = head.Seq, head.Hash
		why = append(why, fmt.Sprintf("its head file named record %d", head.Seq))
	} else {
		why = append(why, "its head file could not be read ("+herr.Error()+"), so this names its last verified record")
	}
	if out.Problem != nil {
		why = append(why, fmt.Sprintf("verify found %d good records, then: %v", out.Verified.Records, out.Problem))
	} else {
		why = append(why, fmt.Sprintf("it verified: %d records, chain intact", out.Verified.Records))
	}
	first := Record{Seq: 1, TS: time.Now().UTC(), Kind: "sealed", DecidedBy: "person", Previous: link,
		Reason: "the audit log before this one was moved aside to " + link.File + " by `airlock audit seal --start-new`; " + strings.Join(why, "; ")}
	line, err := sealRecord(&first)
	if err != nil {
		return out, fmt.Errorf("sealing audit log: %w", err)
	}

	// The new log and its head are written whole, and synced, before anything is
	// moved: a seal that fails (a full disk) leaves the damaged log where it was.
	// Were the old log moved first and the new one then not written, airlock would
	// find no log and begin a new chain at record 1 that names nothing before it.
	dir, base := filepath.Split(path)
	newLog := filepath.Join(dir, "."+base+".sealing")
	newHead := newLog + ".head"
	defer os.Remove(newLog)
	defer os.Remove(newHead)
	if err := statefile.WriteFile(newLog, line); err != nil {
		return out, fmt.Errorf("sealing audit log: starting the new log: %w (nothing was moved)", err)
	}
	if err := statefile.WriteFile(newHead, fmt.Appendf(nil, `{"seq":1,"hash":%q}`, first.Hash)); err != nil {
		return out, fmt.Errorf("sealing audit log: starting the new log: %w (nothing was moved)", err)
	}

	for _, sg := range segs {
		if err := os.Rename(sg.path, segmentName(moved, sg.n)); err != nil {
			return out, fmt.Errorf("sealing audit log: moving %s aside: %w", sg.path, err)
		}
	}
	for _, p := range []string{"", ".head"} {
		if err := os.Rename(path+p, moved+p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return out, fmt.Errorf("sealing audit log: moving %s aside: %w", path+p, err)
		}
	}
	out.MovedTo = moved
	// The log before its head: between the two, a log of one record without a head
	// is refused as damaged, never taken for a new one.
	for _, p := range []string{"", ".head"} {
		if err := os.Rename(newLog+p, path+p); err != nil {
			return out, fmt.Errorf("sealing audit log: starting the new log: %w", err)
		}
	}
	syncDir(filepath.Dir(path))
	out.First = first
	return out, nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
