package statefile

import "time"

// SetClock makes stamps taken from now on read f for the time, until restore.
func SetClock(f func() time.Time) (restore func()) {
	old := clock
	clock = f
	return func() { clock = old }
}
