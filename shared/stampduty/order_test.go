package stampduty

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"stampduty/shared/duty"
	"strings"
	"testing"
)

// member is one key of a test body with its JSON literal.
type member struct{ key, lit string }

// omit as a literal removes the key from the body.
const omit = "\x00omit"

// fullMembers is a typical full create-order body.
var fullMembers = []member{
	{"amount", "200"},
	{"considerationPrice", "100000"},
	{"description", `"Rent agreement for flat 4B, 2nd floor."`},
	{"purpose", `"  Rent Agreement  "`},
	{"state", `"Karnataka"`},
	{"paidBy", `"First Party"`},
	{"purchasedBy", `"Ravi Kumar (agent)"`},
	{"firstPartyMobileNumber", `"9876543210"`},
	{"firstPartyName", `"Ravi Kumar"`},
	{"secondPartyName", `"Anita Sharma"`},
	{"firstPartyAddress", `"12/3, MG Road: Bengaluru - 560001"`},
	{"secondPartyAddress", `"Flat 4B\\Tower 2, Indiranagar"`},
	{"firstPartyPan", `"ABCDE1234F"`},
	{"secondPartyPan", `"PQRST6789Z"`},
}

// fullRequest is fullMembers validated.
var fullRequest = OrderRequest{
	Amount:                 200,
	ConsiderationPrice:     100000,
	Description:            "Rent agreement for flat 4B, 2nd floor.",
	Purpose:                "Rent Agreement",
	State:                  "Karnataka",
	PaidBy:                 "First Party",
	PurchasedBy:            "Ravi Kumar (agent)",
	FirstPartyMobileNumber: "9876543210",
	FirstPartyName:         "Ravi Kumar",
	SecondPartyName:        "Anita Sharma",
	FirstPartyAddress:      "12/3, MG Road: Bengaluru - 560001",
	SecondPartyAddress:     `Flat 4B\Tower 2, Indiranagar`,
	FirstPartyPan:          "ABCDE1234F",
	SecondPartyPan:         "PQRST6789Z",
	Quantity:               1,
}

// minimalMembers holds only the required fields.
var minimalMembers = []member{
	{"amount", "20"},
	{"considerationPrice", "0"},
	{"purpose", `"Affidavit"`},
	{"state", `"Delhi"`},
	{"paidBy", `"Second Party"`},
	{"firstPartyMobileNumber", `"0123456789"`},
	{"firstPartyName", `"A"`},
	{"secondPartyName", `"B"`},
}

// buildBody writes base with the changes applied: a change replaces the
// literal of its key (omit removes it); new keys go at the end.
func buildBody(base []member, changes ...member) []byte {
	ms := slices.Clone(base)
	for _, c := range changes {
		i := slices.IndexFunc(ms, func(m member) bool { return m.key == c.key })
		if i < 0 {
			ms = append(ms, c)
		} else {
			ms[i] = c
		}
	}
	var b strings.Builder
	b.WriteByte('{')
	first := true
	for _, m := range ms {
		if m.lit == omit {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(jstr(m.key))
		b.WriteByte(':')
		b.WriteString(m.lit)
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// jstr is the JSON literal of s (with encoding/json's escapes for < > &).
func jstr(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// orderBody decodes a body that must be a JSON object as the edge does,
// but without its limits (function.DecodeObject tests them).
func orderBody(t testing.TB, body []byte) *OrderBody {
	t.Helper()
	fields, err := DecodeFields(body, math.MaxInt)
	if err != nil {
		t.Fatalf("DecodeFields(%s): %v", body, err)
	}
	return NewOrderBody(fields)
}

// validateBody decodes and validates a body that must decode.
func validateBody(t *testing.T, body []byte) (OrderRequest, error) {
	t.Helper()
	return validated(orderBody(t, body))
}

// validated is Validate(false), as a create of a legacy article sees it
// before pricing: the inputs' form errors are its errors too. The request
// it returns leaves out the inputs for the rules, which compare as values
// only when empty.
func validated(b *OrderBody) (OrderRequest, error) {
	req, err := b.Validate(false)
	if err == nil && req.InputErrors != nil {
		return OrderRequest{}, Invalid(req.InputErrors)
	}
	req.Inputs, req.InputErrors, req.AmountSent = duty.Request{}, nil, false
	return req, err
}

// checkInvalid checks that err is the EINVALID *Error of Invalid(want).
func checkInvalid(t *testing.T, err error, want []FieldError) {
	t.Helper()
	e := checkInvalidError(t, err, Invalid(want).Message, want)
	if !strings.HasPrefix(e.Message, "Invalid data.") {
		t.Errorf("Message %q does not start with Invalid data.", e.Message)
	}
}

// checkInvalidError checks that err is an EINVALID *Error with this message
// and these fields, and returns it.
func checkInvalidError(t *testing.T, err error, msg string, fields []FieldError) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v, want an *Error", err)
	}
	if got, want := e.Code, EINVALID; got != want {
		t.Errorf("Code = %q, want %q", got, want)
	}
	if got, want := e.Message, msg; got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	if got, want := e.Fields, fields; !reflect.DeepEqual(got, want) {
		t.Errorf("Fields =\n%q\nwant\n%q", got, want)
	}
	return e
}

func TestNewOrderBody(t *testing.T) {
	t.Run("FieldsByKey", func(t *testing.T) {
		r := orderBody(t, []byte(`{"amount":"1","state":null,"purpose":[1,"]"],"paidBy":{"a":"}"},"description":true,"considerationPrice":-2.5e1}`))
		want := map[int]Value{
			fAmount:             {Kind: String, Text: "1"},
			fState:              {Kind: Null},
			fPurpose:            {Kind: Other},
			fPaidBy:             {Kind: Other},
			fDescription:        {Kind: Bool, Bool: true},
			fConsiderationPrice: {Kind: Number, Text: "-2.5e1"},
		}
		for idx := range orderFieldNames {
			got, want := r.fields[idx], want[idx]
			got.Raw = nil // what Other held is not a field's value
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s = %+v, want %+v", orderFieldNames[idx], got, want)
			}
		}
		if r.unknown != nil {
			t.Errorf("unknown keys %q, want none", r.unknown)
		}
	})
	t.Run("UnknownKeysInBodyOrder", func(t *testing.T) {
		r := orderBody(t, []byte(`{"b":1,"amount":1,"a":2,"Amount":3}`))
		if got, want := r.unknown, []string{"b", "a", "Amount"}; !slices.Equal(got, want) {
			t.Errorf("unknown = %q, want %q", got, want)
		}
	})
	t.Run("RepeatedKeyKeepsItsFirstValue", func(t *testing.T) {
		r := orderBody(t, []byte(`{"amount":1,"x":1,"amount":2,"x":2}`))
		if got, want := r.fields[fAmount].Text, "1"; got != want {
			t.Errorf("amount = %s, want %s", got, want)
		}
		if got, want := r.unknown, []string{"x"}; !slices.Equal(got, want) {
			t.Errorf("unknown = %q, want %q", got, want)
		}
	})
}

func TestPurposeState(t *testing.T) {
	cases := []struct {
		name          string
		changes       []member
		purpose, want string
		ok            bool
		// notFound: no article can have the key, so PurposeState answers 404 itself.
		notFound bool
	}{
		{"BothStrings", nil, "Rent Agreement", "Karnataka", true, false},
		{"PurposeTrimmed", []member{{"purpose", `" \t Rent \n"`}}, "Rent", "Karnataka", true, false},
		{"Escaped", []member{{"purpose", `"\u0052ent"`}, {"state", `"\u0047oa"`}}, "Rent", "Goa", true, false},
		{"PurposeAt200Characters", []member{{"purpose", jstr(strings.Repeat("क", 200))}}, strings.Repeat("क", 200), "Karnataka", true, false},
		{"ErrBlankPurpose", []member{{"purpose", `"   "`}}, "", "Karnataka", true, true},
		{"ErrPurposeTooLong", []member{{"purpose", jstr(strings.Repeat("x", 201))}}, strings.Repeat("x", 201), "Karnataka", true, true},
		{"ErrPurpose64KiB", []member{{"purpose", jstr(strings.Repeat("x", 64<<10))}}, strings.Repeat("x", 64<<10), "Karnataka", true, true},
		{"ErrPurposeRightToLeftOverride", []member{{"purpose", jstr("Rent\u202e")}}, "Rent\u202e", "Karnataka", true, true},
		{"ErrPurposeLoneSurrogate", []member{{"purpose", `"Rent\ud800"`}}, "Rent\uFFFD", "Karnataka", true, true},
		{"ErrStateNotTrimmed", []member{{"state", `" Goa "`}}, "Rent Agreement", " Goa ", true, true},
		{"ErrStateUnknown", []member{{"state", `"Atlantis"`}}, "Rent Agreement", "Atlantis", true, true},
		{"PurposeNumber", []member{{"purpose", `1`}}, "", "", false, false},
		{"PurposeNull", []member{{"purpose", `null`}}, "", "", false, false},
		{"PurposeAbsent", []member{{"purpose", omit}}, "", "", false, false},
		{"StateArray", []member{{"state", `["Goa"]`}}, "", "", false, false},
		{"StateAbsent", []member{{"state", omit}}, "", "", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, s, ok, err := orderBody(t, buildBody(fullMembers, tc.changes...)).PurposeState()
			if p != tc.purpose || s != tc.want || ok != tc.ok {
				t.Errorf("PurposeState() = %q, %q, %v; want %q, %q, %v", p, s, ok, tc.purpose, tc.want, tc.ok)
			}
			if got, want := ErrorCode(err), Code(""); tc.notFound {
				want = ENOTFOUND
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("PurposeState() error code = %q, want %q", got, want)
				}
				if got, want := err.Error(), "Purpose with the name: "+tc.purpose+" cannot be found."; got != want {
					t.Errorf("PurposeState() error = %q, want %q", got, want)
				}
			} else if !reflect.DeepEqual(got, want) {
				t.Errorf("PurposeState() error = %v, want none", err)
			}
		})
	}
}

func TestValidateFullBody(t *testing.T) {
	got, err := validateBody(t, buildBody(fullMembers))
	if err != nil {
		t.Fatal(err)
	}
	if want := fullRequest; !reflect.DeepEqual(got, want) {
		t.Errorf("Validate() =\n%+v\nwant\n%+v", got, want)
	}
}

func TestValidateDefaults(t *testing.T) {
	t.Run("MinimalBody", func(t *testing.T) {
		got, err := validateBody(t, buildBody(minimalMembers))
		if err != nil {
			t.Fatal(err)
		}
		want := OrderRequest{
			Amount: 20, ConsiderationPrice: 0, Description: "N/A", Purpose: "Affidavit", State: "Delhi",
			PaidBy: "Second Party", PurchasedBy: "", FirstPartyMobileNumber: "0123456789",
			FirstPartyName: "A", SecondPartyName: "B", Quantity: 1,
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Validate() =\n%+v\nwant\n%+v", got, want)
		}
	})
	t.Run("OptionalNullsAreAbsent", func(t *testing.T) {
		var changes []member
		for _, k := range []string{"description", "purchasedBy", "firstPartyAddress", "secondPartyAddress", "firstPartyPan", "secondPartyPan"} {
			changes = append(changes, member{k, "null"})
		}
		got, err := validateBody(t, buildBody(minimalMembers, changes...))
		if err != nil {
			t.Fatal(err)
		}
		if got.Description != "N/A" || got.PurchasedBy != "" || got.FirstPartyAddress != "" ||
			got.SecondPartyAddress != "" || got.FirstPartyPan != "" || got.SecondPartyPan != "" {
			t.Errorf("defaults not applied: %+v", got)
		}
	})
}

// fieldValue returns a field of a validated request as text.
func fieldValue(r OrderRequest, key string) string {
	switch key {
	case "amount":
		return fmt.Sprint(r.Amount)
	case "considerationPrice":
		return fmt.Sprint(r.ConsiderationPrice)
	case "description":
		return r.Description
	case "purpose":
		return r.Purpose
	case "state":
		return r.State
	case "paidBy":
		return r.PaidBy
	case "purchasedBy":
		return r.PurchasedBy
	case "firstPartyMobileNumber":
		return r.FirstPartyMobileNumber
	case "firstPartyName":
		return r.FirstPartyName
	case "secondPartyName":
		return r.SecondPartyName
	case "firstPartyAddress":
		return r.FirstPartyAddress
	case "secondPartyAddress":
		return r.SecondPartyAddress
	case "firstPartyPan":
		return r.FirstPartyPan
	case "secondPartyPan":
		return r.SecondPartyPan
	case "quantity":
		return fmt.Sprint(r.Quantity)
	}
	panic("unknown field " + key)
}

// fieldCase is one value of one field: either accepted and stored as
// stored, or refused with msg.
type fieldCase struct {
	name, key, lit string
	stored, msg    string
}

// runFieldCases validates the full body with each case's change.
func runFieldCases(t *testing.T, cases []fieldCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := validateBody(t, buildBody(fullMembers, member{tc.key, tc.lit}))
			if tc.msg != "" {
				checkInvalid(t, err, []FieldError{{Path: tc.key, Message: tc.msg}})
				return
			}
			if err != nil {
				t.Fatalf("Validate with %s=%s: %v", tc.key, tc.lit, err)
			}
			if got, want := fieldValue(got, tc.key), tc.stored; got != want {
				t.Errorf("%s = %q, want %q", tc.key, got, want)
			}
		})
	}
}

// printableSymbols are the printable ASCII characters that are neither
// letters nor digits.
func printableSymbols() []byte {
	var out []byte
	for c := byte(0x21); c < 0x7f; c++ {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			out = append(out, c)
		}
	}
	return out
}

// symbolName names a character for a subtest.
func symbolName(c string) string { return fmt.Sprintf("%U", []rune(c)[0]) }

// nonASCIIAndControls are forbidden in every restricted text field.
var nonASCIIAndControls = map[string]string{
	"EAcute": "é", "Tab": "\t", "Newline": "\n", "Nul": "\x00", "NoBreakSpace": "\u00a0",
	"FullwidthA": "Ａ", "FullwidthDigit": "１", "Devanagari": "क", "Emoji": "😀", "Del": "\x7f",
}

// symbolCases are the cases of key for each printable symbol and each of
// nonASCIIAndControls written between before and after: a symbol in allowed
// is stored as sent, any other character refused with msg.
func symbolCases(key, before, after, allowed, msg string) []fieldCase {
	var cases []fieldCase
	for _, c := range printableSymbols() {
		s := before + string(c) + after
		if strings.IndexByte(allowed, c) >= 0 {
			cases = append(cases, fieldCase{"Allowed/" + symbolName(string(c)), key, jstr(s), s, ""})
		} else {
			cases = append(cases, fieldCase{"Forbidden/" + symbolName(string(c)), key, jstr(s), "", msg})
		}
	}
	for name, c := range nonASCIIAndControls {
		cases = append(cases, fieldCase{"Forbidden/" + name, key, jstr(before + c + after), "", msg})
	}
	return cases
}

// unprintableCases are the cases of key for each of unprintable written
// between before and after (JSON string content), each refused with msg.
func unprintableCases(key, before, after, msg string) []fieldCase {
	var cases []fieldCase
	for name, c := range unprintable {
		cases = append(cases, fieldCase{"Err" + name, key, `"` + before + c + after + `"`, "", msg})
	}
	return cases
}

// runKeyedFieldCases runs, in a subtest for each key, the cases of that key.
func runKeyedFieldCases(t *testing.T, keys []string, cases func(key string) []fieldCase) {
	t.Helper()
	for _, key := range keys {
		t.Run(key, func(t *testing.T) { runFieldCases(t, cases(key)) })
	}
}

func TestValidateIntegers(t *testing.T) {
	var cases []fieldCase
	for _, key := range []string{"amount", "considerationPrice"} {
		tooLarge := key + " must be at most 999999999999999"
		if key == "considerationPrice" {
			tooLarge = key + " must have at most 15 digits"
		}
		cases = append(cases,
			fieldCase{key + "/Zero", key, "0", "0", ""},
			fieldCase{key + "/Plain", key, "200", "200", ""},
			fieldCase{key + "/IntegralFraction", key, "200.0", "200", ""},
			fieldCase{key + "/Exponent", key, "2e2", "200", ""},
			fieldCase{key + "/ExponentWithFraction", key, "2.5E+2", "250", ""},
			fieldCase{key + "/NegativeExponentIntegral", key, "20000e-2", "200", ""},
			fieldCase{key + "/NegativeZero", key, "-0", "0", ""},
			fieldCase{key + "/FifteenDigits", key, "999999999999999", "999999999999999", ""},
			fieldCase{key + "/FifteenDigitsExponent", key, "9.99999999999999e14", "999999999999999", ""},
			fieldCase{key + "/SixteenDigits", key, "1000000000000000", "", tooLarge},
			fieldCase{key + "/SixteenDigitsExponent", key, "1e15", "", tooLarge},
			fieldCase{key + "/HugeExponent", key, "1e999999", "", tooLarge},
			fieldCase{key + "/AboveInt64", key, "99999999999999999999999", "", tooLarge},
			fieldCase{key + "/Negative", key, "-1", "", key + " must be greater than or equal to 0"},
			fieldCase{key + "/NegativeHuge", key, "-1e999999", "", key + " must be greater than or equal to 0"},
			fieldCase{key + "/NegativeIntegralFraction", key, "-5.0", "", key + " must be greater than or equal to 0"},
			fieldCase{key + "/Fraction", key, "200.5", "", key + " must be an integer"},
			fieldCase{key + "/NegativeFraction", key, "-0.5", "", key + " must be an integer"},
			fieldCase{key + "/TinyExponent", key, "1e-999999", "", key + " must be an integer"},
			fieldCase{key + "/String", key, `"200"`, "", key + " must be an integer"},
			fieldCase{key + "/EmptyString", key, `""`, "", key + " must be an integer"},
			fieldCase{key + "/True", key, "true", "", key + " must be an integer"},
			fieldCase{key + "/False", key, "false", "", key + " must be an integer"},
			fieldCase{key + "/Object", key, `{"value":200}`, "", key + " must be an integer"},
			fieldCase{key + "/Array", key, "[200]", "", key + " must be an integer"},
			fieldCase{key + "/Null", key, "null", "", key + " is a required field"},
			fieldCase{key + "/Absent", key, omit, "", key + " is a required field"},
		)
	}
	runFieldCases(t, cases)
}

func TestValidateQuantity(t *testing.T) {
	const bad = "quantity must be an integer from 1 to 20"
	runFieldCases(t, []fieldCase{
		{"AbsentIsOne", "quantity", omit, "1", ""},
		{"NullIsOne", "quantity", "null", "1", ""},
		{"One", "quantity", "1", "1", ""},
		{"Twenty", "quantity", "20", "20", ""},
		{"IntegralFraction", "quantity", "2.0", "2", ""},
		{"Exponent", "quantity", "2e1", "20", ""},
		{"Zero", "quantity", "0", "", bad},
		{"TwentyOne", "quantity", "21", "", bad},
		{"Negative", "quantity", "-1", "", bad},
		{"Fraction", "quantity", "1.5", "", bad},
		{"Huge", "quantity", "1e999999", "", bad},
		{"String", "quantity", `"2"`, "", bad},
		{"True", "quantity", "true", "", bad},
		{"Object", "quantity", `{"n":2}`, "", bad},
		{"Array", "quantity", "[2]", "", bad},
	})
}

func TestValidateStringTypes(t *testing.T) {
	required := []string{"purpose", "state", "paidBy", "firstPartyMobileNumber", "firstPartyName", "secondPartyName"}
	optional := map[string]string{
		"description": "N/A", "purchasedBy": "", "firstPartyAddress": "",
		"secondPartyAddress": "", "firstPartyPan": "", "secondPartyPan": "",
	}
	var cases []fieldCase
	for _, key := range orderFieldNames[fDescription:fQuantity] {
		for name, lit := range map[string]string{
			"Number": "123", "Float": "1.5", "True": "true", "False": "false",
			"Object": `{"a":"b"}`, "EmptyObject": "{}", "Array": `["a"]`, "EmptyArray": "[]",
		} {
			cases = append(cases, fieldCase{key + "/" + name, key, lit, "", key + " must be a string"})
		}
	}
	for _, key := range required {
		cases = append(cases,
			fieldCase{key + "/Null", key, "null", "", key + " is a required field"},
			fieldCase{key + "/Absent", key, omit, "", key + " is a required field"})
	}
	for key, def := range optional {
		cases = append(cases,
			fieldCase{key + "/Null", key, "null", def, ""},
			fieldCase{key + "/Absent", key, omit, def, ""})
	}
	runFieldCases(t, cases)
}

func TestValidateDescription(t *testing.T) {
	const (
		key     = "description"
		msgLen  = "description must be at most 100 characters"
		msgChar = "description may only contain letters, digits, spaces and ! # @ $ * ( ) - + ; : , . ? /"
	)
	cases := []fieldCase{
		{"LettersAndDigits", key, jstr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", ""},
		{"AllSymbols", key, jstr("a !#@$*()-+;:,.?/ b"), "a !#@$*()-+;:,.?/ b", ""},
		{"Length100", key, jstr(strings.Repeat("a", 100)), strings.Repeat("a", 100), ""},
		{"Length101", key, jstr(strings.Repeat("a", 101)), "", msgLen},
		{"Length101NonASCII", key, jstr(strings.Repeat("é", 101)), "", msgLen},
		{"CountsCharactersNotBytes", key, jstr(strings.Repeat("é", 60)), "", msgChar},
		{"Length100Spaces", key, jstr(strings.Repeat(" ", 100)), "N/A", ""},
		{"Length101Spaces", key, jstr(strings.Repeat(" ", 101)), "", msgLen},
		{"Empty", key, `""`, "N/A", ""},
		{"Blank", key, `"   "`, "N/A", ""},
		{"NotTrimmed", key, `" Rent "`, " Rent ", ""},
		{"Escaped", key, `"Flat \u0034B"`, "Flat 4B", ""},
		{"EscapedForbidden", key, `"a\u003cb"`, "", msgChar},
	}
	cases = append(cases, fieldCase{"Allowed/Space", key, jstr("a b"), "a b", ""})
	runFieldCases(t, append(cases, symbolCases(key, "ab", "c", " !#@$*()-+;:,.?/", msgChar)...))
}

// unprintable are the characters a text printed on a legal document must not
// carry (decisions.md), as JSON string content, by name.
var unprintable = map[string]string{
	"Nul": `\u0000`, "Tab": `\t`, "Newline": `\n`, "U001F": `\u001f`, "Del": `\u007f`,
	"C1": `\u0080`, "NextLine": `\u0085`, "U009F": `\u009f`,
	"LeftToRightEmbedding": "\u202a", "RightToLeftOverride": "\u202e",
	"LeftToRightIsolate": "\u2066", "PopDirectionalIsolate": "\u2069",
	"ZeroWidthSpace": "\u200b", "ZeroWidthNonJoiner": "\u200c", "ZeroWidthJoiner": "\u200d",
	"WordJoiner": "\u2060", "ByteOrderMark": "\ufeff",
	"LineSeparator": "\u2028", "ParagraphSeparator": "\u2029",
	"LoneHighSurrogate": `\ud800`, "LoneLowSurrogate": `\udc00`, "SwappedSurrogates": `\ude00\ud83d`,
	"PrivateUse": "\ue000", "Unassigned": "\U000e0080",
	"SoftHyphen": "\u00ad", "LeftToRightMark": "\u200e",
}

func TestValidatePurpose(t *testing.T) {
	const (
		key      = "purpose"
		msgEmpty = "purpose must not be empty"
		msgCtl   = "purpose must not contain control, format, bidirectional, zero-width or line separator characters"
		msgLen   = "purpose must be at most 200 characters"
	)
	cases := []fieldCase{
		{"Plain", key, `"Rent"`, "Rent", ""},
		{"Trimmed", key, `"  Rent Agreement \t"`, "Rent Agreement", ""},
		{"OneCharacter", key, `"R"`, "R", ""},
		{"AnyCharacter", key, jstr(`Affidavit – é क 😀 <>&"'_%\ [x]`), `Affidavit – é क 😀 <>&"'_%\ [x]`, ""},
		{"NoBreakSpaceInside", key, jstr("Re\u00a0nt"), "Re\u00a0nt", ""},
		{"At200Characters", key, jstr(strings.Repeat("क", 200)), strings.Repeat("क", 200), ""},
		{"At200CharactersTrimmed", key, jstr("  " + strings.Repeat("x", 200) + " "), strings.Repeat("x", 200), ""},
		{"ErrLongerThan200Characters", key, jstr(strings.Repeat("x", 201)), "", msgLen},
		{"ReplacementCharacterAsSent", key, jstr("Rent \uFFFD"), "Rent \uFFFD", ""},
		{"Empty", key, `""`, "", msgEmpty},
		{"Blank", key, `"   "`, "", msgEmpty},
		{"BlankWhiteSpace", key, `" \t\n\r "`, "", msgEmpty},
		{"Nul", key, `"\u0000"`, "", msgCtl},
		{"TabInside", key, `"Re\tnt"`, "", msgCtl},
		{"NewlineInside", key, `"Re\nnt"`, "", msgCtl},
		{"U001F", key, `"Re\u001fnt"`, "", msgCtl},
		{"Del", key, `"Re\u007fnt"`, "", msgCtl},
		{"U0080", key, `"Re\u0080nt"`, "", msgCtl},
		{"NextLine", key, `"Re\u0085nt"`, "", msgCtl},
		{"U009F", key, `"Re\u009fnt"`, "", msgCtl},
		{"UA0IsNotControl", key, `"Re\u00a0"`, "Re", ""},
	}
	runFieldCases(t, append(cases, unprintableCases(key, "Re", "nt", msgCtl)...))
}

// invalidStrings are the cases of key for each of values as a JSON string,
// each refused with msg.
func invalidStrings(key, msg string, values ...string) []fieldCase {
	var cases []fieldCase
	for _, s := range values {
		cases = append(cases, fieldCase{"Invalid/" + s, key, jstr(s), "", msg})
	}
	return cases
}

func TestValidateState(t *testing.T) {
	var cases []fieldCase
	for _, s := range States() {
		cases = append(cases, fieldCase{"Valid/" + s, "state", jstr(s), s, ""})
	}
	runFieldCases(t, append(cases, invalidStrings("state", "state must be one of the states or union territories of India",
		"", "delhi", "Delhi ", " Delhi", "Orissa", "Dadra and Nagar Haveli", "Atlantis")...))
}

func TestValidatePaidBy(t *testing.T) {
	cases := []fieldCase{
		{"FirstParty", "paidBy", `"First Party"`, "First Party", ""},
		{"SecondParty", "paidBy", `"Second Party"`, "Second Party", ""},
	}
	runFieldCases(t, append(cases, invalidStrings("paidBy", "paidBy must be one of: First Party, Second Party",
		"", "first party", "First party", "FIRST PARTY", "Third Party", " First Party", "Second Party ", "FirstParty", "Both")...))
}

func TestValidatePurchasedBy(t *testing.T) {
	const (
		key    = "purchasedBy"
		msg    = "purchasedBy must not contain control, format, bidirectional, zero-width or line separator characters"
		msgLen = "purchasedBy must be at most 200 characters"
	)
	cases := []fieldCase{
		{"Empty", key, `""`, "", ""},
		{"Spaces", key, `"  "`, "  ", ""},
		{"AnyCharacter", key, jstr(`é क 😀 <>&"'_%\`), `é क 😀 <>&"'_%\`, ""},
		{"IndianScripts", key, jstr("श्रीमती प्रिया ஸ்ரீ ಕನ್ನಡ"), "श्रीमती प्रिया ஸ்ரீ ಕನ್ನಡ", ""},
		{"SurrogatePair", key, `"\ud83d\ude00"`, "😀", ""},
		{"ReplacementCharacterAsSent", key, `"\ufffd"`, "\uFFFD", ""},
		{"At200Characters", key, jstr(strings.Repeat("😀", 200)), strings.Repeat("😀", 200), ""},
		{"ErrLongerThan200Characters", key, jstr(strings.Repeat("a", 201)), "", msgLen},
		{"Err65KB", key, jstr(strings.Repeat("a", 65000)), "", msgLen},
	}
	runFieldCases(t, append(cases, unprintableCases(key, "a", "b", msg)...))
}

func TestValidateMobileNumber(t *testing.T) {
	const key, msg = "firstPartyMobileNumber", "firstPartyMobileNumber must be exactly 10 digits"
	runFieldCases(t, []fieldCase{
		{"TenDigits", key, `"9876543210"`, "9876543210", ""},
		{"LeadingZero", key, `"0000000000"`, "0000000000", ""},
		{"NineDigits", key, `"987654321"`, "", msg},
		{"ElevenDigits", key, `"98765432101"`, "", msg},
		{"Empty", key, `""`, "", msg},
		{"Letter", key, `"98765x3210"`, "", msg},
		{"Space", key, `"98765 3210"`, "", msg},
		{"Dash", key, `"98765-3210"`, "", msg},
		{"CountryCode", key, `"+919876543210"`, "", msg},
		{"Padded", key, `" 9876543210"`, "", msg},
		{"ArabicIndicDigits", key, jstr("٩٨٧٦٥٤٣٢١٠"), "", msg},
		{"FullwidthDigits", key, jstr("９８７６５４３２１０"), "", msg},
		{"Number", key, `9876543210`, "", key + " must be a string"},
	})
}

func TestValidateNames(t *testing.T) {
	runKeyedFieldCases(t, []string{"firstPartyName", "secondPartyName"}, func(key string) []fieldCase {
		msgEmpty := key + " must not be empty"
		msgLen := key + " must be at most 40 characters"
		msgChar := key + " may only contain letters, digits and spaces"
		cases := []fieldCase{
			{"Length0", key, `""`, "", msgEmpty},
			{"Length1", key, `"a"`, "a", ""},
			{"Length40", key, jstr(strings.Repeat("a", 40)), strings.Repeat("a", 40), ""},
			{"Length41", key, jstr(strings.Repeat("a", 41)), "", msgLen},
			{"Length41NonASCII", key, jstr(strings.Repeat("é", 41)), "", msgLen},
			{"CountsCharactersNotBytes", key, jstr(strings.Repeat("é", 30)), "", msgChar},
			{"Blank", key, `"   "`, "", msgEmpty},
			{"Blank41", key, jstr(strings.Repeat(" ", 41)), "", msgEmpty},
			{"StoredAsSent", key, `" Ravi  Kumar "`, " Ravi  Kumar ", ""},
			{"Lowercase", key, jstr("abcdefghijklmnopqrstuvwxyz"), "abcdefghijklmnopqrstuvwxyz", ""},
			{"Uppercase", key, jstr("ABCDEFGHIJKLMNOPQRSTUVWXYZ"), "ABCDEFGHIJKLMNOPQRSTUVWXYZ", ""},
			{"Digits", key, jstr("Unit 0123456789"), "Unit 0123456789", ""},
			{"Escaped", key, `"Ravi\u0020Kumar"`, "Ravi Kumar", ""},
		}
		return append(cases, symbolCases(key, "Ra", "vi", "", msgChar)...)
	})
}

func TestValidateAddresses(t *testing.T) {
	runKeyedFieldCases(t, []string{"firstPartyAddress", "secondPartyAddress"}, func(key string) []fieldCase {
		msgLen := key + " must be at most 120 characters"
		msgChar := key + ` may only contain letters, digits, spaces and . / : , - \`
		cases := []fieldCase{
			{"Empty", key, `""`, "", ""},
			{"Length120", key, jstr(strings.Repeat("a", 120)), strings.Repeat("a", 120), ""},
			{"Length121", key, jstr(strings.Repeat("a", 121)), "", msgLen},
			{"Length121NonASCII", key, jstr(strings.Repeat("é", 121)), "", msgLen},
			{"CountsCharactersNotBytes", key, jstr(strings.Repeat("é", 70)), "", msgChar},
			{"AllAllowed", key, jstr(`12/3, M.G. Road: Block-A\B Bengaluru`), `12/3, M.G. Road: Block-A\B Bengaluru`, ""},
			{"LettersAndDigits", key, jstr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", ""},
			{"Allowed/Space", key, jstr("a b"), "a b", ""},
			{"Blank", key, `"  "`, "  ", ""},
		}
		return append(cases, symbolCases(key, "ab", "c", `./:,-\`, msgChar)...)
	})
}

func TestValidatePANs(t *testing.T) {
	runKeyedFieldCases(t, []string{"firstPartyPan", "secondPartyPan"}, func(key string) []fieldCase {
		msg := key + " must be empty or a PAN: 5 capital letters, 4 digits, 1 capital letter"
		return []fieldCase{
			{"Valid", key, `"ABCDE1234F"`, "ABCDE1234F", ""},
			{"ValidEdges", key, `"AAAAA0000Z"`, "AAAAA0000Z", ""},
			{"Empty", key, `""`, "", ""},
			{"Lowercase", key, `"abcde1234f"`, "", msg},
			{"LowercaseLast", key, `"ABCDE1234f"`, "", msg},
			{"LowercaseFirst", key, `"aBCDE1234F"`, "", msg},
			{"DigitInLetters", key, `"ABCD11234F"`, "", msg},
			{"LetterAtSixth", key, `"ABCDEF234F"`, "", msg},
			{"LetterAtSeventh", key, `"ABCDE1X34F"`, "", msg},
			{"LetterAtEighth", key, `"ABCDE12X4F"`, "", msg},
			{"LetterAtNinth", key, `"ABCDE123XF"`, "", msg},
			{"DigitAtSecond", key, `"A1CDE1234F"`, "", msg},
			{"DigitAtFifth", key, `"ABCD51234F"`, "", msg},
			{"DigitLast", key, `"ABCDE12345"`, "", msg},
			{"DigitFirst", key, `"1BCDE1234F"`, "", msg},
			{"NineCharacters", key, `"ABCDE123F"`, "", msg},
			{"ElevenCharacters", key, `"ABCDE1234FG"`, "", msg},
			{"LeadingSpace", key, `" ABCDE1234F"`, "", msg},
			{"Blank", key, `" "`, "", msg},
			{"TenBytesNonASCII", key, jstr("ÉBCD1234F"), "", msg},
			{"FullwidthDigit", key, jstr("ABCDE１234F"), "", msg},
			{"Dashes", key, `"ABCDE-1234-F"`, "", msg},
		}
	})
}

func TestValidateUnknownKeys(t *testing.T) {
	cases := []struct {
		name    string
		changes []member
		want    []FieldError
	}{
		{"MistypedPAN", []member{{"firstPartyPAN", `"ABCDE1234F"`}},
			[]FieldError{{Path: "firstPartyPAN", Message: "firstPartyPAN is not an allowed field"}}},
		{"WrongCase", []member{{"Amount", `200`}},
			[]FieldError{{Path: "Amount", Message: "Amount is not an allowed field"}}},
		{"NullValue", []member{{"id", `null`}},
			[]FieldError{{Path: "id", Message: "id is not an allowed field"}}},
		{"SnakeCase", []member{{"paid_by", `"First Party"`}},
			[]FieldError{{Path: "paid_by", Message: "paid_by is not an allowed field"}}},
		{"EmptyKey", []member{{"", `1`}},
			[]FieldError{{Path: "", Message: " is not an allowed field"}}},
		{"InBodyOrder", []member{{"zeta", `1`}, {"alpha", `[]`}, {"mid", `{}`}},
			[]FieldError{
				{Path: "zeta", Message: "zeta is not an allowed field"},
				{Path: "alpha", Message: "alpha is not an allowed field"},
				{Path: "mid", Message: "mid is not an allowed field"},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := validateBody(t, buildBody(fullMembers, tc.changes...))
			checkInvalid(t, err, tc.want)
		})
	}
	t.Run("EscapedKnownKeyIsKnown", func(t *testing.T) {
		body := buildBody(fullMembers, member{"amount", omit})
		body = append(body[:len(body)-1], []byte(`,"\u0061mount":7}`)...)
		got, err := validateBody(t, body)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := got.Amount, int64(7); got != want {
			t.Errorf("amount = %d, want %d", got, want)
		}
	})
	t.Run("EscapedUnknownKeyReportedUnescaped", func(t *testing.T) {
		body := buildBody(fullMembers)
		body = append(body[:len(body)-1], []byte(`,"\ud83d\ude00":1}`)...)
		_, err := validateBody(t, body)
		checkInvalid(t, err, []FieldError{{Path: "😀", Message: "😀 is not an allowed field"}})
	})
}

func TestValidateAllFailuresAtOnce(t *testing.T) {
	// Keys in a shuffled order, unknown keys first: errors still come in the
	// contract's order, then the unknown keys in body order.
	body := `{
		"zzz": 1,
		"secondPartyPan": 5,
		"firstPartyPAN": "ABCDE1234F",
		"firstPartyPan": "abc",
		"secondPartyAddress": "` + strings.Repeat("a", 121) + `",
		"firstPartyAddress": "#1",
		"secondPartyName": "Ann_e",
		"firstPartyName": "` + strings.Repeat("a", 41) + `",
		"firstPartyMobileNumber": "123",
		"purchasedBy": "\u0007",
		"paidBy": "Me",
		"state": "Atlantis",
		"purpose": "  ",
		"description": "<b>",
		"considerationPrice": -1,
		"amount": "x"
	}`
	_, err := validateBody(t, []byte(body))
	want := []FieldError{
		{Path: "amount", Message: "amount must be an integer"},
		{Path: "considerationPrice", Message: "considerationPrice must be greater than or equal to 0"},
		{Path: "description", Message: "description may only contain letters, digits, spaces and ! # @ $ * ( ) - + ; : , . ? /"},
		{Path: "purpose", Message: "purpose must not be empty"},
		{Path: "state", Message: "state must be one of the states or union territories of India"},
		{Path: "paidBy", Message: "paidBy must be one of: First Party, Second Party"},
		{Path: "purchasedBy", Message: "purchasedBy must not contain control, format, bidirectional, zero-width or line separator characters"},
		{Path: "firstPartyMobileNumber", Message: "firstPartyMobileNumber must be exactly 10 digits"},
		{Path: "firstPartyName", Message: "firstPartyName must be at most 40 characters"},
		{Path: "secondPartyName", Message: "secondPartyName may only contain letters, digits and spaces"},
		{Path: "firstPartyAddress", Message: `firstPartyAddress may only contain letters, digits, spaces and . / : , - \`},
		{Path: "secondPartyAddress", Message: "secondPartyAddress must be at most 120 characters"},
		{Path: "firstPartyPan", Message: "firstPartyPan must be empty or a PAN: 5 capital letters, 4 digits, 1 capital letter"},
		{Path: "secondPartyPan", Message: "secondPartyPan must be a string"},
		{Path: "zzz", Message: "zzz is not an allowed field"},
		{Path: "firstPartyPAN", Message: "firstPartyPAN is not an allowed field"},
	}
	checkInvalid(t, err, want)

	t.Run("EmptyObject", func(t *testing.T) {
		_, err := validateBody(t, []byte(`{}`))
		var want []FieldError
		for _, k := range []string{"amount", "considerationPrice", "purpose", "state", "paidBy", "firstPartyMobileNumber", "firstPartyName", "secondPartyName"} {
			want = append(want, FieldError{Path: k, Message: k + " is a required field"})
		}
		checkInvalid(t, err, want)
	})
}

func TestValidateMessagesNeverHoldTheValue(t *testing.T) {
	const secret = "Zq9Secret"
	var changes []member
	for _, key := range orderFieldNames {
		changes = append(changes, member{key, jstr(secret + "<\t>" + strings.Repeat("x", 130))})
	}
	changes = append(changes, member{"extra", jstr(secret)})
	_, err := validateBody(t, buildBody(fullMembers, changes...))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v", err)
	}
	if got, want := len(e.Fields), len(orderFieldNames)+1; got != want {
		t.Errorf("%d failing fields, want %d", got, want)
	}
	if strings.Contains(e.Message, secret) {
		t.Errorf("message holds the value: %q", e.Message)
	}
	for _, f := range e.Fields {
		if strings.Contains(f.Message, secret) {
			t.Errorf("field message holds the value: %q", f.Message)
		}
	}
}

// FuzzOrderBody checks the domain's side of a create on any JSON object:
// PurposeState sends only possible article keys to the lookup, Validate
// answers EINVALID with a message naming each failing field or a request
// within the contract's ranges, and Amount answers that request. The
// decoding itself is fuzzed by jsonobj.FuzzMembers and create-order's
// FuzzCreateOrder.
func FuzzOrderBody(f *testing.F) {
	for _, s := range []string{
		string(buildBody(fullMembers)),
		string(buildBody(minimalMembers)),
		`{}`, `[]`, `null`, `{"amount":1,"amount":2}`, `{"\u0061mount":1e999999}`,
		`{"purpose":"\ud83d\ude00","state":"\ud83d"}`, `{"x":[[[{"y":"]"}]]]}`,
		"{\"purpose\":\"\xff\"}", `{"amount":-0.0e-5,"considerationPrice":1E15}`,
	} {
		f.Add([]byte(s))
	}
	art := Article{ID: 1, PurposeName: "x", State: "Goa", Min: 0, Max: 1000}
	f.Fuzz(func(t *testing.T, body []byte) {
		fields, err := DecodeFields(body, 32)
		if err != nil {
			return
		}
		r := NewOrderBody(fields)
		p, s, ok, err := r.PurposeState()
		if err != nil && (!ok || ErrorCode(err) != ENOTFOUND) {
			t.Fatalf("PurposeState err = %v, ok = %v for %q", err, ok, body)
		}
		if ok && err == nil && !ValidArticleKey(p, s) {
			t.Fatalf("PurposeState sends (%q, %q), which no article can have, to the lookup", p, s)
		}
		if ok != (r.fields[fPurpose].Kind == String && r.fields[fState].Kind == String) {
			t.Fatalf("PurposeState ok = %v for %q", ok, body)
		}
		if ok && p != strings.TrimSpace(p) {
			t.Fatalf("purpose %q is not trimmed", p)
		}
		req, err := validated(r)
		if err != nil {
			assertInvalid(t, err)
			var e *Error
			errors.As(err, &e)
			for _, fe := range e.Fields {
				if !strings.HasPrefix(fe.Message, fe.Path+" ") {
					t.Fatalf("message %q does not name its field %q", fe.Message, fe.Path)
				}
			}
			return
		}
		if req.Purpose == "" || !ValidState(req.State) || req.Amount < 0 || req.Amount > MaxAmount ||
			req.ConsiderationPrice < 0 || req.ConsiderationPrice > MaxAmount {
			t.Fatalf("Validate accepted %+v", req)
		}
		if _, err := art.Amount(req.Amount, req.ConsiderationPrice); err != nil {
			assertInvalid(t, err)
		}
	})
}

// assertInvalid checks that err is an EINVALID *Error with fields.
func assertInvalid(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if e.Code != EINVALID {
		t.Fatalf("error %v has code %q, want %q", err, e.Code, EINVALID)
	}
	if len(e.Fields) == 0 {
		t.Fatalf("error %v has no fields", err)
	}
}
