package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"stampduty/shared/testkit/dutyexamples"
	"stampduty/shared/testkit/functest"
)

// TestExamplesQuoted runs every worked example of duty-rules-examples.json
// through the quote function on the local engines: its rule sets stored
// as articles (the catalogue file's path: validated, stored, published),
// each case asked on its date with its inputs. The total and the lines
// are the example's, the lines add up to the total, and an error case is
// its status and paths.
func TestExamplesQuoted(t *testing.T) {
	ex, err := dutyexamples.Load()
	if err != nil {
		t.Fatal(err)
	}
	s := functest.New(t, "StampDutyQuotesFunction", wire)
	seedExamples(t, s, ex)
	for _, c := range ex.Cases {
		t.Run(c.ID, func(t *testing.T) {
			r := s.Invoke(functest.Request("GET", "/api/stamp-duty-quotes", c.Query(), nil, ""))
			if want := c.Expected.Error; want != nil {
				if r.Status != want.Status {
					t.Fatalf("status %d, want %d: %s", r.Status, want.Status, r.Body)
				}
				env := functest.CheckEnvelope(t, want.Status, []byte(r.Body))
				var paths [][]string
				for _, p := range env.Paths() {
					paths = append(paths, []string{p})
				}
				if !reflect.DeepEqual(paths, want.Paths) {
					t.Errorf("paths %v, want %v", paths, want.Paths)
				}
				if want.Message != "" && env.Error.Message != want.Message {
					t.Errorf("message %q, want %q", env.Error.Message, want.Message)
				}
				return
			}
			if r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			var q struct {
				Data struct {
					Amount int64 `json:"amount"`
					Duty   struct {
						Lines []struct{ ID, Amount string } `json:"lines"`
					} `json:"duty"`
				} `json:"data"`
			}
			if err := json.Unmarshal([]byte(r.Body), &q); err != nil {
				t.Fatal(err)
			}
			if got, want := q.Data.Amount, *c.Expected.Total; got != want {
				t.Errorf("amount %d, want %d", got, want)
			}
			var lines []string
			for _, l := range q.Data.Duty.Lines {
				lines = append(lines, l.ID+" "+l.Amount)
			}
			if got, want := lines, c.WantLines(); !reflect.DeepEqual(got, want) {
				t.Errorf("lines %q, want %q", got, want)
			}
			checkDuty(t, r.Body)
		})
	}
}

// seedExamples stores the examples' rule sets in s's tables and publishes
// them, as `make local` seeds its catalogue file.
func seedExamples(t *testing.T, s *functest.Stack, ex dutyexamples.Examples) {
	t.Helper()
	b, err := ex.Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	functest.SeedCatalogue(t, s.Env, b)
}

// TestQuoteNamesEveryInput: a quote's failing inputs are all named at once
// (duty-rules.md §10), those whose form is wrong with those the rule
// refuses, with the rule in details.dutyRule.
func TestQuoteNamesEveryInput(t *testing.T) {
	ex, err := dutyexamples.Load()
	if err != nil {
		t.Fatal(err)
	}
	s := functest.New(t, "StampDutyQuotesFunction", wire)
	seedExamples(t, s, ex)
	for _, tc := range []struct {
		name, query, message, paths string
	}{
		{"FormAndRule", "purpose=Sale+Deed&state=Karnataka&considerationPrice=4000000&locationClass=metro&monthlyRent=1.5&instrumentDate=2025-09-01",
			"Invalid data. monthlyRent must be an integer; marketValue is required by the duty rule of Sale Deed in Karnataka in force on 2025-09-01; locationClass must be one of: urban, rural",
			"[monthlyRent marketValue locationClass]"},
		{"NotADate", "purpose=Sale+Deed&state=Karnataka&considerationPrice=4000000&marketValue=1&locationClass=urban&instrumentDate=2025-9-1",
			"Invalid data. instrumentDate must be a date (YYYY-MM-DD)", "[instrumentDate]"},
		{"NegativeAndLong", "purpose=Sale+Deed&state=Karnataka&considerationPrice=-4&marketValue=1000000000000000&locationClass=urban",
			"Invalid data. considerationPrice must be greater than or equal to 0; marketValue must have at most 15 digits", "[considerationPrice marketValue]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Invoke(functest.Request("GET", "/api/stamp-duty-quotes", tc.query, nil, ""))
			env := functest.CheckEnvelope(t, 400, []byte(r.Body))
			if env.Error.Message != tc.message {
				t.Errorf("message %q\n want %q", env.Error.Message, tc.message)
			}
			if got := fmt.Sprint(env.Paths()); got != tc.paths {
				t.Errorf("paths %s, want %s", got, tc.paths)
			}
			if env.Error.Details.DutyRule == nil || env.Error.Details.DutyRule.Hash == "" {
				t.Errorf("no details.dutyRule: %s", r.Body)
			}
		})
	}
}
