package stampduty_test

import (
	"errors"
	"testing"

	"stampduty/shared/function"
	"stampduty/shared/stampduty"
)

// createOrderRules is the work of a create between reading the body and the
// store: the HTTP layer's decode, then the domain's checks and amount.
func createOrderRules(body []byte, art stampduty.Article) (int64, error) {
	members, err := function.DecodeObject(body)
	if err != nil {
		return 0, err
	}
	r := stampduty.NewOrderBody(members)
	if _, _, ok, err := r.PurposeState(); err != nil {
		return 0, err
	} else if !ok {
		return 0, errors.New("purpose and state are not strings")
	}
	req, err := r.Validate()
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
