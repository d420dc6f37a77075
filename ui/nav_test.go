package ui

import "testing"

// TestBackRetracesEveryStep: esc walks back through every screen the person
// opened, in reverse, even when the same kind of screen is opened twice (details
// → hazards → details of another tool). With one "came from" field per screen
// this looped between the hazards view and the details.
func TestBackRetracesEveryStep(t *testing.T) {
	h := newHarness(t, 100, 40, false)
	h.keys("enter") // details of the selected tool
	if h.m.screen != screenDetail {
		t.Fatalf("enter opened %v", h.m.screen)
	}
	h.keys("z") // hazards, from the details
	if h.m.screen != screenHazards {
		t.Fatalf("z opened %v", h.m.screen)
	}
	h.keys("enter") // details of the first hazard's tool
	if h.m.screen != screenDetail {
		t.Fatalf("enter in the hazards view opened %v", h.m.screen)
	}
	h.keys("l") // logs over those details
	want := []screenID{screenDetail, screenHazards, screenDetail, screenMain}
	for i, w := range want {
		h.keys("esc")
		if h.m.screen != w {
			t.Fatalf("esc #%d went to %v, want %v (the path back: %v)", i+1, h.m.screen, w, want)
		}
	}
}
