package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"stampduty/shared/testkit/functest"
)

func TestStampDutyQuotes(t *testing.T) {
	const route = "/api/stamp-duty-quotes"
	s := functest.New(t, "StampDutyQuotesFunction", wire)
	quote := func(query string, headers map[string]string) functest.Response {
		t.Helper()
		return s.Invoke(functest.Request("GET", route, query, headers, ""))
	}

	// The answers for articles of the sample catalogue, byte for byte (the
	// article ids come from the shared counter, so they are not compared:
	// a quote does not carry them).
	for _, tc := range []struct {
		name, query, want string
	}{
		{"Consideration", "purpose=Sale%20Deed&state=Delhi&considerationPrice=2500000",
			`{"data":{"purpose_name":"Sale Deed","state":"Delhi","rule":"consideration","amount":150000,"quantity":1,"total_amount":150000,"exact":"150000","min":100,"max":1000000,"fixed":null,"amountPercentConsideration":0.06},"meta":{}}`},
		{"ConsiderationClampedToMin", "purpose=Lease+Deed&state=Telangana&considerationPrice=1001",
			`{"data":{"purpose_name":"Lease Deed","state":"Telangana","rule":"consideration","amount":100,"quantity":1,"total_amount":100,"exact":"4.004","min":100,"max":50000,"fixed":null,"amountPercentConsideration":0.004},"meta":{}}`},
		{"ConsiderationRoundsUp", "purpose=Gift+Deed&state=Tamil+Nadu&considerationPrice=101",
			`{"data":{"purpose_name":"Gift Deed","state":"Tamil Nadu","rule":"consideration","amount":8,"quantity":1,"total_amount":8,"exact":"7.07","min":0,"max":25000,"fixed":null,"amountPercentConsideration":0.07},"meta":{}}`},
		{"ConsiderationFixedWins", "purpose=Partnership%20Deed&state=Karnataka&considerationPrice=5000000&amount=3",
			`{"data":{"purpose_name":"Partnership Deed","state":"Karnataka","rule":"consideration","amount":1000,"quantity":1,"total_amount":1000,"exact":"50000","min":1000,"max":1000,"fixed":1000,"amountPercentConsideration":0.01},"meta":{}}`},
		{"FixedWithoutAmount", "purpose=Affidavit&state=Karnataka",
			`{"data":{"purpose_name":"Affidavit","state":"Karnataka","rule":"fixed","amount":20,"quantity":1,"total_amount":20,"exact":null,"min":20,"max":20,"fixed":20,"amountPercentConsideration":null},"meta":{}}`},
		{"FixedEqual", "purpose=Affidavit&state=Karnataka&amount=20&considerationPrice=9",
			`{"data":{"purpose_name":"Affidavit","state":"Karnataka","rule":"fixed","amount":20,"quantity":1,"total_amount":20,"exact":null,"min":20,"max":20,"fixed":20,"amountPercentConsideration":null},"meta":{}}`},
		{"ThreePapers", "purpose=Rent%20Agreement&state=Karnataka&amount=200&quantity=3",
			`{"data":{"purpose_name":"Rent Agreement","state":"Karnataka","rule":"range","amount":200,"quantity":3,"total_amount":600,"exact":null,"min":100,"max":500,"fixed":null,"amountPercentConsideration":null},"meta":{}}`},
		{"RangeWithoutAmount", "purpose=Rent%20Agreement&state=Karnataka",
			`{"data":{"purpose_name":"Rent Agreement","state":"Karnataka","rule":"range","amount":null,"quantity":1,"total_amount":null,"exact":null,"min":100,"max":500,"fixed":null,"amountPercentConsideration":null},"meta":{}}`},
		{"RangeWithAmount", "purpose=Rent%20Agreement&state=Karnataka&amount=0200",
			`{"data":{"purpose_name":"Rent Agreement","state":"Karnataka","rule":"range","amount":200,"quantity":1,"total_amount":200,"exact":null,"min":100,"max":500,"fixed":null,"amountPercentConsideration":null},"meta":{}}`},
		{"PurposeTrimmed", "purpose=%20Affidavit%20&state=Karnataka",
			`{"data":{"purpose_name":"Affidavit","state":"Karnataka","rule":"fixed","amount":20,"quantity":1,"total_amount":20,"exact":null,"min":20,"max":20,"fixed":20,"amountPercentConsideration":null},"meta":{}}`},
		{"StrapiParametersIgnored", "purpose=Affidavit&state=Karnataka&populate=*&locale=en&fields[0]=amount&status=draft",
			`{"data":{"purpose_name":"Affidavit","state":"Karnataka","rule":"fixed","amount":20,"quantity":1,"total_amount":20,"exact":null,"min":20,"max":20,"fixed":20,"amountPercentConsideration":null},"meta":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := quote(tc.query, nil)
			if r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			// duty names the article by its documentId: it is checked on
			// its own (checkDuty), the rest byte for byte.
			got := r.Body
			if i, j := strings.Index(got, `,"duty":`), strings.LastIndex(got, `},"meta":{}}`); i > 0 && j > i {
				got = got[:i] + got[j:]
			}
			if want := tc.want; got != want {
				t.Errorf("body\n got %s\nwant %s", got, want)
			}
			checkDuty(t, r.Body)
		})
	}

	// The create's statuses and messages.
	for _, tc := range []struct {
		name, query string
		status      int
		errName     string
		message     string
		paths       []string
	}{
		{"QuantityTwentyOne", "purpose=Rent%20Agreement&state=Karnataka&amount=200&quantity=21", 400, "ValidationError", "Invalid data. quantity must be an integer from 1 to 20", []string{"quantity"}},
		{"UnknownPair", "purpose=Rent%20Agreement&state=Delhi", 404, "NotFoundError", "Purpose with the name: Rent Agreement cannot be found.", nil},
		{"UnknownPurpose", "purpose=Moon+Lease&state=Karnataka&amount=x", 404, "NotFoundError", "Purpose with the name: Moon Lease cannot be found.", nil},
		{"UnknownState", "purpose=Affidavit&state=Atlantis", 404, "NotFoundError", "Purpose with the name: Affidavit cannot be found.", nil},
		{"ConsiderationPriceMissing", "purpose=Sale%20Deed&state=Delhi", 400, "ValidationError",
			"The consideration price must be greater than 0 for the selected purpose. Please provide a valid consideration price.", []string{"considerationPrice"}},
		{"FixedDiffers", "purpose=Affidavit&state=Karnataka&amount=25", 400, "ValidationError",
			"The purpose have a fixed amount of: 20, while the amount passed is equal to: 25", []string{"amount"}},
		{"RangeAbove", "purpose=Rent%20Agreement&state=Karnataka&amount=501", 400, "ValidationError",
			"The purpose can take an amount in the range of: 100-500, while the amount passed is equal to: 501", []string{"amount"}},
		{"StateMissing", "purpose=Affidavit", 400, "ValidationError", "Invalid data. state is a required field", []string{"state"}},
		{"NotIntegers", "purpose=Affidavit&state=Karnataka&amount=2e1&considerationPrice=-1", 400, "ValidationError",
			"Invalid data. amount must be an integer; considerationPrice must be greater than or equal to 0", []string{"amount", "considerationPrice"}},
		{"AmountTwice", "purpose=Affidavit&state=Karnataka&amount=20&amount=20", 400, "ValidationError", "Invalid data. amount is given more than once", []string{"amount"}},
		{"BadEscape", "purpose=Affi%zzdavit&state=Karnataka", 400, "ValidationError", "Invalid data. The query string is not valid", []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := quote(tc.query, nil)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			e := r.Error(t)
			if got, want := e.Error.Name, tc.errName; got != want {
				t.Errorf("name = %q, want %q", got, want)
			}
			if got, want := e.Error.Message, tc.message; got != want {
				t.Errorf("message = %q\n want %q", got, want)
			}
			if got, want := strings.Join(e.Paths(), ","), strings.Join(tc.paths, ","); tc.paths != nil && got != want {
				t.Errorf("paths = %s, want %s", got, want)
			}
		})
	}

	t.Run("PublicWhateverTheAuthorization", func(t *testing.T) {
		r := quote("purpose=Affidavit&state=Karnataka", map[string]string{"authorization": "Bearer sdt_" + strings.Repeat("A", 43)})
		if got, want := r.Status, 200; got != want {
			t.Errorf("status %d, want %d: %s", got, want, r.Body)
		}
	})

	// A quote reads its article by key, once per instance while the
	// catalogue's version stays the same, found or not.
	t.Run("WarmQuotesReadNothing", func(t *testing.T) {
		queries := []string{"purpose=Affidavit&state=Karnataka", "purpose=Made+Up+1&state=Goa", "purpose=Made+Up+2&state=Goa"}
		s.Proxy.Take()
		for _, q := range queries {
			quote(q, nil)
		}
		if got, want := s.Env.Operations(s.Proxy.Take()), "GetItem:ArticlesTable=2"; got != want {
			t.Errorf("first quotes of two new keys made %s, want %s", got, want)
		}
		for _, q := range queries {
			quote(q, nil)
		}
		if calls := s.Proxy.Take(); len(calls) != 0 {
			t.Errorf("warm quotes made %d DynamoDB calls: %s", len(calls), s.Env.Operations(calls))
		}
	})

	t.Run("CreatesNothing", func(t *testing.T) {
		for _, c := range s.Proxy.All() {
			if c.Operation != "GetItem" {
				t.Errorf("a quote called %s", c.Operation)
			}
		}
	})

	t.Run("Events", func(t *testing.T) {
		s.CheckEvents(t, map[string]int{"stamp-duty-quotes": 200, "stamp-duty-quotes-unknown-purpose": 404})
	})

	t.Run("Template", func(t *testing.T) {
		s.CheckTemplate(s.Proxy.All())
		s.CheckRoutes()
	})
}

// checkDuty checks a quote's duty against its amount (duty-rules.md §8):
// null exactly when amount is; else its lines add up to its total, which
// is the amount in rupees, and it names its rule by a hash.
func checkDuty(t *testing.T, body string) {
	t.Helper()
	var q struct {
		Data struct {
			Amount *int64 `json:"amount"`
			Duty   *struct {
				Rule struct {
					Article string `json:"article"`
					Hash    string `json:"hash"`
				} `json:"rule"`
				Lines []struct {
					Amount string `json:"amount"`
				} `json:"lines"`
				Total string `json:"total"`
			} `json:"duty"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &q); err != nil {
		t.Fatal(err)
	}
	d := q.Data.Duty
	if (d == nil) != (q.Data.Amount == nil) {
		t.Fatalf("amount %v with duty %v", q.Data.Amount, d)
	}
	if d == nil {
		return
	}
	if got, want := d.Total, fmt.Sprintf("%d.00", *q.Data.Amount); got != want {
		t.Errorf("duty.total %s, want %s", got, want)
	}
	var paise int64
	for _, l := range d.Lines {
		var r, p int64
		fmt.Sscanf(strings.Replace(l.Amount, ".", " ", 1), "%d %d", &r, &p)
		if strings.HasPrefix(l.Amount, "-") {
			p = -p
		}
		paise += r*100 + p
	}
	if got, want := paise, *q.Data.Amount*100; got != want {
		t.Errorf("lines add up to %d paise, want %d", got, want)
	}
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(d.Rule.Hash) || d.Rule.Article == "" {
		t.Errorf("rule %+v names no article or hash", d.Rule)
	}
}
