package audit

// Syncs is how many times this log called fsync.
func (a *Log) Syncs() int64 { return a.syncs.Load() }
