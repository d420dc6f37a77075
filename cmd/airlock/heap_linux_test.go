package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// thpEligible reads /proc/self/smaps for the mapping holding addr: whether the kernel
// may back it with transparent huge pages.
func thpEligible(t *testing.T, addr uintptr) bool {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := strings.Cut(strings.Fields(line)[0], "-"); ok && strings.Count(line, " ") > 3 {
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < b
			continue
		}
		if v, ok := strings.CutPrefix(line, "THPeligible:"); ok && in {
			return strings.TrimSpace(v) == "1"
		}
	}
	t.Fatalf("no mapping of %#x in /proc/self/smaps", addr)
	return false
}

// Issue 16, goal 2: the TUI's first listings get their heap in transparent huge pages
// (heap_linux.go): a range of the heap, 2 MiB aligned, is advised MADV_HUGEPAGE, and
// the advice is withdrawn once the first listings are in; GODEBUG=disablethp=1 (Go's
// own switch) leaves the heap alone.
func TestWarmHeap_AdvisesThenWithdraws(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("transparent huge pages are off here (%q)", mode)
	}
	p, n, done := adviseHuge(8 << 20)
	if n < 2<<20 {
		t.Fatalf("advised %d bytes, want at least one 2 MiB page", n)
	}
	if p%(2<<20) != 0 || n%(2<<20) != 0 {
		t.Fatalf("advised range %#x+%d is not 2 MiB aligned", p, n)
	}
	if !thpEligible(t, p) {
		t.Fatal("the advised heap range is not eligible for huge pages")
	}
	done()
	if strings.Contains(string(mode), "[madvise]") && thpEligible(t, p) {
		t.Fatal("the advice was not withdrawn")
	}

	t.Setenv("GODEBUG", "disablethp=1")
	if _, n, _ := adviseHuge(8 << 20); n != 0 {
		t.Fatalf("GODEBUG=disablethp=1: %d bytes advised", n)
	}
}
