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
		al, b, ap, sg float64
		want          string
	}{
		{al: 790, b: 600, ap: 700, sg: 1000, want: "met"},
		{al: 950, b: 850, ap: 780, sg: 1000, want: "waits for go-sdk"}, // go-sdk patched meets it
		{al: 950, b: 850, ap: 0, sg: 1000, want: "waits for go-sdk"},   // not measured: the floor alone
		{al: 950, b: 850, ap: 900, sg: 1000, want: "MISSED"},           // patched, still airlock's cost
		{al: 950, b: 700, ap: 780, sg: 1000, want: "MISSED"},           // the floor meets the goal
	} {
		if got := oldGoalVerdict(c.al, c.b, c.ap, c.sg); got != c.want {
			t.Errorf("oldGoalVerdict(%v, %v, %v, %v) = %q, want %q", c.al, c.b, c.ap, c.sg, got, c.want)
		}
	}
}

func TestRateVerdict(t *testing.T) {
	for _, c := range []struct {
		al, b, ap, sg float64
		want          string
	}{
		{al: 1500, b: 1400, ap: 0, sg: 1000, want: "met"},
		{al: 1380, b: 1380, ap: 0, sg: 1000, want: "waits for go-sdk"},
		{al: 1340, b: 1400, ap: 0, sg: 1000, want: "waits for go-sdk"},
		{al: 1300, b: 1400, ap: 0, sg: 1000, want: "MISSED"},              // airlock's own cost, not the floor's
		{al: 1400, b: 1600, ap: 0, sg: 1000, want: "MISSED"},              // the floor meets the goal
		{al: 1300, b: 1400, ap: 1900, sg: 1000, want: "waits for go-sdk"}, // go-sdk patched meets it
		{al: 1380, b: 1400, ap: 1450, sg: 1000, want: "MISSED"},           // patched, still short
		{al: 1400, b: 1600, ap: 1900, sg: 1000, want: "MISSED"},           // the floor meets the goal
	} {
		if got := rateVerdict(c.al, c.b, c.ap, c.sg); got != c.want {
			t.Errorf("rateVerdict(%v, %v, %v, %v) = %q, want %q", c.al, c.b, c.ap, c.sg, got, c.want)
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
	rows := peerRows([]string{"go", "ts"}, fig, "")
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
	if !strings.Contains(rows[5].reference, "0.85x") || !strings.Contains(rows[5].reference, "with go-sdk patched: not measured") {
		t.Errorf("6f does not show the floor, and that the patched figure is missing: %q", rows[5].reference)
	}
}

// The patched figures of the same run stand beside each row, and decide whether the
// 0.8x row waits for go-sdk.
func TestPeerRows_PatchedFigures(t *testing.T) {
	figs := map[string]float64{
		"airlock p50": 950, "supergateway p50": 1000, "bare p50": 850, "direct p50": 300, "written p50": 700,
		"airlock-patched p50": 900, "bare-patched p50": 500,
		"airlock p99": 1500, "supergateway p99": 2000, "bare p99": 1200, "direct p99": 500, "written p99": 1400,
		"airlock-patched p99": 1300, "bare-patched p99": 900,
		"airlock rate": 1300, "supergateway rate": 1000, "bare rate": 1400, "direct rate": 3000, "written rate": 1800,
		"airlock-patched rate": 2000, "bare-patched rate": 3000,
	}
	fig := func(target, _, q string) float64 { return figs[target+" "+q] }
	rows := peerRows([]string{"go"}, fig, "")
	byID := map[string]row{}
	for _, r := range rows {
		byID[r.id] = r
	}
	if r := byID["6a"]; !strings.Contains(r.result, "with go-sdk patched (bench/go-sdk-unmarshal-in-place.patch, this run): airlock 900 µs (0.90x), bare proxy 500 µs (0.50x)") {
		t.Errorf("6a: %q", r.result)
	}
	if r := byID["6c"]; r.verdict != "waits for go-sdk" || !strings.Contains(r.result, "airlock 2000 /s (2.00x)") {
		t.Errorf("6c (16 agents): %q %q", r.verdict, r.result)
	}
	// 0.90x patched is still above 0.8x: the rest is airlock's, not go-sdk's.
	if r := byID["6d"]; r.verdict != "MISSED" || !strings.Contains(r.reference, "airlock 900 µs (0.90x)") {
		t.Errorf("6d (the 0.8x goal): %q %q", r.verdict, r.reference)
	}
	rows = peerRows([]string{"go"}, func(target, a, q string) float64 {
		if strings.HasSuffix(target, "-patched") {
			return 0
		}
		return fig(target, a, q)
	}, "applying the patch: it does not apply")
	for _, r := range rows {
		if !strings.Contains(r.result+r.reference, "with go-sdk patched: not measured (applying the patch: it does not apply)") {
			t.Errorf("%s does not say why the patched figure is missing: %q %q", r.id, r.result, r.reference)
		}
	}
}
