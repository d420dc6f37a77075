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

func TestOldGoalVerdict(t *testing.T) {
	for _, c := range []struct {
		al, b, sg float64
		want      string
	}{
		{al: 790, b: 600, sg: 1000, want: "met"},
		{al: 950, b: 850, sg: 1000, want: "waits for go-sdk"},
		{al: 950, b: 700, sg: 1000, want: "MISSED"},
	} {
		if got := oldGoalVerdict(c.al, c.b, c.sg); got != c.want {
			t.Errorf("oldGoalVerdict(%v, %v, %v) = %q, want %q", c.al, c.b, c.sg, got, c.want)
		}
	}
}

func TestRateVerdict(t *testing.T) {
	for _, c := range []struct {
		al, b, sg float64
		want      string
	}{
		{al: 1500, b: 1400, sg: 1000, want: "met"},
		{al: 1380, b: 1380, sg: 1000, want: "waits for go-sdk"},
		{al: 1340, b: 1400, sg: 1000, want: "waits for go-sdk"},
		{al: 1300, b: 1400, sg: 1000, want: "MISSED"}, // airlock's own cost, not the floor's
		{al: 1400, b: 1600, sg: 1000, want: "MISSED"}, // the floor meets the goal
	} {
		if got := rateVerdict(c.al, c.b, c.sg); got != c.want {
			t.Errorf("rateVerdict(%v, %v, %v) = %q, want %q", c.al, c.b, c.sg, got, c.want)
		}
	}
}

func TestPeerRows_Goals(t *testing.T) {
	figs := map[string]float64{
		"airlock p50": 950, "supergateway p50": 1000, "bare p50": 850, "direct p50": 300, "written p50": 700,
		"airlock p99": 1500, "supergateway p99": 2000, "bare p99": 1200, "direct p99": 500, "written p99": 1400,
		"airlock rate": 1600, "supergateway rate": 1000, "bare rate": 2000, "direct rate": 3000, "written rate": 1800,
	}
	fig := func(target, _, q string) float64 { return figs[target+" "+q] }
	rows := peerRows([]string{"go", "ts"}, fig)
	want := []struct{ id, goal, verdict string }{
		{"6a", "≤ 1.0x supergateway", "met"},
		{"6b", "≤ 0.8x supergateway", "met"},
		{"6c", "≤ 1.0x supergateway", "met"},
		{"6d", "≤ 0.8x supergateway", "met"},
		{"6e", "≥ 1.5x supergateway", "met"},
		{"6f", "≤ 0.8x supergateway", "waits for go-sdk"},
		{"6g", "≤ 0.8x supergateway", "waits for go-sdk"},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, w := range want {
		if rows[i].id != w.id || rows[i].goal != w.goal || rows[i].verdict != w.verdict {
			t.Errorf("row %d = %s %q %q, want %s %q %q", i, rows[i].id, rows[i].goal, rows[i].verdict, w.id, w.goal, w.verdict)
		}
	}
	if !strings.Contains(rows[5].reference, "0.85x") || !strings.Contains(rows[5].reference, "measured earlier") {
		t.Errorf("6f does not show the floor and the patched figure: %q", rows[5].reference)
	}
}
