package stampduty

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"stampduty/shared/duty"
	"strings"
	"testing"
)

func TestQuoteQueryValidate(t *testing.T) {
	one := func(s string) []string { return []string{s} }
	valid := QuoteQuery{Purpose: one(" Sale Deed "), State: one("Delhi")}
	for _, tc := range []struct {
		name  string
		edit  func(q *QuoteQuery)
		want  string // the request as %+v with Amount dereferenced, or the error message
		paths []string
	}{
		{"Minimal", func(q *QuoteQuery) {}, "Sale Deed Delhi <nil> 0", nil},
		{"Integers", func(q *QuoteQuery) { q.Amount, q.ConsiderationPrice = one("200"), one("2500000") }, "Sale Deed Delhi 200 2500000", nil},
		{"LeadingZeros", func(q *QuoteQuery) { q.Amount, q.ConsiderationPrice = one("007"), one("000") }, "Sale Deed Delhi 7 0", nil},
		{"AtMax", func(q *QuoteQuery) { q.Amount = one("999999999999999") }, "Sale Deed Delhi 999999999999999 0", nil},
		{"AboveMax", func(q *QuoteQuery) {
			q.Amount, q.ConsiderationPrice = one("1000000000000000"), one("99999999999999999999999")
		},
			"Invalid data. amount must be at most 999999999999999; considerationPrice must have at most 15 digits", []string{"amount", "considerationPrice"}},
		{"Negative", func(q *QuoteQuery) { q.Amount = one("-5") }, "Invalid data. amount must be greater than or equal to 0", []string{"amount"}},
		{"NotIntegers", func(q *QuoteQuery) { q.Amount, q.ConsiderationPrice = one("2e2"), one("") },
			"Invalid data. amount must be an integer; considerationPrice must be an integer", []string{"amount", "considerationPrice"}},
		{"Spaces", func(q *QuoteQuery) { q.Amount = one(" 20") }, "Invalid data. amount must be an integer", []string{"amount"}},
		{"Fraction", func(q *QuoteQuery) { q.Amount = one("20.0") }, "Invalid data. amount must be an integer", []string{"amount"}},
		{"Sign", func(q *QuoteQuery) { q.Amount = one("+20") }, "Invalid data. amount must be an integer", []string{"amount"}},
		{"Required", func(q *QuoteQuery) { q.Purpose, q.State = nil, nil },
			"Invalid data. purpose is a required field; state is a required field", []string{"purpose", "state"}},
		{"Twice", func(q *QuoteQuery) { q.Amount, q.State = []string{"1", "2"}, []string{"Delhi", "Goa"} },
			"Invalid data. amount is given more than once; state is given more than once", []string{"amount", "state"}},
		{"Quantity", func(q *QuoteQuery) { q.Quantity = one("20") }, "Sale Deed Delhi <nil> 0 ×20", nil},
		{"QuantityZero", func(q *QuoteQuery) { q.Quantity = one("0") }, "Invalid data. quantity must be an integer from 1 to 20", []string{"quantity"}},
		{"QuantityTwentyOne", func(q *QuoteQuery) { q.Quantity = one("21") }, "Invalid data. quantity must be an integer from 1 to 20", []string{"quantity"}},
		{"QuantityFraction", func(q *QuoteQuery) { q.Quantity = one("1.5") }, "Invalid data. quantity must be an integer from 1 to 20", []string{"quantity"}},
		{"QuantityWord", func(q *QuoteQuery) { q.Quantity = one("two") }, "Invalid data. quantity must be an integer from 1 to 20", []string{"quantity"}},
		{"QuantityTwice", func(q *QuoteQuery) { q.Quantity = []string{"1", "2"} }, "Invalid data. quantity is given more than once", []string{"quantity"}},
		{"BadStateAndEmptyPurpose", func(q *QuoteQuery) { q.Purpose, q.State = one("  "), one("Atlantis") },
			"Invalid data. purpose must not be empty; state must be one of the states or union territories of India", []string{"purpose", "state"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := valid
			tc.edit(&q)
			req, err := q.Validate()
			if err == nil && req.InputErrors != nil {
				// The inputs' form errors wait for the rule's own (Quote).
				err = Invalid(req.InputErrors)
			}
			var got string
			var paths []string
			if err != nil {
				e := asError(err)
				if e == nil || e.Code != EINVALID {
					t.Fatalf("error %v, want an EINVALID *Error", err)
				}
				got = e.Message
				for _, f := range e.Fields {
					paths = append(paths, f.Path)
				}
			} else {
				amount := "<nil>"
				if req.Amount != nil {
					amount = fmt.Sprint(*req.Amount)
				}
				got = fmt.Sprintf("%s %s %s %d", req.Purpose, req.State, amount, req.ConsiderationPrice)
				if req.Quantity != 1 {
					got += fmt.Sprintf(" ×%d", req.Quantity)
				}
			}
			if got != tc.want {
				t.Errorf("Validate() = %q\n want %q", got, tc.want)
			}
			if fmt.Sprint(paths) != fmt.Sprint(tc.paths) {
				t.Errorf("paths = %v, want %v", paths, tc.paths)
			}
		})
	}
}

func TestQuoteQueryPurposeState(t *testing.T) {
	for _, tc := range []struct {
		name           string
		q              QuoteQuery
		purpose, state string
		ok, notFound   bool
	}{
		{"Trimmed", QuoteQuery{Purpose: []string{" Affidavit\t"}, State: []string{"Goa"}}, "Affidavit", "Goa", true, false},
		{"NoPurpose", QuoteQuery{State: []string{"Goa"}}, "", "", false, false},
		{"PurposeTwice", QuoteQuery{Purpose: []string{"A", "B"}, State: []string{"Goa"}}, "", "", false, false},
		{"UnknownState", QuoteQuery{Purpose: []string{"Affidavit"}, State: []string{"goa"}}, "Affidavit", "goa", true, true},
		{"Unprintable", QuoteQuery{Purpose: []string{"Affi\x00davit"}, State: []string{"Goa"}}, "Affi\x00davit", "Goa", true, true},
		{"NotUTF8", QuoteQuery{Purpose: []string{"Affi\xffdavit"}, State: []string{"Goa"}}, "Affi\xffdavit", "Goa", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, s, ok, err := tc.q.PurposeState()
			if p != tc.purpose || s != tc.state || ok != tc.ok {
				t.Errorf("PurposeState() = %q, %q, %v; want %q, %q, %v", p, s, ok, tc.purpose, tc.state, tc.ok)
			}
			if got, want := ErrorCode(err) == ENOTFOUND, tc.notFound; got != want {
				t.Errorf("not found = %v (%v), want %v", got, err, want)
			}
		})
	}
}

func TestArticleQuote(t *testing.T) {
	factor := func(s string) *Decimal {
		d, err := ParseDecimal(s)
		if err != nil {
			t.Fatal(err)
		}
		return &d
	}
	rangeArt := Article{PurposeName: "Rent", State: "Delhi", Min: 100, Max: 500}
	fixedArt := Article{PurposeName: "Affidavit", State: "Delhi", Max: 1000, Fixed: ptr[int64](20)}
	saleDeed := Article{PurposeName: "Sale Deed", State: "Delhi", Min: 100, Max: 2500000, FollowsConsideration: true, Factor: factor("0.06")}
	partnership := Article{PurposeName: "Partnership", State: "Goa", Max: 5000, Fixed: ptr[int64](1000), FollowsConsideration: true, Factor: factor("0.01")}
	for _, tc := range []struct {
		name   string
		art    Article
		amount *int64
		price  int64
		want   string // rule amount exact, or the error message
		papers int64  // 1 when 0
	}{
		{"RangeWithoutAmount", rangeArt, nil, 0, "range <nil> <nil>", 0},
		{"RangeWithAmount", rangeArt, ptr[int64](321), 0, "range 321 <nil>", 0},
		{"RangeBelow", rangeArt, ptr[int64](99), 0, "The purpose can take an amount in the range of: 100-500, while the amount passed is equal to: 99", 0},
		{"RangeIgnoresPrice", rangeArt, ptr[int64](100), 7, "range 100 <nil>", 0},
		{"FixedWithoutAmount", fixedArt, nil, 0, "fixed 20 <nil>", 0},
		{"FixedEqual", fixedArt, ptr[int64](20), 0, "fixed 20 <nil>", 0},
		{"FixedDiffers", fixedArt, ptr[int64](25), 0, "The purpose have a fixed amount of: 20, while the amount passed is equal to: 25", 0},
		{"Consideration", saleDeed, nil, 2500000, "consideration 150000 150000", 0},
		{"ConsiderationRoundsUp", saleDeed, nil, 2500001, "consideration 150001 150000.06", 0},
		{"ConsiderationIgnoresAmount", saleDeed, ptr[int64](3), 2500000, "consideration 150000 150000", 0},
		{"ConsiderationClampedToMin", saleDeed, nil, 10, "consideration 100 0.6", 0},
		{"ConsiderationClampedToMax", saleDeed, nil, 999999999999999, "consideration 2500000 59999999999999.94", 0},
		{"ConsiderationFixedWins", partnership, nil, 5000000, "consideration 1000 50000", 0},
		{"ConsiderationZero", saleDeed, nil, 0, msgConsiderationPrice, 0},
		{"ThreePapers", rangeArt, ptr[int64](321), 0, "range 321 <nil>", 3},
		{"TotalPastMaxAmount", rangeArt, ptr[int64](500), 0, "", 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			papers := max(tc.papers, 1)
			if tc.name == "TotalPastMaxAmount" {
				tc.art.Max = MaxAmount
				tc.amount = ptr[int64](MaxAmount / 10)
				tc.want = "quantity must be at most 10 for an amount of 99999999999999: the total amount must be at most 999999999999999"
			}
			req := QuoteRequest{Amount: tc.amount, ConsiderationPrice: tc.price, Quantity: papers,
				Inputs: duty.Request{Numbers: map[string]int64{"considerationPrice": tc.price}, Enums: map[string]string{}}}
			if tc.amount != nil {
				req.Inputs.Numbers["amount"] = *tc.amount
			}
			q, err := tc.art.Quote(req, "2025-09-01")
			var got string
			if err != nil {
				got = ErrorMessage(err)
			} else {
				amount, exact := "<nil>", "<nil>"
				if q.Amount != nil {
					amount = fmt.Sprint(*q.Amount)
				}
				if q.Exact != nil {
					exact = *q.Exact
				}
				got = q.Rule + " " + amount + " " + exact
				if q.Quantity != papers || (q.Amount == nil) != (q.TotalAmount == nil) || q.Amount != nil && *q.TotalAmount != *q.Amount*papers {
					t.Errorf("quantity %d, total_amount %v for amount %v × %d papers", q.Quantity, q.TotalAmount, q.Amount, papers)
				}
				if q.PurposeName != tc.art.PurposeName || q.State != tc.art.State || q.Min != tc.art.Min || q.Max != tc.art.Max || q.Fixed != tc.art.Fixed || q.Factor != tc.art.Factor {
					t.Errorf("quote %+v does not carry the article %+v", q, tc.art)
				}
			}
			if got != tc.want {
				t.Errorf("Quote = %q, want %q", got, tc.want)
			}
			if err == nil && q.Amount != nil {
				// The quoted amount is the one the create computes.
				sent := int64(0)
				if tc.amount != nil {
					sent = *tc.amount
				} else if tc.art.Fixed != nil {
					sent = *tc.art.Fixed
				}
				if created, err := tc.art.Amount(sent, tc.price); err != nil || created != *q.Amount {
					t.Errorf("Amount = %d, %v; the quote says %d", created, err, *q.Amount)
				}
			}
		})
	}
}

// TestMulExact compares MulExact with math/big's exact rationals on
// random factors and prices.
func TestMulExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 3))
	for i := 0; i < 5000; i++ {
		scale := rng.IntN(MaxDecimalScale + 1)
		coef := rng.Uint64() >> rng.IntN(64)
		d := NewDecimal(coef, scale)
		price := uint64(rng.Int64N(MaxAmount + 1))
		want := new(big.Rat).Mul(new(big.Rat).SetFrac(new(big.Int).SetUint64(coef), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)),
			new(big.Rat).SetInt(new(big.Int).SetUint64(price)))
		s := want.FloatString(MaxDecimalScale)
		if strings.Contains(s, ".") {
			s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
		}
		if got := d.MulExact(price); got != s {
			t.Fatalf("%s × %d = %s, want %s", d, price, got, s)
		}
	}
}

// TestQuoteOfAnEarlierLegacyVersion: a legacy article given a version of
// its own from a date (§7) keeps its migrated version for the dates
// before: a quote of such a date answers as the legacy article did,
// although the article's legacy fields are now its rules' projection.
func TestQuoteOfAnEarlierLegacyVersion(t *testing.T) {
	factor, err := ParseDecimal("0.06")
	if err != nil {
		t.Fatal(err)
	}
	own := `{"effectiveFrom":"2026-04-01","effectiveTo":null,"citation":{"text":"a new schedule","url":"https://example.com/s"},` +
		`"inputs":{},"components":[{"id":"duty","label":"Fixed","kind":"fixed","amount":"500"}]}`
	for _, tc := range []struct {
		art           Article
		amount, price int64
	}{
		{Article{PurposeName: "Rent", State: "Delhi", Min: 100, Max: 500}, 321, 0},
		{Article{PurposeName: "Rent", State: "Delhi", Min: 100, Max: 500}, -1, 0},
		{Article{PurposeName: "Affidavit", State: "Delhi", Max: 1000, Fixed: ptr[int64](20)}, -1, 0},
		{Article{PurposeName: "Sale Deed", State: "Delhi", Min: 100, Max: 2500000, FollowsConsideration: true, Factor: &factor}, -1, 2500001},
	} {
		legacy, err := tc.art.DutyRules()
		if err != nil {
			t.Fatal(err)
		}
		closed := strings.Replace(string(legacy[0].JSON()), `"effectiveTo":null`, `"effectiveTo":"2026-04-01"`, 1)
		rules, problems := duty.ParseRules([]byte("[" + closed + "," + own + "]"))
		if problems != nil {
			t.Fatal(problems)
		}
		mixed := Article{PurposeName: tc.art.PurposeName, State: tc.art.State, Rules: rules}.Projected("2026-12-07")
		quote := func(a Article, date string) (Quote, error) {
			req := QuoteRequest{ConsiderationPrice: tc.price, Quantity: 1,
				Inputs: duty.Request{Numbers: map[string]int64{"considerationPrice": tc.price}, Enums: map[string]string{}, Date: date}}
			if tc.amount >= 0 {
				req.Amount = &tc.amount
				req.Inputs.Numbers["amount"] = tc.amount
			}
			return a.Quote(req, "2026-12-07")
		}
		show := func(q Quote, err error) string {
			if err != nil {
				return ErrorMessage(err)
			}
			amount, exact, total := "<nil>", "<nil>", "<nil>"
			if q.Amount != nil {
				amount = fmt.Sprint(*q.Amount)
			}
			if q.Exact != nil {
				exact = *q.Exact
			}
			if q.Duty != nil {
				total = q.Duty.Total
			}
			return q.Rule + " " + amount + " " + exact + " " + total
		}
		t.Run(fmt.Sprintf("%s amount %d", tc.art.PurposeName, tc.amount), func(t *testing.T) {
			want := show(quote(tc.art, "2025-09-01"))
			if got := show(quote(mixed, "2025-09-01")); got != want {
				t.Errorf("quote of 2025-09-01 = %s, want the legacy article's %s", got, want)
			}
			if q, err := quote(mixed, "2026-05-01"); err != nil || q.Rule != RuleSchedule || *q.Amount != 500 {
				t.Errorf("quote of 2026-05-01 = %s, want the schedule's 500", show(q, err))
			}
		})
	}
}
