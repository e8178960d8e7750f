package stampjson_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
)

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// decimal parses a factor that must parse.
func decimal(t testing.TB, s string) stampduty.Decimal {
	t.Helper()
	return must(t, stampduty.ParseDecimal, s)
}

// sameArticle reports whether a and b are the same article, their factors
// compared by value.
func sameArticle(a, b stampduty.Article) bool {
	if (a.Factor == nil) != (b.Factor == nil) || a.Factor != nil && a.Factor.Cmp(*b.Factor) != 0 {
		return false
	}
	a.Factor, b.Factor = nil, nil
	return reflect.DeepEqual(a, b)
}

// checkInvalid checks that err is an EINVALID *stampduty.Error with this
// message and these fields.
func checkInvalid(t *testing.T, err error, msg string, fields []stampduty.FieldError) {
	t.Helper()
	var e *stampduty.Error
	if !errors.As(err, &e) || e.Code != stampduty.EINVALID || e.Message != msg || !reflect.DeepEqual(e.Fields, fields) {
		t.Errorf("error = %#v, want EINVALID %q with fields\n%q", err, msg, fields)
	}
}

const goodArticlesFile = `[
  {"purpose_name": "Affidavit", "state": "Delhi", "min": 0, "max": 1000, "fixed": 20, "toFollowConsiderationPrice": false, "amountPercentConsideration": null},
  {"purpose_name": "Rent Agreement", "state": "Karnataka", "min": 100, "max": 500, "toFollowConsiderationPrice": false},
  {"purpose_name": "Sale Deed", "state": "Maharashtra", "min": 100, "max": 2.5e7, "fixed": null, "toFollowConsiderationPrice": true, "amountPercentConsideration": 5E-2},
  {"purpose_name": "Rent Agreement", "state": "Goa", "min": 1e2, "max": 500.0, "toFollowConsiderationPrice": false}
]`

func TestDecodeArticles(t *testing.T) {
	t.Run("GoodFile", func(t *testing.T) {
		got := must(t, stampjson.DecodeArticles, []byte(goodArticlesFile))
		f := decimal(t, "0.05")
		want := []stampduty.Article{
			{PurposeName: "Affidavit", State: "Delhi", Min: 0, Max: 1000, Fixed: ptr[int64](20)},
			{PurposeName: "Rent Agreement", State: "Karnataka", Min: 100, Max: 500},
			{PurposeName: "Sale Deed", State: "Maharashtra", Min: 100, Max: 25000000, FollowsConsideration: true, Factor: &f},
			{PurposeName: "Rent Agreement", State: "Goa", Min: 100, Max: 500},
		}
		if !slices.EqualFunc(got, want, sameArticle) {
			t.Errorf("DecodeArticles =\n%+v\nwant\n%+v", got, want)
		}
	})
	t.Run("EmptyFile", func(t *testing.T) {
		got, err := stampjson.DecodeArticles([]byte(" [ ] "))
		if err != nil || len(got) != 0 {
			t.Errorf("stampjson.DecodeArticles([]) = %v, %v; want no articles", got, err)
		}
	})
	// Escapes are read as encoding/json reads them, in keys and in text
	// (U+FFFD sent as such is kept).
	for _, tc := range []struct{ name, key, purpose, want string }{
		{"EscapedKeys", `purpose_\u006eame`, `A`, "A"},
		{"EscapedText", `purpose_name`, `\u0041ffidavit \ufffd \ud83d\ude00`, "Affidavit \uFFFD 😀"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := must(t, stampjson.DecodeArticles, []byte(`[{"`+tc.key+`":"`+tc.purpose+`","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false}]`))
			if got, want := got[0].PurposeName, tc.want; got != want {
				t.Errorf("purpose_name = %q, want %q", got, want)
			}
		})
	}

	fileErrors := []struct{ name, in, msg string }{
		{"NotUTF8", "[\xff]", "The articles file is not valid UTF-8"},
		{"NotJSON", `[{"purpose_name":}]`, "The articles file is not valid JSON"},
		{"Empty", ``, "The articles file is not valid JSON"},
		{"Object", `{"purpose_name":"A"}`, "The articles file must be a JSON array"},
		{"Null", `null`, "The articles file must be a JSON array"},
		{"String", `"[]"`, "The articles file must be a JSON array"},
	}
	for _, tc := range fileErrors {
		t.Run(tc.name, func(t *testing.T) {
			_, err := stampjson.DecodeArticles([]byte(tc.in))
			checkInvalid(t, err, tc.msg, []stampduty.FieldError{{Path: "", Message: tc.msg}})
		})
	}

	rowErrors := []struct {
		name, in, msg string
		want          []stampduty.FieldError
	}{
		{"UnknownKey", `[{"purpose_name":"A","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false,"note":"x"}]`,
			"1 article is invalid", []stampduty.FieldError{{Path: "[0].note", Message: "note is not an allowed field"}}},
		{"IDNotAccepted", `[{"id":1,"documentId":"abc","purpose_name":"A","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false}]`,
			"1 article is invalid", []stampduty.FieldError{
				{Path: "[0].id", Message: "id is not an allowed field"},
				{Path: "[0].documentId", Message: "documentId is not an allowed field"},
			}},
		{"RepeatedKey", `[{"purpose_name":"A","state":"Goa","min":0,"min":5,"max":1,"toFollowConsiderationPrice":false}]`,
			"1 article is invalid", []stampduty.FieldError{{Path: "[0].min", Message: "min is given more than once"}}},
		{"NotAnObject", `[{"purpose_name":"A","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false}, 5, []]`,
			"2 articles are invalid", []stampduty.FieldError{
				{Path: "[1]", Message: "each article must be a JSON object"},
				{Path: "[2]", Message: "each article must be a JSON object"},
			}},
		{"MissingFields", `[{}]`, "1 article is invalid", []stampduty.FieldError{
			{Path: "[0].purpose_name", Message: "purpose_name is a required field"},
			{Path: "[0].state", Message: "state is a required field"},
			{Path: "[0].min", Message: "min is a required field"},
			{Path: "[0].max", Message: "max is a required field"},
			{Path: "[0].toFollowConsiderationPrice", Message: "toFollowConsiderationPrice is a required field"},
		}},
		{"TypeErrors", `[{"purpose_name":1,"state":null,"min":"0","max":1.5,"fixed":true,"toFollowConsiderationPrice":"yes","amountPercentConsideration":"0.07"}]`,
			"1 article is invalid", []stampduty.FieldError{
				{Path: "[0].purpose_name", Message: "purpose_name must be a string"},
				{Path: "[0].state", Message: "state is a required field"},
				{Path: "[0].min", Message: "min must be an integer"},
				{Path: "[0].max", Message: "max must be an integer"},
				{Path: "[0].fixed", Message: "fixed must be an integer"},
				{Path: "[0].toFollowConsiderationPrice", Message: "toFollowConsiderationPrice must be a boolean"},
				{Path: "[0].amountPercentConsideration", Message: "amountPercentConsideration must be a number"},
			}},
		{"NumberRanges", `[{"purpose_name":"A","state":"Goa","min":-1,"max":1e15,"fixed":-0.0,"toFollowConsiderationPrice":true,"amountPercentConsideration":-0.5}]`,
			"1 article is invalid", []stampduty.FieldError{
				{Path: "[0].min", Message: "min must be greater than or equal to 0"},
				{Path: "[0].max", Message: "max must be at most 999999999999999"},
				{Path: "[0].amountPercentConsideration", Message: "amountPercentConsideration must be greater than 0 and at most 1"},
			}},
		{"FactorPrecision", `[{"purpose_name":"A","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":true,"amountPercentConsideration":0.0000000000000000001}]`,
			"1 article is invalid", []stampduty.FieldError{
				{Path: "[0].amountPercentConsideration", Message: "amountPercentConsideration must have at most 18 decimal places"},
			}},
		{"FactorHuge", `[{"purpose_name":"A","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":true,"amountPercentConsideration":1e999999}]`,
			"1 article is invalid", []stampduty.FieldError{
				{Path: "[0].amountPercentConsideration", Message: "amountPercentConsideration must be greater than 0 and at most 1"},
			}},
		{"DecodeAndRuleErrorsTogether", `[{"purpose_name":" A","state":"Goa","min":"x","max":5,"fixed":-3,"toFollowConsiderationPrice":false,"zzz":1}]`,
			"1 article is invalid", []stampduty.FieldError{
				{Path: "[0].purpose_name", Message: "purpose_name must not start or end with white space"},
				{Path: "[0].min", Message: "min must be an integer"},
				{Path: "[0].fixed", Message: "fixed must be greater than or equal to 0"},
				{Path: "[0].zzz", Message: "zzz is not an allowed field"},
			}},
		{"LoneSurrogateInPurposeName", `[{"purpose_name":"Rent\ud800","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false}]`,
			"1 article is invalid", []stampduty.FieldError{
				{Path: "[0].purpose_name", Message: "purpose_name must not contain control, format, bidirectional, zero-width or line separator characters"},
			}},
		{"BadMaxSkipsCrossChecks", `[{"purpose_name":"A","state":"Goa","min":5,"max":"x","fixed":7,"toFollowConsiderationPrice":false}]`,
			"1 article is invalid", []stampduty.FieldError{{Path: "[0].max", Message: "max must be an integer"}}},
		{"Duplicates", `[
			{"purpose_name":"A","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false},
			{"purpose_name":"A","state":"Delhi","min":0,"max":1,"toFollowConsiderationPrice":false},
			{"purpose_name":"A","state":"Goa","min":0,"max":2,"toFollowConsiderationPrice":false},
			{"purpose_name":"A","state":"Goa","min":5,"max":2,"toFollowConsiderationPrice":false}]`,
			"2 articles are invalid", []stampduty.FieldError{
				{Path: "[2].purpose_name", Message: "purpose_name and state are the same as in article [0]"},
				{Path: "[3].max", Message: "max must be greater than or equal to min"},
				{Path: "[3].purpose_name", Message: "purpose_name and state are the same as in article [0]"},
			}},
		{"EveryRowReported", `[
			{"purpose_name":"A","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false},
			{"purpose_name":"","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false},
			{"purpose_name":"B","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false},
			{"purpose_name":"C","state":"goa","min":2,"max":1,"fixed":9,"toFollowConsiderationPrice":true}]`,
			"2 articles are invalid", []stampduty.FieldError{
				{Path: "[1].purpose_name", Message: "purpose_name must not be empty"},
				{Path: "[3].state", Message: "state must be one of the states or union territories of India"},
				{Path: "[3].max", Message: "max must be greater than or equal to min"},
				{Path: "[3].amountPercentConsideration", Message: "amountPercentConsideration is required when toFollowConsiderationPrice is true"},
			}},
	}
	for _, tc := range rowErrors {
		t.Run(tc.name, func(t *testing.T) {
			arts, err := stampjson.DecodeArticles([]byte(tc.in))
			if arts != nil {
				t.Errorf("DecodeArticles returned %d articles with an error", len(arts))
			}
			checkInvalid(t, err, tc.msg, tc.want)
		})
	}
}

// update rewrites the golden files from what the code gives.
var update = flag.Bool("update", false, "rewrite testdata/export.json")

// must returns f(in), failing the test at once when f fails.
func must[In, Out any](t testing.TB, f func(In) (Out, error), in In) Out {
	t.Helper()
	out, err := f(in)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

func TestEncodeArticles(t *testing.T) {
	arts := must(t, stampjson.DecodeArticles, []byte(goodArticlesFile))
	arts[0].ID, arts[0].DocumentID = 99, "shouldnotappear0000000000"
	out := must(t, stampjson.EncodeArticles, arts)
	t.Run("Format", func(t *testing.T) {
		// testdata/export.json: each article's fields, then its duty_rules
		// as the list shows them (a legacy article's migrated version).
		if *update {
			if err := os.WriteFile("testdata/export.json", out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		golden, err := os.ReadFile("testdata/export.json")
		if err != nil {
			t.Fatal(err)
		}
		want := string(golden)
		if got := string(out); got != want {
			t.Errorf("EncodeArticles =\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("RoundTrip", func(t *testing.T) {
		back := must(t, stampjson.DecodeArticles, out)
		again := must(t, stampjson.EncodeArticles, back)
		if string(again) != string(out) {
			t.Errorf("Encode(Decode(Encode(x))) differs:\n%s\n%s", again, out)
		}
		if got, want := len(back), len(arts); got != want {
			t.Fatalf("%d articles back, want %d", got, want)
		}
		// back is sorted; it must hold the same articles without ids.
		for _, a := range arts {
			a.ID, a.DocumentID = 0, ""
			found := false
			for _, b := range back {
				if sameArticle(a, b) {
					found = true
				}
			}
			if !found {
				t.Errorf("article %+v lost in the round trip", a)
			}
		}
	})
	t.Run("SpecialCharactersRoundTrip", func(t *testing.T) {
		in := []stampduty.Article{{PurposeName: `Deed <A&B> "quoted" \ é 😀`, State: "Goa", Min: 0, Max: stampduty.MaxAmount, FollowsConsideration: true, Factor: ptr(decimal(t, "1e-18"))}}
		back := must(t, stampjson.DecodeArticles, must(t, stampjson.EncodeArticles, in))
		if !slices.EqualFunc(back, in, sameArticle) {
			t.Errorf("round trip = %+v, want %+v", back, in)
		}
	})
	t.Run("NilIsEmptyArray", func(t *testing.T) {
		if got, want := string(must(t, stampjson.EncodeArticles, []stampduty.Article(nil))), "[]\n"; got != want {
			t.Errorf("stampjson.EncodeArticles(nil) = %q, want %q", got, want)
		}
	})
	t.Run("InputNotReordered", func(t *testing.T) {
		if got, want := arts[0].PurposeName+"/"+arts[1].State, "Affidavit/Karnataka"; got != want {
			t.Errorf("EncodeArticles reordered its input: %s", got)
		}
	})
}

// TestDecodeArticlesRules: a catalogue file's duty_rules are checked
// whole with the rest (duty-rules.md §1, §11): every problem of every
// article, each at its path under the article's place; and an export then
// import of rules changes nothing.
func TestDecodeArticlesRules(t *testing.T) {
	version := func(from, to, rate string) string {
		return `{"effectiveFrom": ` + from + `, "effectiveTo": ` + to + `, "citation": {"text": "Art. 1", "url": "https://example.org/a"},
		  "inputs": {"considerationPrice": {"required": true}},
		  "components": [{"id": "duty", "label": "Duty", "kind": "percent", "base": "considerationPrice", "rate": ` + rate + `}]}`
	}
	var thirteen []string
	for i := range 13 {
		thirteen = append(thirteen, version(fmt.Sprintf(`"2%03d-01-01"`, i), fmt.Sprintf(`"2%03d-01-01"`, i+1), `"0.01"`))
	}
	file := `[
	 {"purpose_name": "Sale", "state": "Goa", "duty_rules": [` + version("null", "null", "0.05") + `]},
	 {"purpose_name": "Gift", "state": "Goa", "duty_rules": [` + strings.Join(thirteen, ",") + `]},
	 {"purpose_name": "Lease", "state": "Goa", "duty_rules": [` + version("null", `"2025-01-01"`, `"1.5"`) + `,` + version(`"2024-01-01"`, "null", `"0.01"`) + `]}]`
	_, err := stampjson.DecodeArticles([]byte(file))
	var e *stampduty.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an *Error", err)
	}
	var got []string
	for _, f := range e.Fields {
		got = append(got, f.Path)
	}
	want := []string{"[0].duty_rules[0].components[0].rate", "[1].duty_rules", "[2].duty_rules[0].components[0].rate"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paths %q, want %q (%v)", got, want, e.Fields)
	}

	good := `[{"purpose_name": "Sale", "state": "Goa", "duty_rules": [` + version("null", "null", `"0.05"`) + `]}]`
	arts := must(t, stampjson.DecodeArticles, []byte(good))
	out := must(t, stampjson.EncodeArticles, arts)
	again := must(t, stampjson.EncodeArticles, must(t, stampjson.DecodeArticles, out))
	if string(again) != string(out) {
		t.Errorf("export, import, export differs:\n%s\n%s", out, again)
	}
	if !strings.Contains(string(out), `"rate": "0.05"`) {
		t.Errorf("the export lost the rules:\n%s", out)
	}
}
