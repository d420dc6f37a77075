// Package flocktest is test support: it waits until something waits for a file's
// flock, so a test can act while a lock is waited for (Linux: /proc/locks).
package flocktest
