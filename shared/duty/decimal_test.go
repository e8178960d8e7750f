package duty

import (
	"math/big"
	"testing"
)

func TestParseMoney(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // as a fraction; "" when refused
	}{
		{"500", "500/1"},
		{"0.50", "1/2"},
		{"0", "0/1"},
		{"1000000", "1000000/1"},
		{"99999999999999999999.99", "9999999999999999999999/100"},
		{"0.001", ""},                 // paise are the smallest unit
		{"-5", ""},                    // money in a rule has no sign: a concession is a negative rate
		{"007", ""},                   // no leading zero
		{"1e3", ""},                   // no exponent
		{" 1", ""},                    // no space
		{"1.", ""},                    // no point without decimals
		{"+1", ""},                    // no plus
		{"", ""},                      // no empty string
		{"1,000", ""},                 // no grouping
		{"123456789012345678901", ""}, // 21 digits before the point
	} {
		t.Run(tc.in, func(t *testing.T) {
			r, err := ParseMoney(tc.in)
			if tc.want == "" {
				if err == nil {
					t.Errorf("ParseMoney(%q) = %v, want it refused", tc.in, r)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseMoney(%q): %v", tc.in, err)
			}
			if got := r.String(); got != tc.want {
				t.Errorf("ParseMoney(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"0.05", "1/20"},
		{"-0.01", "-1/100"},
		{"1", "1/1"},
		{"-1", "-1/1"},
		{"0.000000000000000001", "1/1000000000000000000"},
		{"0.0000000000000000001", ""}, // 19 decimals
		{"1.01", ""},                  // above 1
		{"-1.5", ""},                  // below -1
		{"5", ""},                     // a percent, not a fraction
		{"0.5e-1", ""},
		{"", ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			r, err := ParseRate(tc.in)
			if tc.want == "" {
				if err == nil {
					t.Errorf("ParseRate(%q) = %v, want it refused", tc.in, r)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRate(%q): %v", tc.in, err)
			}
			if got := r.String(); got != tc.want {
				t.Errorf("ParseRate(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestFormatPaise(t *testing.T) {
	big20, _ := new(big.Int).SetString("9999999999999999999999", 10)
	for _, tc := range []struct {
		p    *big.Int
		want string
	}{
		{big.NewInt(0), "0.00"},
		{big.NewInt(5), "0.05"},
		{big.NewInt(1250), "12.50"},
		{big.NewInt(-1250), "-12.50"},
		{big.NewInt(-5), "-0.05"},
		{big20, "99999999999999999999.99"},
	} {
		if got := FormatPaise(tc.p); got != tc.want {
			t.Errorf("FormatPaise(%s) = %q, want %q", tc.p, got, tc.want)
		}
	}
}
