package stampduty

import (
	"reflect"
	"strings"
	"testing"
)

func TestArticleValidate(t *testing.T) {
	valid := Article{ID: 1, DocumentID: "x", PurposeName: "Rent Agreement", State: "Delhi", Min: 100, Max: 500}
	with := func(f func(*Article)) Article {
		a := valid
		f(&a)
		return a
	}
	factor := func(s string) *Decimal {
		d := mustDecimal(t, s)
		return &d
	}
	ok := []struct {
		name string
		art  Article
	}{
		{"Range", valid},
		{"ZeroRange", with(func(a *Article) { a.Min, a.Max = 0, 0 })},
		{"MaxAmount", with(func(a *Article) { a.Min, a.Max = 0, MaxAmount })},
		{"FixedAtMin", with(func(a *Article) { a.Fixed = ptr[int64](100) })},
		{"FixedAtMax", with(func(a *Article) { a.Fixed = ptr[int64](500) })},
		{"Following", with(func(a *Article) { a.FollowsConsideration, a.Factor = true, factor("0.07") })},
		{"FactorOne", with(func(a *Article) { a.FollowsConsideration, a.Factor = true, factor("1") })},
		{"FactorTiny", with(func(a *Article) { a.FollowsConsideration, a.Factor = true, factor("1e-18") })},
		{"FactorWithoutFollowing", with(func(a *Article) { a.Factor = factor("0.5") })},
		{"PurposeAnyCharacter", with(func(a *Article) { a.PurposeName = "Affidavit – é क 😀 <&>" })},
		{"Purpose200Characters", with(func(a *Article) { a.PurposeName = strings.Repeat("é", 200) })},
		{"EveryState", valid}, // each state is checked below
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			if errs := tc.art.Validate(); errs != nil {
				t.Errorf("Validate() = %q, want nil", errs)
			}
		})
	}
	for _, s := range States() {
		if errs := with(func(a *Article) { a.State = s }).Validate(); errs != nil {
			t.Errorf("state %q: Validate() = %q", s, errs)
		}
	}

	// fieldErr is the one error of an article whose field fails: the message
	// is the field's name and what is wrong with it.
	fieldErr := func(field, what string) []FieldError { return []FieldError{{field, field + " " + what}} }
	const msgCtl = "must not contain control, format, bidirectional, zero-width or line separator characters"
	bad := []struct {
		name string
		art  Article
		want []FieldError
	}{
		{"PurposeEmpty", with(func(a *Article) { a.PurposeName = "" }), fieldErr("purpose_name", "must not be empty")},
		{"PurposeLeadingSpace", with(func(a *Article) { a.PurposeName = " Rent" }), fieldErr("purpose_name", "must not start or end with white space")},
		{"PurposeTrailingTab", with(func(a *Article) { a.PurposeName = "Rent\t" }), fieldErr("purpose_name", "must not start or end with white space")},
		{"PurposeBlank", with(func(a *Article) { a.PurposeName = "  " }), fieldErr("purpose_name", "must not start or end with white space")},
		{"Purpose201Characters", with(func(a *Article) { a.PurposeName = strings.Repeat("é", 201) }), fieldErr("purpose_name", "must be at most 200 characters")},
		{"PurposeControl", with(func(a *Article) { a.PurposeName = "Re\x00nt" }), fieldErr("purpose_name", msgCtl)},
		{"PurposeC1Control", with(func(a *Article) { a.PurposeName = "Re\u0085nt" }), fieldErr("purpose_name", msgCtl)},
		{"PurposeRightToLeftOverride", with(func(a *Article) { a.PurposeName = "Rent\u202e" }), fieldErr("purpose_name", msgCtl)},
		{"PurposeZeroWidthSpace", with(func(a *Article) { a.PurposeName = "Re\u200bnt" }), fieldErr("purpose_name", msgCtl)},
		{"StateUnknown", with(func(a *Article) { a.State = "Orissa" }), fieldErr("state", "must be one of the states or union territories of India")},
		{"StateEmpty", with(func(a *Article) { a.State = "" }), fieldErr("state", "must be one of the states or union territories of India")},
		{"MinNegative", with(func(a *Article) { a.Min = -1 }), fieldErr("min", "must be greater than or equal to 0")},
		{"MaxTooLarge", with(func(a *Article) { a.Max = MaxAmount + 1 }), fieldErr("max", "must be at most 999999999999999")},
		{"MinAboveMax", with(func(a *Article) { a.Min, a.Max = 501, 500 }), fieldErr("max", "must be greater than or equal to min")},
		{"FixedBelowMin", with(func(a *Article) { a.Fixed = ptr[int64](99) }), fieldErr("fixed", "must be between min and max")},
		{"FixedAboveMax", with(func(a *Article) { a.Fixed = ptr[int64](501) }), fieldErr("fixed", "must be between min and max")},
		{"FixedNegative", with(func(a *Article) { a.Fixed = ptr[int64](-1) }), fieldErr("fixed", "must be greater than or equal to 0")},
		{"FactorZero", with(func(a *Article) { a.Factor = factor("0") }), fieldErr("amountPercentConsideration", "must be greater than 0 and at most 1")},
		{"FactorAboveOne", with(func(a *Article) { a.Factor = factor("1.000000000000000001") }), fieldErr("amountPercentConsideration", "must be greater than 0 and at most 1")},
		{"FollowingWithoutFactor", with(func(a *Article) { a.FollowsConsideration = true }), fieldErr("amountPercentConsideration", "is required when toFollowConsiderationPrice is true")},
		{"Everything", Article{PurposeName: "", State: "X", Min: -1, Max: MaxAmount + 1, Fixed: ptr[int64](-5), FollowsConsideration: true},
			[]FieldError{
				{"purpose_name", "purpose_name must not be empty"},
				{"state", "state must be one of the states or union territories of India"},
				{"min", "min must be greater than or equal to 0"},
				{"max", "max must be at most 999999999999999"},
				{"fixed", "fixed must be greater than or equal to 0"},
				{"amountPercentConsideration", "amountPercentConsideration is required when toFollowConsiderationPrice is true"},
			}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := tc.art.Validate(), tc.want; !reflect.DeepEqual(got, want) {
				t.Errorf("Validate() =\n%q\nwant\n%q", got, want)
			}
		})
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
		got := must(t, DecodeArticles, []byte(goodArticlesFile))
		f := mustDecimal(t, "0.05")
		want := []Article{
			{PurposeName: "Affidavit", State: "Delhi", Min: 0, Max: 1000, Fixed: ptr[int64](20)},
			{PurposeName: "Rent Agreement", State: "Karnataka", Min: 100, Max: 500},
			{PurposeName: "Sale Deed", State: "Maharashtra", Min: 100, Max: 25000000, FollowsConsideration: true, Factor: &f},
			{PurposeName: "Rent Agreement", State: "Goa", Min: 100, Max: 500},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("DecodeArticles =\n%+v\nwant\n%+v", got, want)
		}
	})
	t.Run("EmptyFile", func(t *testing.T) {
		got, err := DecodeArticles([]byte(" [ ] "))
		if err != nil || len(got) != 0 {
			t.Errorf("DecodeArticles([]) = %v, %v; want no articles", got, err)
		}
	})
	// Escapes are read as encoding/json reads them, in keys and in text
	// (U+FFFD sent as such is kept).
	for _, tc := range []struct{ name, key, purpose, want string }{
		{"EscapedKeys", `purpose_\u006eame`, `A`, "A"},
		{"EscapedText", `purpose_name`, `\u0041ffidavit \ufffd \ud83d\ude00`, "Affidavit \uFFFD 😀"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := must(t, DecodeArticles, []byte(`[{"`+tc.key+`":"`+tc.purpose+`","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false}]`))
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
			_, err := DecodeArticles([]byte(tc.in))
			checkInvalidError(t, err, tc.msg, []FieldError{{"", tc.msg}})
		})
	}

	rowErrors := []struct {
		name, in, msg string
		want          []FieldError
	}{
		{"UnknownKey", `[{"purpose_name":"A","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false,"note":"x"}]`,
			"1 article is invalid", []FieldError{{"[0].note", "note is not an allowed field"}}},
		{"IDNotAccepted", `[{"id":1,"documentId":"abc","purpose_name":"A","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false}]`,
			"1 article is invalid", []FieldError{
				{"[0].id", "id is not an allowed field"},
				{"[0].documentId", "documentId is not an allowed field"},
			}},
		{"RepeatedKey", `[{"purpose_name":"A","state":"Goa","min":0,"min":5,"max":1,"toFollowConsiderationPrice":false}]`,
			"1 article is invalid", []FieldError{{"[0].min", "min is given more than once"}}},
		{"NotAnObject", `[{"purpose_name":"A","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false}, 5, []]`,
			"2 articles are invalid", []FieldError{
				{"[1]", "each article must be a JSON object"},
				{"[2]", "each article must be a JSON object"},
			}},
		{"MissingFields", `[{}]`, "1 article is invalid", []FieldError{
			{"[0].purpose_name", "purpose_name is a required field"},
			{"[0].state", "state is a required field"},
			{"[0].min", "min is a required field"},
			{"[0].max", "max is a required field"},
			{"[0].toFollowConsiderationPrice", "toFollowConsiderationPrice is a required field"},
		}},
		{"TypeErrors", `[{"purpose_name":1,"state":null,"min":"0","max":1.5,"fixed":true,"toFollowConsiderationPrice":"yes","amountPercentConsideration":"0.07"}]`,
			"1 article is invalid", []FieldError{
				{"[0].purpose_name", "purpose_name must be a string"},
				{"[0].state", "state is a required field"},
				{"[0].min", "min must be an integer"},
				{"[0].max", "max must be an integer"},
				{"[0].fixed", "fixed must be an integer"},
				{"[0].toFollowConsiderationPrice", "toFollowConsiderationPrice must be a boolean"},
				{"[0].amountPercentConsideration", "amountPercentConsideration must be a number"},
			}},
		{"NumberRanges", `[{"purpose_name":"A","state":"Goa","min":-1,"max":1e15,"fixed":-0.0,"toFollowConsiderationPrice":true,"amountPercentConsideration":-0.5}]`,
			"1 article is invalid", []FieldError{
				{"[0].min", "min must be greater than or equal to 0"},
				{"[0].max", "max must be at most 999999999999999"},
				{"[0].amountPercentConsideration", "amountPercentConsideration must be greater than 0 and at most 1"},
			}},
		{"FactorPrecision", `[{"purpose_name":"A","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":true,"amountPercentConsideration":0.0000000000000000001}]`,
			"1 article is invalid", []FieldError{
				{"[0].amountPercentConsideration", "amountPercentConsideration must have at most 18 decimal places"},
			}},
		{"FactorHuge", `[{"purpose_name":"A","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":true,"amountPercentConsideration":1e999999}]`,
			"1 article is invalid", []FieldError{
				{"[0].amountPercentConsideration", "amountPercentConsideration must be greater than 0 and at most 1"},
			}},
		{"DecodeAndRuleErrorsTogether", `[{"purpose_name":" A","state":"Goa","min":"x","max":5,"fixed":-3,"toFollowConsiderationPrice":false,"zzz":1}]`,
			"1 article is invalid", []FieldError{
				{"[0].purpose_name", "purpose_name must not start or end with white space"},
				{"[0].min", "min must be an integer"},
				{"[0].fixed", "fixed must be greater than or equal to 0"},
				{"[0].zzz", "zzz is not an allowed field"},
			}},
		{"LoneSurrogateInPurposeName", `[{"purpose_name":"Rent\ud800","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false}]`,
			"1 article is invalid", []FieldError{
				{"[0].purpose_name", "purpose_name must not contain control, format, bidirectional, zero-width or line separator characters"},
			}},
		{"BadMaxSkipsCrossChecks", `[{"purpose_name":"A","state":"Goa","min":5,"max":"x","fixed":7,"toFollowConsiderationPrice":false}]`,
			"1 article is invalid", []FieldError{{"[0].max", "max must be an integer"}}},
		{"Duplicates", `[
			{"purpose_name":"A","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false},
			{"purpose_name":"A","state":"Delhi","min":0,"max":1,"toFollowConsiderationPrice":false},
			{"purpose_name":"A","state":"Goa","min":0,"max":2,"toFollowConsiderationPrice":false},
			{"purpose_name":"A","state":"Goa","min":5,"max":2,"toFollowConsiderationPrice":false}]`,
			"2 articles are invalid", []FieldError{
				{"[2].purpose_name", "purpose_name and state are the same as in article [0]"},
				{"[3].max", "max must be greater than or equal to min"},
				{"[3].purpose_name", "purpose_name and state are the same as in article [0]"},
			}},
		{"EveryRowReported", `[
			{"purpose_name":"A","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false},
			{"purpose_name":"","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false},
			{"purpose_name":"B","state":"Goa","min":0,"max":1,"toFollowConsiderationPrice":false},
			{"purpose_name":"C","state":"goa","min":2,"max":1,"fixed":9,"toFollowConsiderationPrice":true}]`,
			"2 articles are invalid", []FieldError{
				{"[1].purpose_name", "purpose_name must not be empty"},
				{"[3].state", "state must be one of the states or union territories of India"},
				{"[3].max", "max must be greater than or equal to min"},
				{"[3].amountPercentConsideration", "amountPercentConsideration is required when toFollowConsiderationPrice is true"},
			}},
	}
	for _, tc := range rowErrors {
		t.Run(tc.name, func(t *testing.T) {
			arts, err := DecodeArticles([]byte(tc.in))
			if arts != nil {
				t.Errorf("DecodeArticles returned %d articles with an error", len(arts))
			}
			checkInvalidError(t, err, tc.msg, tc.want)
		})
	}
}

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
	arts := must(t, DecodeArticles, []byte(goodArticlesFile))
	arts[0].ID, arts[0].DocumentID = 99, "shouldnotappear0000000000"
	out := must(t, EncodeArticles, arts)
	t.Run("Format", func(t *testing.T) {
		want := `[
  {
    "purpose_name": "Affidavit",
    "state": "Delhi",
    "min": 0,
    "max": 1000,
    "fixed": 20,
    "toFollowConsiderationPrice": false,
    "amountPercentConsideration": null
  },
  {
    "purpose_name": "Rent Agreement",
    "state": "Goa",
    "min": 100,
    "max": 500,
    "fixed": null,
    "toFollowConsiderationPrice": false,
    "amountPercentConsideration": null
  },
  {
    "purpose_name": "Rent Agreement",
    "state": "Karnataka",
    "min": 100,
    "max": 500,
    "fixed": null,
    "toFollowConsiderationPrice": false,
    "amountPercentConsideration": null
  },
  {
    "purpose_name": "Sale Deed",
    "state": "Maharashtra",
    "min": 100,
    "max": 25000000,
    "fixed": null,
    "toFollowConsiderationPrice": true,
    "amountPercentConsideration": 0.05
  }
]
`
		if got := string(out); got != want {
			t.Errorf("EncodeArticles =\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("RoundTrip", func(t *testing.T) {
		back := must(t, DecodeArticles, out)
		again := must(t, EncodeArticles, back)
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
				if reflect.DeepEqual(a, b) {
					found = true
				}
			}
			if !found {
				t.Errorf("article %+v lost in the round trip", a)
			}
		}
	})
	t.Run("SpecialCharactersRoundTrip", func(t *testing.T) {
		in := []Article{{PurposeName: `Deed <A&B> "quoted" \ é 😀`, State: "Goa", Min: 0, Max: MaxAmount, FollowsConsideration: true, Factor: ptr(mustDecimal(t, "1e-18"))}}
		back := must(t, DecodeArticles, must(t, EncodeArticles, in))
		if !reflect.DeepEqual(back, in) {
			t.Errorf("round trip = %+v, want %+v", back, in)
		}
	})
	t.Run("NilIsEmptyArray", func(t *testing.T) {
		if got, want := string(must(t, EncodeArticles, []Article(nil))), "[]\n"; got != want {
			t.Errorf("EncodeArticles(nil) = %q, want %q", got, want)
		}
	})
	t.Run("InputNotReordered", func(t *testing.T) {
		if got, want := arts[0].PurposeName+"/"+arts[1].State, "Affidavit/Karnataka"; got != want {
			t.Errorf("EncodeArticles reordered its input: %s", got)
		}
	})
}
