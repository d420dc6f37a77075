// Package gctune is the airlock process's garbage-collector policy: a headroom
// above a small live heap (fewer collections while the gateway serves calls), a
// first collection late for one-shot commands, and, while a gateway may hold
// agents' calls, a soft memory limit at what its bounds on waiting calls allow
// ([Budget]). The person's GOGC or GOMEMLIMIT always wins. [Tune] starts it once
// per process; bench/waiting runs the same policy as the binary.
package gctune

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// gcHeadroom is the least heap growth the TUI lets between two collections while the
// live heap is small. Go's default (GOGC=100) lets the heap double, which for
// airlock's small live heap (about 4 MB with a few servers) means a collection every
// ten or so gateway calls: go-sdk allocates about 400 KB per call (bench/analysis.md),
// and the runtime returns the freed pages to the system between collections only to
// fault them in again. With 16 MiB of headroom the collections are four times rarer.
// A live heap above 16 MiB (thousands of tools) grows by its own size as before.
const gcHeadroom = 16 << 20

// gcSmallLimit bounds the memory the runtime may hold while the headroom applies
// (debug.SetMemoryLimit, a soft limit: the collector runs sooner near it): 2 x live +
// gcSmallLimit is above what GOGC=100 would reach plus the runtime's own memory, so it
// never makes collections more frequent than Go's default, and it stops the headroom
// from adding to the peak when a listing of thousands of tools makes a lot of garbage
// while the live heap is still small (bench/run row 5e measured +15 MB without it).
const gcSmallLimit = 24 << 20

// Budget is the memory an airlock process may use while a gateway holds agents'
// calls waiting for a person, as a soft limit for the collector: a base of 64 MiB
// (the Manager, its listings, go-sdk's sessions) and two copies of every waiting
// argument byte that [limits] max_waiting_bytes admits (the JSON-RPC message go-sdk
// keeps while the request is in flight, and the call's canonical arguments). Go's
// default lets the heap double over what is live, so 11 calls of 3 MB waiting in
// one session took the process to ~200 MB where 100 MB were live; within the budget
// the collector runs sooner instead (bench/waiting). maxWaitingBytes <= 0 is no
// budget.
func Budget(maxWaitingBytes int64) int64 {
	if maxWaitingBytes <= 0 {
		return 0
	}
	return 64<<20 + 2*maxWaitingBytes
}

// limitFor is the soft memory limit after a collection found live bytes live: the
// small heap's limit while the headroom applies (percent above 100), else the
// budget, but never closer than a quarter plus 16 MiB above the live heap, so that a
// live heap larger than the budget foresaw (tens of thousands of tools) is collected
// as often as GOGC=25 at worst, never continuously.
func limitFor(live uint64, percent int, budget int64) int64 {
	limit := int64(math.MaxInt64)
	if percent > 100 {
		limit = int64(2*live + gcSmallLimit)
	}
	if budget > 0 {
		floor := int64(live + live/4 + 16<<20)
		limit = min(limit, max(budget, floor))
	}
	return limit
}

var tuneGCOnce sync.Once

// oneShotFirstGC is the GOGC a one-shot command starts with: Go's least heap goal,
// 4 MiB, times four is gcHeadroom, so the first collection comes when the heap
// reaches 16 MiB, not 4 MiB. No memory limit is set before it (24 MiB made a check of
// 10,000 tools slower); after it the tuner decides as for the TUI. Measured on the
// 20-server check (bench/analysis.md, seventh session): GOGC 100, 200, 400 and off
// made 3, 1, 0 and 0 collections, medians 93.7, 91.4, 90.1 and 90.2 ms.
const oneShotFirstGC = 400

// Tune keeps the heap goal at least gcHeadroom above the live heap, re-deciding
// after every collection, unless the person set GOGC or GOMEMLIMIT (theirs wins).
// The TUI tunes from its first collection on (fromStart false); the one-shot commands
// (fromStart true: check, snapshot, call, read, prompt) from their first allocation,
// because a run that connects to a few servers and exits allocates about 6 MB with
// 1-2 MB live (mostly go-sdk's decode buffers), which at Go's default meant three
// collections while the servers start, and each one's stop-the-world waits for
// threads the kernel has descheduled among the starting children (bench/analysis.md,
// seventh session).
// With budget > 0 (a process whose gateway may hold calls, see [Budget]) the soft
// memory limit is at most the budget. Only the first call in a process acts.
func Tune(fromStart bool, budget int64) {
	tuneGCOnce.Do(func() {
		if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
			return
		}
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		last, lastLimit := 100, int64(math.MaxInt64)
		if budget > 0 {
			debug.SetMemoryLimit(budget)
			lastLimit = budget
		}
		if fromStart {
			last = oneShotFirstGC
			debug.SetGCPercent(last)
		}
		var arm func()
		arm = func() {
			// A cleanup runs once the object is collected: once per cycle.
			runtime.AddCleanup(new([16]byte), func(struct{}) {
				metrics.Read(sample)
				if sample[0].Value.Kind() == metrics.KindUint64 {
					live := sample[0].Value.Uint64()
					if p := gcPercentFor(live); p != last {
						debug.SetGCPercent(p)
						last = p
					}
					if limit := limitFor(live, last, budget); limit != lastLimit {
						debug.SetMemoryLimit(limit)
						lastLimit = limit
					}
				}
				arm()
			}, struct{}{})
		}
		arm()
	})
}

// gcPercentFor is the GOGC that puts the next heap goal at live + max(live,
// gcHeadroom), in steps of 50 so that small changes of the live heap do not reset it
// every cycle, and at most 2000 (a live heap under 1 MB, at start).
func gcPercentFor(live uint64) int {
	if live == 0 || live >= gcHeadroom {
		return 100
	}
	p := int(gcHeadroom*100/live) / 50 * 50
	return min(max(p, 100), 2000)
}
