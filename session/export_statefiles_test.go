package session

import "time"

// SetClock makes the engine read time from now (taint times, pruning).
func (e *Engine) SetClock(now func() time.Time) { e.now = now }

// SetTaintPruneAfter sets the engine's limits.taint_prune_after_days as a duration.
func (e *Engine) SetTaintPruneAfter(d time.Duration) { e.limits.TaintPruneAfter = d }
