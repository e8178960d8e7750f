package stampduty

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestParseDecimal(t *testing.T) {
	valid := []struct {
		name, in, want string
		coef           uint64
		scale          uint8
	}{
		{"Zero", "0", "0", 0, 0},
		{"NegativeZero", "-0", "0", 0, 0},
		{"NegativeZeroFraction", "-0.000", "0", 0, 0},
		{"ZeroWithExponent", "0e999999999", "0", 0, 0},
		{"One", "1", "1", 1, 0},
		{"OnePointFiftyNormalised", "1.50", "1.5", 15, 1},
		{"Percent", "0.07", "0.07", 7, 2},
		{"UpperExponent", "7E-2", "0.07", 7, 2},
		{"LowerExponent", "5e-1", "0.5", 5, 1},
		{"PlusExponent", "5e+1", "50", 50, 0},
		{"ExponentOnFraction", "1.25e1", "12.5", 125, 1},
		{"TrailingZerosInteger", "1000", "1000", 1000, 0},
		{"TrailingZerosFraction", "12.500000", "12.5", 125, 1},
		{"FractionBecomesInteger", "2.50e1", "25", 25, 0},
		{"EighteenFractionDigits", "0.000000000000000001", "0.000000000000000001", 1, 18},
		{"EighteenDigitsWithTrailingZeros", "0.0000000000000000010000", "0.000000000000000001", 1, 18},
		{"TinyExponent", "1e-18", "0.000000000000000001", 1, 18},
		{"MaxUint64", "18446744073709551615", "18446744073709551615", math.MaxUint64, 0},
		{"MaxUint64WithExponent", "1.8446744073709551615e19", "18446744073709551615", math.MaxUint64, 0},
		{"LargestPowerOfTen", "1e19", "10000000000000000000", 1e19, 0},
		{"FractionAndScale18", "1.000000000000000001", "1.000000000000000001", 1000000000000000001, 18},
		{"LeadingZeroFraction", "0.10", "0.1", 1, 1},
	}
	for _, tc := range valid {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseDecimal(tc.in)
			if err != nil {
				t.Fatalf("ParseDecimal(%q): %v", tc.in, err)
			}
			if got, want := d.String(), tc.want; got != want {
				t.Errorf("ParseDecimal(%q).String() = %q, want %q", tc.in, got, want)
			}
			if got, want := d, NewDecimal(tc.coef, int(tc.scale)); got.Cmp(want) != 0 {
				t.Errorf("ParseDecimal(%q) = %s, want %s", tc.in, got, want)
			}
		})
	}

	// The inputs ParseDecimal refuses, by the error it gives: subtest name → input.
	invalid := map[error]map[string]string{
		ErrDecimalSyntax: {
			"Empty":            "",
			"LeadingPlus":      "+1",
			"LeadingSpace":     " 1",
			"TrailingSpace":    "1 ",
			"Hex":              "0x10",
			"NaN":              "NaN",
			"Infinity":         "Infinity",
			"LeadingZero":      "01",
			"BareDot":          ".5",
			"TrailingDot":      "5.",
			"EmptyExponent":    "5e",
			"SignOnlyExponent": "5e-",
			"MinusOnly":        "-",
			"DoubleMinus":      "--1",
			"Quoted":           `"1"`,
			"Comma":            "1,5",
			"Underscore":       "1_000",
			"Null":             "null",
		},
		ErrDecimalNegative: {
			"Negative":         "-1",
			"NegativeFraction": "-0.07",
		},
		ErrDecimalPrecision: {
			"NineteenFractionDigits":            "0.0000000000000000001",
			"NineteenSignificantFractionDigits": "0.1234567890123456789",
			"TinyExponent":                      "1e-19",
			"HugeNegativeExponent":              "1e-1000000",
		},
		ErrDecimalRange: {
			"AboveMaxUint64":            "18446744073709551616",
			"TwentyOneDigits":           "100000000000000000000",
			"HugeExponent":              "1e1000000",
			"AstronomicalExponent":      "1e" + strings.Repeat("9", 10000),
			"TooManyDigitsWithFraction": "1234567890123456789012.5",
		},
	}
	for want, cases := range invalid {
		for name, in := range cases {
			t.Run(name, func(t *testing.T) {
				d, err := ParseDecimal(in)
				if !errors.Is(err, want) {
					t.Fatalf("ParseDecimal(%q) = %v, %v; want error %v", in, d, err, want)
				}
			})
		}
	}
}

func TestParseDecimalHugeExponentIsCheap(t *testing.T) {
	in := "1e" + strings.Repeat("9", 100000)
	const runs = 10
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < runs; i++ {
		if _, err := ParseDecimal(in); err == nil {
			t.Fatal("no error")
		}
	}
	runtime.ReadMemStats(&after)
	// Only the error value is allocated, never a buffer sized by the
	// exponent's 100,000 digits. (Bytes, not a count: the race detector
	// sometimes adds an allocation of its own.)
	if perRun := (after.TotalAlloc - before.TotalAlloc) / runs; perRun > 2048 {
		t.Errorf("ParseDecimal of a huge exponent allocates %d bytes, want at most 2048", perRun)
	}
}

func TestNewDecimal(t *testing.T) {
	// Subtest name → NewDecimal(coef, scale) and the literal it equals.
	cases := map[string]struct {
		coef  uint64
		scale int
		want  string
	}{
		"Integer":             {7, 0, "7"},
		"Fraction":            {7, 2, "0.07"},
		"Normalised":          {700, 4, "0.07"},
		"NormalisedToInteger": {1500, 2, "15"},
		"ZeroWithScale":       {0, 5, "0"},
		"MaxScale":            {1, 18, "0.000000000000000001"},
		"MaxCoef":             {math.MaxUint64, 18, "18.446744073709551615"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := NewDecimal(tc.coef, tc.scale)
			if got, want := d.String(), tc.want; got != want {
				t.Errorf("NewDecimal(%d, %d) = %q, want %q", tc.coef, tc.scale, got, want)
			}
			p, err := ParseDecimal(tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := d, p; got.Cmp(want) != 0 {
				t.Errorf("NewDecimal(%d, %d) = %s, ParseDecimal(%q) = %s; want equal values", tc.coef, tc.scale, got, tc.want, want)
			}
		})
	}
	t.Run("EqualValuesCompareEqual", func(t *testing.T) {
		if NewDecimal(70, 3).Cmp(NewDecimal(7, 2)) != 0 {
			t.Error("0.070 and 0.07 differ")
		}
	})
	for _, scale := range []int{-1, 19} {
		t.Run(fmt.Sprintf("PanicsOnScale%d", scale), func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("NewDecimal(1, %d) did not panic", scale)
				}
			}()
			NewDecimal(1, scale)
		})
	}
}

func TestDecimalJSON(t *testing.T) {
	t.Run("MarshalPlainLiteral", func(t *testing.T) {
		for in, want := range map[string]string{"7E-2": "0.07", "1.50": "1.5", "1e3": "1000", "0": "0"} {
			d, err := ParseDecimal(in)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(b); got != want {
				t.Errorf("json.Marshal(%s) = %s, want %s", in, got, want)
			}
		}
	})
	t.Run("MarshalInStructAndPointer", func(t *testing.T) {
		d := NewDecimal(7, 2)
		b, err := json.Marshal(struct {
			V Decimal  `json:"v"`
			P *Decimal `json:"p"`
			N *Decimal `json:"n"`
		}{d, &d, nil})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(b), `{"v":0.07,"p":0.07,"n":null}`; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("UnmarshalNumber", func(t *testing.T) {
		var v struct {
			F Decimal  `json:"f"`
			P *Decimal `json:"p"`
		}
		if err := json.Unmarshal([]byte(`{"f": 7E-2, "p": 12.50}`), &v); err != nil {
			t.Fatal(err)
		}
		if got, want := v.F, NewDecimal(7, 2); got.Cmp(want) != 0 {
			t.Errorf("f = %v, want %v", got, want)
		}
		if v.P == nil || v.P.Cmp(NewDecimal(125, 1)) != 0 {
			t.Errorf("p = %v, want 12.5", v.P)
		}
	})
	t.Run("UnmarshalNullIntoValueFieldIsError", func(t *testing.T) {
		var v struct {
			F Decimal `json:"f"`
		}
		if err := json.Unmarshal([]byte(`{"f": null}`), &v); err == nil {
			t.Errorf("null into a Decimal field: no error, got %v", v.F)
		}
	})
	t.Run("UnmarshalNullPointerIsNil", func(t *testing.T) {
		var v struct {
			P *Decimal `json:"p"`
		}
		if err := json.Unmarshal([]byte(`{"p": null}`), &v); err != nil {
			t.Fatal(err)
		}
		if v.P != nil {
			t.Errorf("p = %v, want nil", v.P)
		}
	})
	for name, in := range map[string]string{
		"UnmarshalNullIsError":     `null`,
		"UnmarshalStringIsError":   `"0.07"`,
		"UnmarshalBoolIsError":     `true`,
		"UnmarshalNegativeIsError": `-1`,
	} {
		t.Run(name, func(t *testing.T) {
			var d Decimal
			if err := d.UnmarshalJSON([]byte(in)); err == nil {
				t.Errorf("UnmarshalJSON(%s) = %v, want an error", in, d)
			}
		})
	}
}

func TestDecimalCmpSign(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"0", "0", 0},
		{"0.07", "7e-2", 0},
		{"0.07", "0.070000", 0},
		{"0.07", "0.08", -1},
		{"0.1", "0.09", 1},
		{"1", "0.999999999999999999", 1},
		{"1", "1.000000000000000001", -1},
		{"18446744073709551615", "18.446744073709551615", 1},
		{"18446744073709551615", "18446744073709551615", 0},
		{"0.000000000000000001", "0", 1},
	}
	for _, tc := range cases {
		t.Run(tc.a+"Vs"+tc.b, func(t *testing.T) {
			a, b := mustDecimal(t, tc.a), mustDecimal(t, tc.b)
			if got, want := a.Cmp(b), tc.want; got != want {
				t.Errorf("%s.Cmp(%s) = %d, want %d", tc.a, tc.b, got, want)
			}
			if got, want := b.Cmp(a), -tc.want; got != want {
				t.Errorf("%s.Cmp(%s) = %d, want %d", tc.b, tc.a, got, want)
			}
		})
	}
	t.Run("Sign", func(t *testing.T) {
		if got, want := (Decimal{}).Sign(), 0; got != want {
			t.Errorf("zero Sign = %d, want %d", got, want)
		}
		if got, want := mustDecimal(t, "-0").Sign(), 0; got != want {
			t.Errorf("-0 Sign = %d, want %d", got, want)
		}
		if got, want := mustDecimal(t, "1e-18").Sign(), 1; got != want {
			t.Errorf("1e-18 Sign = %d, want %d", got, want)
		}
	})
}

func TestMulCeil(t *testing.T) {
	// The largest consideration price Validate accepts (999999999999999).
	const maxPrice = uint64(MaxAmount)
	cases := []struct {
		name   string
		price  uint64
		factor string
		want   int64
	}{
		{"Exact", 100, "0.07", 7},
		{"RoundsUp", 101, "0.07", 8},
		{"TinyRoundsUpToOne", 1, "0.001", 1},
		{"SmallestFactor", 1, "0.000000000000000001", 1},
		{"SmallestFactorLargestPrice", maxPrice, "0.000000000000000001", 1},
		{"ZeroPrice", 0, "0.07", 0},
		{"ZeroFactor", 12345, "0", 0},
		{"MaxPriceTimesOne", maxPrice, "1", 999999999999999},
		{"MaxPriceTimesPercent", maxPrice, "0.07", 70000000000000},
		{"MaxPriceTimesAlmostOne", maxPrice, "0.999999999999999999", 999999999999999},
		{"JustAboveWhole", 1000, "0.001000000000000001", 2},
		{"WholeFactor", 3, "25", 75},
		{"LargeResultFits", maxPrice, "9223", 9222999999999990777},
		{"ResultExactlyMaxInt64", 7, "1317624576693539401", math.MaxInt64},
		// The price's range is Validate's (checkAmount): MulCeil is exact for any.
		{"PriceAboveMaxAmount", maxPrice + 1, "1", 1000000000000000},
		{"LargestPrice", math.MaxUint64, "0.000000000000000001", 19},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := mustDecimal(t, tc.factor)
			got, err := d.MulCeil(tc.price)
			if err != nil {
				t.Fatalf("%s.MulCeil(%d): %v", tc.factor, tc.price, err)
			}
			if want := tc.want; got != want {
				t.Errorf("%s.MulCeil(%d) = %d, want %d", tc.factor, tc.price, got, want)
			}
			// Cross-check with exact rational arithmetic.
			r, ok := new(big.Rat).SetString(tc.factor)
			if !ok {
				t.Fatal("big.Rat")
			}
			r.Mul(r, new(big.Rat).SetInt(new(big.Int).SetUint64(tc.price)))
			q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
			if m.Sign() != 0 {
				q.Add(q, big.NewInt(1))
			}
			if got, want := got, q.Int64(); got != want {
				t.Errorf("%s.MulCeil(%d) = %d, big.Rat says %d", tc.factor, tc.price, got, want)
			}
		})
	}
	errCases := []struct {
		name   string
		price  uint64
		factor string
	}{
		{"ResultAboveMaxInt64", maxPrice, "9224"},
		{"QuotientAbove64Bits", maxPrice, "18446744073709551615"},
		{"RoundingUpPastMaxInt64", 7, "1317624576693539401.1"},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			d := mustDecimal(t, tc.factor)
			got, err := d.MulCeil(tc.price)
			if !errors.Is(err, ErrDecimalRange) {
				t.Errorf("%s.MulCeil(%d) = %d, %v; want ErrDecimalRange", tc.factor, tc.price, got, err)
			}
		})
	}
	// An article's factor is shared by every request that prices with it
	// (the article cache): pricing must leave it as it was, even at once.
	t.Run("FactorUnchangedByUse", func(t *testing.T) {
		d := mustDecimal(t, "0.07")
		kept := d
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for price := uint64(1); price <= 200; price++ {
					got, err := d.MulCeil(price)
					if want := int64((7*price + 99) / 100); err != nil || got != want {
						t.Errorf("0.07.MulCeil(%d) = %d, %v; want %d", price, got, err, want)
					}
					_ = d.MulExact(price)
					_ = d.Cmp(NewDecimal(1, 0))
				}
			})
		}
		wg.Wait()
		if got, want := d.String(), "0.07"; got != want || kept.Cmp(mustDecimal(t, "0.07")) != 0 {
			t.Errorf("after use the factor is %s (its copy %s), want %s", got, kept, want)
		}
	})
}

func TestNumberInteger(t *testing.T) {
	// Each row: the literals whose integer() is want, ok.
	cases := []struct {
		ins  []string
		want int64
		ok   bool
	}{
		{[]string{"200", "200.0", "2e2", "2.00E+2", "20000e-2"}, 200, true},
		{[]string{"-0", "-0.0e5", "0"}, 0, true},
		{[]string{"999999999999999", "9.99999999999999e14"}, 999999999999999, true},
		{[]string{"1000000000000000", "1e15"}, 1000000000000000, true},
		{[]string{"999999999999999999"}, 999999999999999999, true},
		{[]string{"1e18", "1e999999", "1e" + strings.Repeat("9", 1000)}, math.MaxInt64, true},
		{[]string{"200.5", "1e-1", "1e-999999", "-0.5"}, 0, false},
		{[]string{"-1"}, -1, true},
		{[]string{"-1e999999"}, -math.MaxInt64, true},
	}
	for _, tc := range cases {
		for _, in := range tc.ins {
			t.Run(in[:min(len(in), 20)], func(t *testing.T) {
				n, ok := scanNumber(in)
				if !ok {
					t.Fatalf("scanNumber(%q) failed", in)
				}
				got, ok := n.integer()
				if got != tc.want || ok != tc.ok {
					t.Errorf("integer(%q) = %d, %v; want %d, %v", in, got, ok, tc.want, tc.ok)
				}
			})
		}
	}
}

func mustDecimal(t testing.TB, s string) Decimal {
	t.Helper()
	d, err := ParseDecimal(s)
	if err != nil {
		t.Fatalf("ParseDecimal(%q): %v", s, err)
	}
	return d
}

// FuzzParseDecimal checks ParseDecimal against math/big on every literal
// whose exponent is small enough for big.Rat.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "-0", "0.07", "7E-2", "1.50", "18446744073709551615", "1e-18", "1e-19", "+1", "01", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDecimal(s)
		valid := json.Valid([]byte(s)) && len(s) > 0 && (s[0] == '-' || isDigit(s[0])) && isDigit(s[len(s)-1])
		if !valid {
			if err == nil {
				t.Fatalf("ParseDecimal(%q) = %v, want an error", s, d)
			}
			return
		}
		if n, _ := scanNumber(s); n.exp > 400 || n.exp < -400 {
			return
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat rejects %q", s)
		}
		if err != nil {
			switch {
			case errors.Is(err, ErrDecimalNegative):
				if r.Sign() >= 0 {
					t.Fatalf("ParseDecimal(%q): %v but value is not negative", s, err)
				}
			case errors.Is(err, ErrDecimalPrecision):
				scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)))
				if scaled.IsInt() {
					t.Fatalf("ParseDecimal(%q): %v but 18 digits suffice", s, err)
				}
			case errors.Is(err, ErrDecimalRange):
				// The value must need a coefficient above MaxUint64 at its
				// smallest scale.
				for scale := int64(0); scale <= 18; scale++ {
					c := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(scale), nil)))
					if c.IsInt() {
						if c.Num().IsUint64() {
							t.Fatalf("ParseDecimal(%q): %v but the value fits", s, err)
						}
						break
					}
				}
			default:
				t.Fatalf("ParseDecimal(%q): unexpected %v", s, err)
			}
			return
		}
		if got, ok := new(big.Rat).SetString(d.String()); !ok || got.Cmp(r) != 0 {
			t.Fatalf("ParseDecimal(%q) = %s, big.Rat says %s", s, d, r.FloatString(20))
		}
		if ds := d.String(); strings.Contains(ds, ".") && strings.HasSuffix(ds, "0") {
			t.Fatalf("ParseDecimal(%q).String() = %q is not the shortest form", s, ds)
		}
		back, err := ParseDecimal(d.String())
		if err != nil || back.Cmp(d) != 0 {
			t.Fatalf("ParseDecimal(%q).String() = %q does not round-trip: %v, %v", s, d.String(), back, err)
		}
	})
}
