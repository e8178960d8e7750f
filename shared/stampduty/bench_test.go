package stampduty_test

import (
	"errors"
	"testing"

	"stampduty/shared/function"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
)

// createOrderRules is the work of a create between reading the body and the
// store: the HTTP layer's decode, then the domain's checks and amount.
func createOrderRules(body []byte, art stampduty.Article) (int64, error) {
	members, err := function.DecodeObject(body)
	if err != nil {
		return 0, err
	}
	r := stampduty.NewOrderBody(stampjson.Fields(members))
	if _, _, ok, err := r.PurposeState(); err != nil {
		return 0, err
	} else if !ok {
		return 0, errors.New("purpose and state are not strings")
	}
	req, err := r.Validate(false)
	if err != nil {
		return 0, err
	}
	return art.Amount(req.Amount, req.ConsiderationPrice)
}

var benchArticle = stampduty.Article{ID: 1, PurposeName: "Rent Agreement", State: "Karnataka", Min: 100, Max: 500}

func TestCreateOrderRulesAllocations(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := createOrderRules(stampduty.FullOrderBody, benchArticle); err != nil {
			t.Fatal(err)
		}
	})
	if allocs >= 250 {
		t.Errorf("decode+validate+amount allocates %v times, want under 250", allocs)
	}
}

// BenchmarkCreateOrderRules measures createOrderRules on a full body; make
// bench reports it as the warm cost of a create outside DynamoDB.
func BenchmarkCreateOrderRules(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(stampduty.FullOrderBody)))
	for b.Loop() {
		if _, err := createOrderRules(stampduty.FullOrderBody, benchArticle); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecimal measures the exact decimals of the amount rule: reading
// a factor, writing it, and pricing with it (MulCeil, MulExact).
func BenchmarkDecimal(b *testing.B) {
	factor, err := stampduty.ParseDecimal("0.07")
	if err != nil {
		b.Fatal(err)
	}
	for _, lit := range []string{"0.07", "1e-18"} {
		b.Run("Parse/"+lit, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := stampduty.ParseDecimal(lit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("String", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = factor.String()
		}
	})
	b.Run("MulCeil", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := factor.MulCeil(123456789); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("MulExact", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = factor.MulExact(123456789)
		}
	})
	one := stampduty.NewDecimal(1, 0)
	b.Run("Cmp", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = factor.Cmp(one)
		}
	})
}
