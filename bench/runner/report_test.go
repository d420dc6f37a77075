package main

import (
	"strings"
	"testing"
	"time"
)

// fullRunRowIDs are the rows a full bench/run writes today, in order.
var fullRunRowIDs = []string{
	"1a", "1b", "2a", "2b", "2c", "3a", "3b", "3c", "3d",
	"4a", "4b", "4c", "4d", "4e", "5a", "5b", "5c", "5d", "5e", "5f", "5g",
	"6a", "6b", "6c", "6d", "6e", "6f", "6g",
	"7a", "7b", "7c", "7d", "7e", "7f", "7g", "8a", "8b", "9a", "9b",
}

// syntheticRunner is a runner holding the rows and the commands of a full run, with
// long texts where the real ones are long, and nothing measured.
func syntheticRunner() *runner {
	r := &runner{root: "/src/airlock", work: "/tmp/airlock-bench-1"}
	long := strings.Repeat("a long description of what was run and how ", 8)
	for _, id := range fullRunRowIDs {
		r.rows = append(r.rows, row{id: id, what: long, airlock: "1 ms", reference: long, result: "1.00x", goal: "≤ 1x", verdict: "met", load: "1.0 → 2.0"})
	}
	// A full run records about one command per benchmark group: 20 is more than it does.
	for range 20 {
		r.commands = append(r.commands, "/tmp/airlock-bench-1/airlock "+long)
	}
	r.machine = []string{"CPU", "os", "toolchain", "timing", "node", "commit", "date"}
	return r
}

func TestReport_OnePage(t *testing.T) {
	r := syntheticRunner()
	page, err := r.report(r.table(), "1 1 1", "2 2 2", 20*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page, "\n"); n > maxPageLines {
		t.Errorf("the page is %d lines, want at most %d", n, maxPageLines)
	}
	if !strings.Contains(page, "[bench/analysis.md](bench/analysis.md)") {
		t.Error("the page does not link bench/analysis.md")
	}
	if strings.Contains(page, "## Where a goal is missed") {
		t.Error("the page holds bench/analysis.md's text, want only a link to it")
	}
	for _, id := range fullRunRowIDs {
		if !strings.Contains(page, "| "+id+" |") {
			t.Errorf("row %s is not in the table", id)
		}
	}
}

func TestReport_TooLongFails(t *testing.T) {
	r := syntheticRunner()
	for range maxPageLines {
		r.commands = append(r.commands, "one more")
	}
	if _, err := r.report(r.table(), "1 1 1", "2 2 2", time.Minute); err == nil {
		t.Fatal("a page longer than maxPageLines was accepted")
	}
}
