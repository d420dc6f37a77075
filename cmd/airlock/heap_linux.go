package main

import (
	"os"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// warmHeapBytes is how much of the heap warmHeap maps with huge pages advised: about
// what the first screen of 10,000 tools uses (bench/run row 5g).
const warmHeapBytes = 32 << 20

// warmHeap lets the heap that the first listings fill come in transparent huge pages.
// On a virtual machine every first touch of a 4 KiB page is a fault the host handles
// too (13 µs here: a first screen of 10,000 tools spent a third of its CPU on them);
// a 2 MiB page is one fault. The system's setting here, like most distributions',
// gives huge pages only where a program asks (madvise), and Go's runtime does not
// ask. So a block the size of a first listing's heap is allocated (fresh from the
// system: mapped, not touched), that range is advised MADV_HUGEPAGE, and the block
// is let go: the allocations after it reuse the range, lowest addresses first. A
// first screen of 10,000 tools: 150 -> 113 ms (medians of 20 alternated first
// starts), with 10-12 MB of the heap in huge pages and the resident set as before.
//
// The returned func withdraws the advice, once the first listings are in: after
// that the kernel's khugepaged would otherwise merge sparse parts of the range into
// whole huge pages and grow the resident set for nothing (https://go.dev/issue/64332).
// Pages already huge stay as they are. GODEBUG=disablethp=1, Go's own switch for
// the heap's huge pages, turns this off.
func warmHeap() (done func()) {
	if _, n, done := adviseHuge(warmHeapBytes); n > 0 {
		// The block is garbage now, but the collection its allocation started may
		// have seen it live, and the next one would come only after the listings:
		// one more frees it while the servers start.
		go runtime.GC()
		return done
	}
	return func() {}
}

// adviseHuge allocates n bytes, advises the 2 MiB-aligned part of them (size bytes at
// addr, 0 when nothing was advised) MADV_HUGEPAGE and lets them go; done withdraws
// the advice. Neither holds a pointer into the block, which would keep it allocated
// and its range out of reach of the allocations it is for.
func adviseHuge(n int) (addr uintptr, size int, done func()) {
	if strings.Contains(os.Getenv("GODEBUG"), "disablethp=1") || !thpOnRequest() {
		return 0, 0, func() {}
	}
	block := make([]byte, n)
	r := hugeAligned(block)
	if len(r) == 0 || unix.Madvise(r, unix.MADV_HUGEPAGE) != nil {
		return 0, 0, func() {}
	}
	addr, size = uintptr(unsafe.Pointer(unsafe.SliceData(r))), len(r)
	runtime.KeepAlive(block)
	// The range stays mapped (Go's heap never unmaps), and madvise does not touch
	// what is in it.
	return addr, size, func() { _, _, _ = unix.Syscall(unix.SYS_MADVISE, addr, uintptr(size), unix.MADV_NOHUGEPAGE) }
}

// thpSetting is the kernel's transparent huge page setting (a variable for tests).
var thpSetting = "/sys/kernel/mm/transparent_hugepage/enabled"

// thpOnRequest reports whether the kernel gives huge pages only where a program
// advises them ("[madvise]"). With "[always]" the heap is eligible already, and the
// withdrawal (MADV_NOHUGEPAGE forbids, it does not restore the default) would take
// the range out for the life of the process; with "[never]" the advice does nothing.
func thpOnRequest() bool {
	b, err := os.ReadFile(thpSetting)
	return err == nil && strings.Contains(string(b), "[madvise]")
}

// hugeAligned is the part of b that starts and ends on 2 MiB boundaries.
func hugeAligned(b []byte) []byte {
	const huge = 2 << 20
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (p + huge - 1) &^ (huge - 1)
	end := (p + uintptr(len(b))) &^ (huge - 1)
	if end <= start {
		return nil
	}
	return b[start-p : end-p]
}
