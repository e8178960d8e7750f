package main

import (
	"encoding/json"
	"regexp"
	"testing"

	"stampduty/shared/stampduty"
)

// TestCatalogueStates: the catalogue page's states are exactly the
// states and union territories the API takes (stampduty.ValidState, 36 of
// them), so that its State fields offer no state the API would refuse and
// miss none it takes.
func TestCatalogueStates(t *testing.T) {
	src, err := web.ReadFile("web/catalogue.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)const STATES = (\[.*?\]);`).FindSubmatch(src)
	if m == nil {
		t.Fatal("catalogue.js has no const STATES = [...];")
	}
	var states []string
	if err := json.Unmarshal(m[1], &states); err != nil {
		t.Fatalf("STATES: %v", err)
	}
	seen := map[string]bool{}
	for _, s := range states {
		if !stampduty.ValidState(s) || seen[s] {
			t.Errorf("STATES holds %q: not a state the API takes, or twice", s)
		}
		seen[s] = true
	}
	if got, want := len(seen), 36; got != want {
		t.Errorf("%d states, want the %d the API takes", got, want)
	}
}
