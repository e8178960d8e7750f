package duty

import (
	"encoding/json"
	"fmt"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// migrate is Migrate that must succeed, and give a version that passes
// every check of §11.
func migrate(t *testing.T, l Legacy) Rules {
	t.Helper()
	rules, err := Migrate(l)
	if err != nil {
		t.Fatalf("Migrate(%+v): %v", l, err)
	}
	if len(rules) != 1 {
		t.Fatalf("Migrate(%+v) gave %d versions, want 1", l, len(rules))
	}
	v := rules[0]
	if !v.Legacy || v.Period != (Period{}) {
		t.Errorf("Migrate(%+v): legacy %v, period %+v; want a legacy version in force always", l, v.Legacy, v.Period)
	}
	if _, problems := ValidateRules([]byte("[" + string(v.JSON()) + "]")); problems != nil {
		t.Errorf("ValidateRules(Migrate(%+v)): %v", l, problems)
	}
	return rules
}

func TestMigrateHashesAsTheExamples(t *testing.T) {
	ex := loadExamples(t)
	var stored []json.RawMessage
	if err := json.Unmarshal(ex.Rules["legacy/Maharashtra/Sale Deed"].DutyRules, &stored); err != nil {
		t.Fatal(err)
	}
	if len(stored) != 1 {
		t.Fatalf("legacy/Maharashtra/Sale Deed has %d versions", len(stored))
	}
	want, err := Hash(stored[0])
	if err != nil {
		t.Fatal(err)
	}
	parsed, problems := ParseRules(ex.Rules["legacy/Maharashtra/Sale Deed"].DutyRules)
	if problems != nil {
		t.Fatal(problems)
	}
	if got := parsed[0].Hash(); got != want {
		t.Errorf("ParseRules(example).Hash() = %s, Hash(example) = %s", got, want)
	}

	rules := migrate(t, Legacy{Min: 100, Max: 2500000, Follows: true, Factor: "0.05"})
	if got := rules[0].Hash(); got != want {
		c, _ := Canonical(rules[0].JSON())
		w, _ := Canonical(stored[0])
		t.Errorf("Migrate(…).Hash() = %s, want the example's %s\nmigrated: %s\nexample:  %s", got, want, c, w)
	}
	if got, err := Hash(rules[0].JSON()); err != nil || got != rules[0].Hash() {
		t.Errorf("Hash(JSON()) = %s, %v; Hash() = %s", got, err, rules[0].Hash())
	}
	again := migrate(t, Legacy{Min: 100, Max: 2500000, Follows: true, Factor: "0.05"})
	if got, want := again[0].Hash(), rules[0].Hash(); got != want {
		t.Errorf("migrating twice: %s, then %s", want, got)
	}
}

func TestMigrateEvaluates(t *testing.T) {
	const (
		consideration = "The consideration price must be greater than 0 for the selected purpose. Please provide a valid consideration price."
		required      = " is required by the duty rule of Sale Deed in Maharashtra in force on 2025-09-01"
	)
	for _, tc := range []struct {
		name   string
		legacy Legacy
		nums   n
		total  string
		lines  []string // "id amount"
		input  string   // the input of the error, "" when none
		msg    string
	}{
		// A factor of the consideration price, clamped to [min, max].
		{"Consideration", Legacy{Min: 100, Max: 2500000, Follows: true, Factor: "0.05"}, n{"considerationPrice": 1234567},
			"61729.00", []string{"duty 61728.35", "rounding 0.65"}, "", ""},
		{"ConsiderationToTheMinimum", Legacy{Min: 100, Max: 2500000, Follows: true, Factor: "0.05"}, n{"considerationPrice": 1},
			"100.00", []string{"duty 0.05", "rounding 0.95", "minimum 99.00"}, "", ""},
		{"ConsiderationToTheMaximum", Legacy{Min: 100, Max: 2500000, Follows: true, Factor: "0.05"}, n{"considerationPrice": 100000000},
			"2500000.00", []string{"duty 5000000.00", "maximum -2500000.00"}, "", ""},
		{"ConsiderationOf0", Legacy{Min: 100, Max: 2500000, Follows: true, Factor: "0.05"}, n{"considerationPrice": 0},
			"", nil, "considerationPrice", consideration},
		{"ConsiderationAbsent", Legacy{Min: 100, Max: 2500000, Follows: true, Factor: "0.05"}, n{"amount": 5},
			"", nil, "considerationPrice", consideration},
		{"ConsiderationAndFixed", Legacy{Min: 0, Max: 1000, Fixed: ptr[int64](500), Follows: true, Factor: "0.05"}, n{"considerationPrice": 1},
			"500.00", []string{"duty 0.05", "rounding 0.95", "minimum 499.00"}, "", ""},
		{"ConsiderationAndFixedAbove", Legacy{Min: 0, Max: 1000, Fixed: ptr[int64](500), Follows: true, Factor: "0.05"}, n{"considerationPrice": 20000},
			"500.00", []string{"duty 1000.00", "maximum -500.00"}, "", ""},
		{"ATinyFactorIsOneRupee", Legacy{Min: 0, Max: MaxInput, Follows: true, Factor: "0.000000000000000001"}, n{"considerationPrice": 1},
			"1.00", []string{"duty 0.01", "rounding 0.99"}, "", ""},
		{"TheLargestProduct", Legacy{Min: 0, Max: MaxInput, Follows: true, Factor: "1"}, n{"considerationPrice": MaxInput},
			"999999999999999.00", []string{"duty 999999999999999.00"}, "", ""},
		// A fixed amount: the caller's amount must be it.
		{"Fixed", Legacy{Min: 0, Max: MaxInput, Fixed: ptr[int64](500)}, n{"amount": 500},
			"500.00", []string{"duty 500.00"}, "", ""},
		{"FixedOtherAmount", Legacy{Min: 0, Max: MaxInput, Fixed: ptr[int64](500)}, n{"amount": 400},
			"", nil, "amount", "The purpose have a fixed amount of: 500, while the amount passed is equal to: 400"},
		{"FixedOf0", Legacy{Min: 0, Max: MaxInput, Fixed: ptr[int64](0)}, n{"amount": 0},
			"0.00", []string{"duty 0.00"}, "", ""},
		{"FixedWithoutAmount", Legacy{Min: 0, Max: MaxInput, Fixed: ptr[int64](500)}, n{"considerationPrice": 5},
			"", nil, "amount", "amount" + required},
		// A range the caller picks from.
		{"Range", Legacy{Min: 7, Max: 10}, n{"amount": 8}, "8.00", []string{"duty 8.00"}, "", ""},
		{"RangeAtItsBounds", Legacy{Min: 7, Max: 10}, n{"amount": 10}, "10.00", []string{"duty 10.00"}, "", ""},
		{"RangeBelow", Legacy{Min: 7, Max: 10}, n{"amount": 6},
			"", nil, "amount", "The purpose can take an amount in the range of: 7-10, while the amount passed is equal to: 6"},
		{"RangeAbove", Legacy{Min: 7, Max: 10}, n{"amount": 11},
			"", nil, "amount", "The purpose can take an amount in the range of: 7-10, while the amount passed is equal to: 11"},
		{"RangeOfEverything", Legacy{Min: 0, Max: MaxInput}, n{"amount": MaxInput}, "999999999999999.00", []string{"duty 999999999999999.00"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules := migrate(t, tc.legacy)
			d, err := rules.Evaluate(quote(tc.nums, nil))
			if tc.input != "" {
				checkInputError(t, err, []string{tc.input}, []string{tc.msg})
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, l := range d.Lines {
				lines = append(lines, l.ID+" "+l.Amount)
			}
			if got, want := fmt.Sprint(lines), fmt.Sprint(tc.lines); got != want {
				t.Errorf("lines = %s, want %s", got, want)
			}
			if got, want := d.Total, tc.total; got != want {
				t.Errorf("total = %s, want %s", got, want)
			}
			checkSum(t, d)
		})
	}
}
