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
	fieldErr := func(field, what string) []FieldError { return []FieldError{{Path: field, Message: field + " " + what}} }
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
				{Path: "purpose_name", Message: "purpose_name must not be empty"},
				{Path: "state", Message: "state must be one of the states or union territories of India"},
				{Path: "min", Message: "min must be greater than or equal to 0"},
				{Path: "max", Message: "max must be at most 999999999999999"},
				{Path: "fixed", Message: "fixed must be greater than or equal to 0"},
				{Path: "amountPercentConsideration", Message: "amountPercentConsideration is required when toFollowConsiderationPrice is true"},
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
