package main

import (
	"bufio"
	"os"
	"path/filepath"
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

// The TUI's first listings get their heap in transparent huge pages
// (heap_linux.go): a range of the heap, 2 MiB aligned, is advised MADV_HUGEPAGE, and
// the advice is withdrawn once the first listings are in; GODEBUG=disablethp=1 (Go's
// own switch) leaves the heap alone.
func TestWarmHeap_AdvisesThenWithdraws(t *testing.T) {
	mode, err := os.ReadFile(thpSetting)
	if err != nil || !strings.Contains(string(mode), "[madvise]") {
		t.Skipf("transparent huge pages are not given on request here (%q)", mode)
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
	if thpEligible(t, p) {
		t.Fatal("the advice was not withdrawn")
	}

	t.Setenv("GODEBUG", "disablethp=1")
	if _, n, _ := adviseHuge(8 << 20); n != 0 {
		t.Fatalf("GODEBUG=disablethp=1: %d bytes advised", n)
	}
}

// With huge pages "always" the heap is eligible already, and withdrawing the advice
// would forbid them in the range for good; with "never" the advice does nothing: the
// heap is left alone in both.
func TestWarmHeap_OnlyWhereHugePagesAreOnRequest(t *testing.T) {
	for _, setting := range []string{"[always] madvise never\n", "always madvise [never]\n", ""} {
		path := filepath.Join(t.TempDir(), "enabled")
		if err := os.WriteFile(path, []byte(setting), 0o600); err != nil {
			t.Fatal(err)
		}
		old := thpSetting
		thpSetting = path
		_, n, done := adviseHuge(8 << 20)
		done()
		thpSetting = old
		if n != 0 {
			t.Errorf("setting %q: %d bytes advised", setting, n)
		}
	}
}
