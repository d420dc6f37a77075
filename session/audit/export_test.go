package audit

import (
	"os"

	"github.com/airlock-mcp/airlock/session/statefile"
)

// Syncs is how many times this log called fsync.
func (a *Log) Syncs() int64 { return a.syncs.Load() }

// SetMaxRecordBytes sets the longest line the log writes and reads, for a test; the
// returned func puts it back.
func SetMaxRecordBytes(n int) (restore func()) {
	old := maxRecordBytes
	maxRecordBytes = n
	return func() { maxRecordBytes = old }
}

// FailHeadWrites makes every write of the head file fail with err (nil: succeed
// again), for a test.
func FailHeadWrites(err error) {
	if err == nil {
		writeHeadFile = statefile.WriteFileNoSync
		return
	}
	writeHeadFile = func(string, []byte) error { return err }
}

// FailCommitSyncs makes the sync of every commit fail with err (nil: sync again),
// for a test.
func FailCommitSyncs(err error) {
	if err == nil {
		syncCommit = syncFile
		return
	}
	syncCommit = func(*os.File) error { return err }
}
