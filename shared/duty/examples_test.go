package duty

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"
)

// examples is duty-rules-examples.json, the spec's worked examples, copied
// into testdata so that the package's tests need nothing outside the repo.
type examples struct {
	Rules map[string]struct {
		DutyRules json.RawMessage `json:"duty_rules"`
	} `json:"rules"`
	Cases []struct {
		ID         string         `json:"id"`
		Rule       string         `json:"rule"`
		State      string         `json:"state"`
		Instrument string         `json:"instrument"`
		Date       string         `json:"date"`
		Inputs     map[string]any `json:"inputs"`
		Expected   struct {
			Total *int64 `json:"total"`
			Lines []struct {
				ID     string `json:"id"`
				Amount string `json:"amount"`
			} `json:"lines"`
			Error *struct {
				Status  int        `json:"status"`
				Name    string     `json:"name"`
				Paths   [][]string `json:"paths"`
				Message string     `json:"message"`
			} `json:"error"`
		} `json:"expected"`
	} `json:"cases"`
}

// loadExamples reads testdata/duty-rules-examples.json.
func loadExamples(t testing.TB) examples {
	t.Helper()
	b, err := os.ReadFile("testdata/duty-rules-examples.json")
	if err != nil {
		t.Fatal(err)
	}
	var ex examples
	dec := json.NewDecoder(bytesReader(b))
	dec.UseNumber()
	if err := dec.Decode(&ex); err != nil {
		t.Fatal(err)
	}
	return ex
}

// requestOf is a case's inputs as a caller reads them.
func requestOf(t testing.TB, purpose, state, date string, inputs map[string]any) Request {
	t.Helper()
	req := Request{Purpose: purpose, State: state, Date: date, Numbers: map[string]int64{}, Enums: map[string]string{}}
	for k, v := range inputs {
		switch v := v.(type) {
		case json.Number:
			n, err := v.Int64()
			if err != nil {
				t.Fatalf("input %s: %v", k, err)
			}
			req.Numbers[k] = n
		case string:
			req.Enums[k] = v
		default:
			t.Fatalf("input %s is %T", k, v)
		}
	}
	return req
}

func TestExamples(t *testing.T) {
	ex := loadExamples(t)
	if len(ex.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range ex.Cases {
		t.Run(c.ID, func(t *testing.T) {
			rules, problems := ParseRules(ex.Rules[c.Rule].DutyRules)
			if problems != nil {
				t.Fatalf("rule %s: %v", c.Rule, problems)
			}
			if problems := Check(rules); problems != nil {
				t.Fatalf("Check(%s): %v", c.Rule, problems)
			}
			d, err := rules.Evaluate(requestOf(t, c.Instrument, c.State, c.Date, c.Inputs))
			if want := c.Expected.Error; want != nil {
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Fatalf("err = %v, want an InputError", err)
				}
				var paths [][]string
				for _, p := range ie.Problems {
					var path []string
					for _, e := range p.Path {
						path = append(path, e.(string))
					}
					paths = append(paths, path)
					if want.Message != "" && p.Message != want.Message {
						t.Errorf("message = %q, want %q", p.Message, want.Message)
					}
				}
				if !reflect.DeepEqual(paths, want.Paths) {
					t.Errorf("paths = %v, want %v", paths, want.Paths)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, want := d.Amount, *c.Expected.Total; got != want {
				t.Errorf("amount = %d, want %d", got, want)
			}
			var got, want []string
			for _, l := range d.Lines {
				got = append(got, l.ID+" "+l.Amount)
			}
			for _, l := range c.Expected.Lines {
				want = append(want, l.ID+" "+l.Amount)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("lines = %q, want %q", got, want)
			}
			checkSum(t, d)
		})
	}
}

// checkSum checks §8's invariant: the lines add up to the total, which is
// the amount in rupees.
func checkSum(t testing.TB, d *Duty) {
	t.Helper()
	sum := int64(0)
	for _, l := range d.Lines {
		sum += l.paise.Int64()
		if got := FormatPaise(l.paise); got != l.Amount {
			t.Errorf("line %s shows %s, holds %s", l.ID, l.Amount, got)
		}
	}
	if got, want := FormatPaise(bigInt(sum)), d.Total; got != want {
		t.Errorf("lines sum to %s, total %s", got, want)
	}
	if got, want := d.Total, FormatPaise(bigInt(d.Amount*100)); got != want {
		t.Errorf("total %s, amount %d", got, d.Amount)
	}
}
