package stampduty

import (
	"slices"
	"testing"
)

// wantStates is decisions.md's list, states then union territories.
var wantStates = []string{
	"Andhra Pradesh", "Arunachal Pradesh", "Assam", "Bihar", "Chhattisgarh", "Goa", "Gujarat",
	"Haryana", "Himachal Pradesh", "Jharkhand", "Karnataka", "Kerala", "Madhya Pradesh",
	"Maharashtra", "Manipur", "Meghalaya", "Mizoram", "Nagaland", "Odisha", "Punjab",
	"Rajasthan", "Sikkim", "Tamil Nadu", "Telangana", "Tripura", "Uttar Pradesh",
	"Uttarakhand", "West Bengal",
	"Andaman and Nicobar Islands", "Chandigarh", "Dadra and Nagar Haveli and Daman and Diu",
	"Delhi", "Jammu and Kashmir", "Ladakh", "Lakshadweep", "Puducherry",
}

// States returns the predefined state enumeration: the 28 states of India,
// then the 8 union territories. The slice is a fresh copy.
func States() []string {
	out := make([]string, len(states))
	copy(out, states[:])
	return out
}

func TestStates(t *testing.T) {
	t.Run("Count", func(t *testing.T) {
		if got, want := len(States()), 36; got != want {
			t.Errorf("len(States()) = %d, want %d", got, want)
		}
	})
	t.Run("SpelledAndOrderedAsDecided", func(t *testing.T) {
		if got, want := States(), wantStates; !slices.Equal(got, want) {
			t.Errorf("States() = %q, want %q", got, want)
		}
	})
	t.Run("TwentyEightStatesThenEightTerritories", func(t *testing.T) {
		s := States()
		if got, want := s[27], "West Bengal"; got != want {
			t.Errorf("last state = %q, want %q", got, want)
		}
		if got, want := s[28], "Andaman and Nicobar Islands"; got != want {
			t.Errorf("first union territory = %q, want %q", got, want)
		}
	})
	t.Run("NoDuplicates", func(t *testing.T) {
		s := States()
		slices.Sort(s)
		if got := slices.Compact(s); len(got) != 36 {
			t.Errorf("%d distinct states, want 36", len(got))
		}
	})
	t.Run("FreshCopy", func(t *testing.T) {
		s := States()
		s[0] = "Atlantis"
		if got, want := States()[0], "Andhra Pradesh"; got != want {
			t.Errorf("States()[0] = %q after changing a copy, want %q", got, want)
		}
		if ValidState("Atlantis") {
			t.Error("changing a copy changed ValidState")
		}
	})
}

func TestValidState(t *testing.T) {
	for _, s := range wantStates {
		t.Run("Valid/"+s, func(t *testing.T) {
			if !ValidState(s) {
				t.Errorf("ValidState(%q) = false, want true", s)
			}
		})
	}
	for _, s := range []string{
		"", "delhi", "DELHI", " Delhi", "Delhi ", "Orissa", "Pondicherry", "Uttaranchal",
		"Dadra and Nagar Haveli", "Daman and Diu", "Andaman & Nicobar Islands", "Jammu & Kashmir",
		"New Delhi", "NCT of Delhi", "Tamil  Nadu", "Delhi\x00",
	} {
		t.Run("Invalid/"+s, func(t *testing.T) {
			if ValidState(s) {
				t.Errorf("ValidState(%q) = true, want false", s)
			}
		})
	}
}
