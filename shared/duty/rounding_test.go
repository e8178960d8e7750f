package duty

import (
	"math/big"
	"testing"
)

func TestRound(t *testing.T) {
	rat := func(s string) *big.Rat {
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("bad fraction %q", s)
		}
		return r
	}
	for _, tc := range []struct {
		name       string
		step, mode string
		x          string // rupees, as a fraction
		want       string // rupees, two decimals
	}{
		{"UpToThePaisa", "0.01", Up, "12345/1000", "12.35"},
		{"UpLeavesAnExactValue", "0.01", Up, "12.34", "12.34"},
		{"UpToTheRupee", "1", Up, "100001/100", "1001.00"},
		{"UpOfAConcessionGoesTowardZero", "1", Up, "-10.5", "-10.00"},
		{"UpToEveryHundred", "100", Up, "4901", "5000.00"},
		{"DownToTheRupee", "1", Down, "10.99", "10.00"},
		{"DownOfAConcessionGoesAwayFromZero", "1", Down, "-10.5", "-11.00"},
		{"HalfUpBelowHalf", "100", HalfUp, "149.99", "100.00"},
		{"HalfUpAtHalf", "100", HalfUp, "150", "200.00"},
		{"HalfUpANegativeTieGoesUp", "1", HalfUp, "-10.5", "-10.00"},
		{"HalfUpBelowANegativeHalf", "1", HalfUp, "-10.51", "-11.00"},
		{"AStepInPaise", "0.05", Up, "0.01", "0.05"},
		{"OneThirdUpToThePaisa", "0.01", Up, "1/3", "0.34"},
		{"PastInt64", "1", Up, "99999999999999999999.01", "100000000000000000000.00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRounding(tc.step, tc.mode)
			if err != nil {
				t.Fatal(err)
			}
			if got := FormatPaise(r.Round(rat(tc.x))); got != tc.want {
				t.Errorf("Round(%s, step %s %s) = %s, want %s", tc.x, tc.step, tc.mode, got, tc.want)
			}
		})
	}
}

func TestParseRoundingRefuses(t *testing.T) {
	for _, tc := range []struct{ step, mode string }{
		{"0", Up},         // not positive
		{"0.001", Up},     // finer than a paisa
		{"1", "ceil"},     // not a mode
		{"1", ""},         // no mode
		{"-1", Up},        // negative
		{"1.5.0", HalfUp}, // not a number
	} {
		if r, err := ParseRounding(tc.step, tc.mode); err == nil {
			t.Errorf("ParseRounding(%q, %q) = %+v, want it refused", tc.step, tc.mode, r)
		}
	}
}
