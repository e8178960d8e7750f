package stampduty

import (
	"errors"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestArticleAmount(t *testing.T) {
	const msgPrice = "The consideration price must be greater than 0 for the selected purpose. Please provide a valid consideration price."
	rangeArt := Article{ID: 1, PurposeName: "Rent", State: "Delhi", Min: 100, Max: 500}
	fixedArt := Article{ID: 2, PurposeName: "Affidavit", State: "Delhi", Min: 0, Max: 1000, Fixed: ptr[int64](20)}
	follow := func(min, max int64, factor string, fixed *int64) Article {
		d, err := ParseDecimal(factor)
		if err != nil {
			t.Fatal(err)
		}
		return Article{ID: 3, PurposeName: "Sale", State: "Goa", Min: min, Max: max, Fixed: fixed, FollowsConsideration: true, Factor: &d}
	}

	ok := []struct {
		name          string
		art           Article
		amount, price int64
		want          int64
	}{
		{"FixedEqual", fixedArt, 20, 0, 20},
		{"FixedEqualIgnoresPrice", fixedArt, 20, 999, 20},
		{"RangeAtMin", rangeArt, 100, 0, 100},
		{"RangeAtMax", rangeArt, 500, 0, 500},
		{"RangeInside", rangeArt, 321, 0, 321},
		{"RangeSingleValue", Article{Min: 7, Max: 7}, 7, 0, 7},
		{"FollowingExact", follow(0, 1000000, "0.07", nil), 0, 100, 7},
		{"FollowingRoundsUp", follow(0, 1000000, "0.07", nil), 0, 101, 8},
		{"FollowingTinyFactorRoundsUpToOne", follow(0, 1000000, "0.001", nil), 0, 1, 1},
		{"FollowingIgnoresAmount", follow(0, 1000000, "0.07", nil), 999999, 100, 7},
		{"FollowingIgnoresNegativeAmount", follow(0, 1000000, "0.07", nil), -5, 100, 7},
		{"FollowingClampedToMin", follow(50, 1000, "0.07", nil), 0, 100, 50},
		{"FollowingClampedToMax", follow(0, 5, "0.07", nil), 0, 100, 5},
		{"FollowingAtMin", follow(7, 10, "0.07", nil), 0, 100, 7},
		{"FollowingAtMax", follow(0, 7, "0.07", nil), 0, 100, 7},
		{"FollowingFixedOverridesClampUp", follow(0, 1000, "0.07", ptr[int64](30)), 0, 100, 30},
		{"FollowingFixedOverridesClampDown", follow(0, 1000, "0.07", ptr[int64](3)), 0, 100, 3},
		{"FollowingFixedOutsideMinMax", follow(10, 20, "0.07", ptr[int64](500)), 0, 100, 500},
		{"FollowingMaxPriceFactorOne", follow(0, MaxAmount, "1", nil), 0, MaxAmount, MaxAmount},
		{"FollowingOverflowClampsToMax", follow(0, MaxAmount, "18446744073709551615", nil), 0, MaxAmount, MaxAmount},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.art.Amount(tc.amount, tc.price)
			if err != nil {
				t.Fatalf("Amount(%d, %d): %v", tc.amount, tc.price, err)
			}
			if want := tc.want; got != want {
				t.Errorf("Amount(%d, %d) = %d, want %d", tc.amount, tc.price, got, want)
			}
		})
	}

	invalid := []struct {
		name          string
		art           Article
		amount, price int64
		path, msg     string
	}{
		{"FixedNotEqual", fixedArt, 25, 0, "amount",
			"The purpose have a fixed amount of: 20, while the amount passed is equal to: 25"},
		{"FixedNotEqualZero", fixedArt, 0, 0, "amount",
			"The purpose have a fixed amount of: 20, while the amount passed is equal to: 0"},
		{"RangeBelowMin", rangeArt, 99, 0, "amount",
			"The purpose can take an amount in the range of: 100-500, while the amount passed is equal to: 99"},
		{"RangeAboveMax", rangeArt, 501, 0, "amount",
			"The purpose can take an amount in the range of: 100-500, while the amount passed is equal to: 501"},
		{"FollowingPriceZero", follow(0, 100, "0.07", nil), 5, 0, "considerationPrice", msgPrice},
		{"FollowingPriceNegative", follow(0, 100, "0.07", nil), 5, -1, "considerationPrice", msgPrice},
		{"FollowingFixedPriceZero", follow(0, 100, "0.07", ptr[int64](20)), 20, 0, "considerationPrice", msgPrice},
	}
	for _, tc := range invalid {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.art.Amount(tc.amount, tc.price)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Amount(%d, %d) = %d, %v; want an *Error", tc.amount, tc.price, got, err)
			}
			if got, want := e.Code, EINVALID; got != want {
				t.Errorf("Code = %q, want %q", got, want)
			}
			if got, want := e.Message, tc.msg; got != want {
				t.Errorf("Message = %q, want %q", got, want)
			}
			if got, want := len(e.Fields), 1; got != want {
				t.Fatalf("%d fields, want %d", got, want)
			}
			if got, want := e.Fields[0].Path, tc.path; got != want {
				t.Errorf("Path = %q, want %q", got, want)
			}
			if got, want := e.Fields[0].Message, tc.msg; got != want {
				t.Errorf("field Message = %q, want %q", got, want)
			}
		})
	}

	broken := []struct {
		name string
		art  Article
	}{
		{"FollowingWithoutFactor", Article{FollowsConsideration: true, Min: 0, Max: 100}},
		{"FollowingMinAboveMax", follow(100, 10, "0.07", nil)},
		{"RangeMinAboveMax", Article{Min: 100, Max: 10}},
	}
	for _, tc := range broken {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.art.Amount(50, 100)
			if got, want := ErrorCode(err), EINTERNAL; got != want {
				t.Errorf("Amount = %d, %v; code %q, want %q", v, err, got, want)
			}
			if got, want := ErrorMessage(err), "Internal Server Error"; got != want {
				t.Errorf("message = %q, want %q", got, want)
			}
		})
	}
}
