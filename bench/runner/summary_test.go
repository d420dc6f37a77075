package main

import (
	"os"
	"strings"
	"testing"
)

func TestMeasuredSummary_FromRows(t *testing.T) {
	rows := []row{
		{id: "1a", result: "1.13x", goal: "≤ 1.15x", verdict: "met"},
		{id: "1b", verdict: "skipped: Inspector or Node >= 22.19 not installed"},
		{id: "2c", result: "long text; more", brief: "131 ms, 1.07x the bare client", goal: "≤ 1.1x the bare client", verdict: "met"},
		{id: "4d", brief: "1.3 ms", goal: "≤ 4 ms", verdict: "met"},
		{id: "6a", brief: "0.96x (1200 µs against 1250 µs)", goal: "≤ 1.0x supergateway", verdict: "met"},
		{id: "6f", brief: "0.96x, the bare go-sdk proxy's floor 0.85x", goal: "≤ 0.8x supergateway", verdict: "waits for go-sdk"},
		{id: "9b", result: "231 MB", goal: "≤ 250 MB", verdict: "met"},
	}
	got := measuredSummary(rows, "abc1234", "2026-12-03")
	for _, want := range []string{
		"on abc1234, 2026-12-03",
		"against a bare go-sdk client 1.13x (1a, goal ≤ 1.15x: met)",
		"against the MCP Inspector CLI: skipped: Inspector or Node >= 22.19 not installed (1b)",
		"131 ms, 1.07x the bare client (2c, goal ≤ 1.1x the bare client: met)",
		"1.3 ms (4d, goal ≤ 4 ms: met)",
		"0.96x (1200 µs against 1250 µs) (6a, goal ≤ 1.0x supergateway: met)",
		"floor 0.85x (6f, goal ≤ 0.8x supergateway: waits for go-sdk)",
		"231 MB (9b, goal ≤ 250 MB: met)",
		"50 agent sessions: not measured (8b)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "long text") {
		t.Errorf("the summary uses a row's result where it has a brief:\n%s", got)
	}
	if n := strings.Count(got, "\n- "); n != len(summaryBullets) {
		t.Errorf("%d bullets, want %d:\n%s", n, len(summaryBullets), got)
	}
}

func TestReplaceMeasured(t *testing.T) {
	readme := "# x\n\n## Measured\n\nintro\n" + measuredBegin + "\nold summary\n" + measuredEnd + "\n\n## Status\n"
	got, err := replaceMeasured(readme, "new summary\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# x\n\n## Measured\n\nintro\n" + measuredBegin + "\nnew summary\n" + measuredEnd + "\n\n## Status\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := replaceMeasured("no markers", "x"); err == nil {
		t.Error("no error without the markers")
	}
}

func TestREADMEHasTheMeasuredMarkers(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replaceMeasured(string(b), "x\n"); err != nil {
		t.Fatal(err)
	}
}
