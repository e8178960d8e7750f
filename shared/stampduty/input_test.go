package stampduty

import (
	"reflect"
	"testing"
)

// text, number and kind are decoded values, as the edge hands them over.
func text(s string) Value   { return Value{Kind: String, Text: s} }
func number(s string) Value { return Value{Kind: Number, Text: s} }
func kind(k Kind) Value     { return Value{Kind: k} }

// TestValidateDecodedValues validates create-order bodies given as the
// decoded values the edge hands the domain, with no JSON anywhere: the
// domain's checks need nothing but these values.
func TestValidateDecodedValues(t *testing.T) {
	full := []Field{
		{"amount", number("2e2")},
		{"considerationPrice", number("100000.0")},
		{"description", text("Rent agreement for flat 4B, 2nd floor.")},
		{"purpose", text("  Rent Agreement  ")},
		{"state", text("Karnataka")},
		{"paidBy", text("First Party")},
		{"purchasedBy", text("Ravi Kumar (agent)")},
		{"firstPartyMobileNumber", text("9876543210")},
		{"firstPartyName", text("Ravi Kumar")},
		{"secondPartyName", text("Anita Sharma")},
		{"firstPartyAddress", text("12/3, MG Road: Bengaluru - 560001")},
		{"secondPartyAddress", text(`Flat 4B\Tower 2, Indiranagar`)},
		{"firstPartyPan", text("ABCDE1234F")},
		{"secondPartyPan", text("PQRST6789Z")},
	}
	t.Run("FullBody", func(t *testing.T) {
		body := NewOrderBody(full)
		if p, s, ok, err := body.PurposeState(); p != "Rent Agreement" || s != "Karnataka" || !ok || err != nil {
			t.Errorf("PurposeState() = %q, %q, %v, %v; want Rent Agreement, Karnataka, true, nil", p, s, ok, err)
		}
		got, err := validated(body)
		if err != nil {
			t.Fatal(err)
		}
		if want := fullRequest; !reflect.DeepEqual(got, want) {
			t.Errorf("Validate() =\n%+v\nwant\n%+v", got, want)
		}
	})
	t.Run("EveryKindRefused", func(t *testing.T) {
		surrogate := text("Ravi\uFFFD")
		surrogate.LoneSurrogate = true
		_, err := NewOrderBody([]Field{
			{"amount", number("1.5")},
			{"considerationPrice", text("100")},
			{"description", kind(Bool)},
			{"state", kind(Null)},
			{"paidBy", kind(Other)},
			{"purchasedBy", surrogate},
			{"firstPartyMobileNumber", number("9876543210")},
			{"firstPartyName", text("A")},
			{"secondPartyName", text("B")},
			{"note", text("x")},
		}).Validate(false)
		checkInvalid(t, err, []FieldError{
			{Path: "amount", Message: "amount must be an integer"},
			{Path: "considerationPrice", Message: "considerationPrice must be an integer"},
			{Path: "description", Message: "description must be a string"},
			{Path: "purpose", Message: "purpose is a required field"},
			{Path: "state", Message: "state is a required field"},
			{Path: "paidBy", Message: "paidBy must be a string"},
			{Path: "purchasedBy", Message: "purchasedBy must not contain control, format, bidirectional, zero-width or line separator characters"},
			{Path: "firstPartyMobileNumber", Message: "firstPartyMobileNumber must be a string"},
			{Path: "note", Message: "note is not an allowed field"},
		})
	})
	t.Run("LoneSurrogatePurposeIsNotFound", func(t *testing.T) {
		purpose := text("Rent\uFFFD")
		purpose.LoneSurrogate = true
		_, _, ok, err := NewOrderBody([]Field{{"purpose", purpose}, {"state", text("Goa")}}).PurposeState()
		if got, want := ErrorCode(err), ENOTFOUND; !ok || got != want {
			t.Errorf("PurposeState() = %v, %v; want true, %s", ok, err, want)
		}
	})
}

// TestNewArticleFromDecodedValues reads catalogue articles from decoded
// values, with no JSON anywhere.
func TestNewArticleFromDecodedValues(t *testing.T) {
	t.Run("Following", func(t *testing.T) {
		got, errs := NewArticle([]Field{
			{"purpose_name", text("Sale Deed")},
			{"state", text("Maharashtra")},
			{"min", number("100")},
			{"max", number("2.5e7")},
			{"fixed", kind(Null)},
			{"toFollowConsiderationPrice", Value{Kind: Bool, Bool: true}},
			{"amountPercentConsideration", number("5E-2")},
		})
		if errs != nil {
			t.Fatalf("NewArticle errors: %q", errs)
		}
		if got.PurposeName != "Sale Deed" || got.State != "Maharashtra" || got.Min != 100 || got.Max != 25000000 ||
			got.Fixed != nil || !got.FollowsConsideration || got.Factor == nil || got.Factor.String() != "0.05" {
			t.Errorf("NewArticle = %+v", got)
		}
	})
	t.Run("Refused", func(t *testing.T) {
		_, errs := NewArticle([]Field{
			{"purpose_name", number("1")},
			{"state", text("Goa")},
			{"min", kind(Other)},
			{"max", number("5")},
			{"max", number("6")},
			{"zzz", kind(Null)},
			{"toFollowConsiderationPrice", text("yes")},
			{"amountPercentConsideration", kind(Bool)},
		})
		want := []FieldError{
			{Path: "purpose_name", Message: "purpose_name must be a string"},
			{Path: "min", Message: "min must be an integer"},
			{Path: "toFollowConsiderationPrice", Message: "toFollowConsiderationPrice must be a boolean"},
			{Path: "amountPercentConsideration", Message: "amountPercentConsideration must be a number"},
			{Path: "max", Message: "max is given more than once"},
			{Path: "zzz", Message: "zzz is not an allowed field"},
		}
		if !reflect.DeepEqual(errs, want) {
			t.Errorf("NewArticle errors =\n%q\nwant\n%q", errs, want)
		}
	})
}
