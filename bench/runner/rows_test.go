package main

import (
	"strings"
	"testing"
)

func TestGatewayRows_OwnCostPairedByRound(t *testing.T) {
	s := benchSamples{
		"BenchmarkCallDirect":           {"p50-µs": {100, 110, 120}, "p99-µs": {200, 210, 220}},
		"BenchmarkCallThroughGateway":   {"p50-µs": {400, 600, 420}, "p99-µs": {900, 1000, 950}},
		"BenchmarkCallThroughBareProxy": {"p50-µs": {300, 400, 300}, "p99-µs": {600, 700, 700}},
	}
	rows, err := gatewayRows(s, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].id != "3a" || rows[1].id != "3b" {
		t.Fatalf("rows %+v, want 3a and 3b", rows)
	}
	// p50: own cost per round 100, 200, 120; the median 120 is within +150 µs.
	if rows[0].verdict != "met" || !strings.Contains(rows[0].result, "+120 µs") || !strings.Contains(rows[0].result, "+100 to +200 µs") {
		t.Errorf("3a = %+v", rows[0])
	}
	if !strings.Contains(rows[0].airlock, "400-600 µs") || !strings.Contains(rows[0].what, "unaudited") {
		t.Errorf("3a does not show its spread or that it is unaudited: %+v", rows[0])
	}
	// p99: own cost per round 300, 300, 250; the median 300 is above +150 µs.
	if rows[1].verdict != "MISSED" || !strings.Contains(rows[1].result, "+300 µs") {
		t.Errorf("3b = %+v", rows[1])
	}
}

func TestGatewayRows_MissingFigures(t *testing.T) {
	if _, err := gatewayRows(benchSamples{}, 1); err == nil {
		t.Fatal("no error without figures")
	}
}
