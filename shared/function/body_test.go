package function

import (
	"errors"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
)

func TestDecodeObject(t *testing.T) {
	deep := func(n int) string { // an object holding arrays nested to depth n
		return `{"x":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`
	}
	bodyErr := func(msg string) []stampduty.FieldError { return []stampduty.FieldError{{Path: "", Message: msg}} }
	repeated := func(keys ...string) []stampduty.FieldError {
		var errs []stampduty.FieldError
		for _, k := range keys {
			errs = append(errs, stampduty.FieldError{Path: k, Message: k + " is given more than once"})
		}
		return errs
	}
	errorCases := []struct {
		name, body string
		want       []stampduty.FieldError
	}{
		{"InvalidUTF8", "\xff", bodyErr("The body is not valid UTF-8")},
		{"InvalidUTF8InString", "{\"purpose\":\"Rent\xc3\x28\"}", bodyErr("The body is not valid UTF-8")},
		{"Empty", "", bodyErr("The body is not valid JSON")},
		{"OnlySpace", "  \n", bodyErr("The body is not valid JSON")},
		{"Unterminated", `{"amount":1`, bodyErr("The body is not valid JSON")},
		{"TrailingComma", `{"amount":1,}`, bodyErr("The body is not valid JSON")},
		{"TwoValues", `{} {}`, bodyErr("The body is not valid JSON")},
		{"LeadingZero", `{"amount":01}`, bodyErr("The body is not valid JSON")},
		{"SingleQuotes", `{'amount':1}`, bodyErr("The body is not valid JSON")},
		{"BareWord", `nul`, bodyErr("The body is not valid JSON")},
		{"NaN", `{"amount":NaN}`, bodyErr("The body is not valid JSON")},
		{"BadEscape", `{"purpose":"\x"}`, bodyErr("The body is not valid JSON")},
		{"RawControlInString", "{\"purpose\":\"a\tb\"}", bodyErr("The body is not valid JSON")},
		{"TooDeepButNotJSON", deep(40) + "x", bodyErr("The body is not valid JSON")},
		{"Array", `[]`, bodyErr("The body must be a JSON object")},
		{"ArrayOfObject", `[{"amount":1}]`, bodyErr("The body must be a JSON object")},
		{"Null", `null`, bodyErr("The body must be a JSON object")},
		{"Number", ` 1 `, bodyErr("The body must be a JSON object")},
		{"String", `"{}"`, bodyErr("The body must be a JSON object")},
		{"Bool", `true`, bodyErr("The body must be a JSON object")},
		{"Depth33", deep(33), bodyErr("The body is nested too deeply")},
		{"Depth33Objects", `{"a":` + strings.Repeat(`{"a":`, 32) + "1" + strings.Repeat("}", 32) + `}`, bodyErr("The body is nested too deeply")},
		{"Depth33InKnownField", `{"purchasedBy":` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + `}`, bodyErr("The body is nested too deeply")},
		{"TooDeepBeforeDuplicate", `{"a":1,"a":2,"b":` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + `}`, bodyErr("The body is nested too deeply")},
		{"DuplicateKey", `{"amount":1,"amount":2}`, repeated("amount")},
		{"DuplicateKeySameValue", `{"state":"Goa","state":"Goa"}`, repeated("state")},
		{"DuplicateKeyEscaped", `{"amount":1,"\u0061mount":2}`, repeated("amount")},
		{"DuplicateUnknownKey", `{"x":1,"x":2}`, repeated("x")},
		{"DuplicateKeyThrice", `{"x":1,"x":2,"x":3}`, repeated("x")},
		{"DuplicateKeysInOrderOfRepeat", `{"b":1,"amount":1,"a":1,"a":2,"amount":2,"b":2}`, repeated("a", "amount", "b")},
	}
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := DecodeObject([]byte(tc.body))
			if ms != nil {
				t.Errorf("DecodeObject returned members with error %v", err)
			}
			var e *stampduty.Error
			if !errors.As(err, &e) {
				t.Fatalf("error = %v, want an *Error", err)
			}
			if got, want := e.Code, stampduty.EINVALID; got != want {
				t.Errorf("Code = %q, want %q", got, want)
			}
			if got, want := e.Fields, tc.want; !reflect.DeepEqual(got, want) {
				t.Errorf("Fields =\n%q\nwant\n%q", got, want)
			}
			if got, want := e.Message, stampduty.Invalid(tc.want).Message; got != want {
				t.Errorf("Message = %q, want %q", got, want)
			}
		})
	}
	t.Run("VeryDeepIsInvalid", func(t *testing.T) {
		_, err := DecodeObject([]byte(strings.Repeat("[", 20000) + strings.Repeat("]", 20000)))
		var e *stampduty.Error
		if !errors.As(err, &e) || e.Code != stampduty.EINVALID || len(e.Fields) != 1 || e.Fields[0].Path != "" {
			t.Errorf("error = %#v, want one EINVALID body error", err)
		}
	})

	for _, tc := range []struct{ name, body string }{
		{"Empty", `{}`},
		{"WhiteSpaceEverywhere", " \r\n\t{ \"amount\" : 1 ,\n\"state\"\t:\t\"Goa\" } \n"},
		{"Depth32", deep(32)},
		{"Depth32Objects", `{"a":` + strings.Repeat(`{"a":`, 30) + "1" + strings.Repeat("}", 30) + `}`},
		{"BracketsInsideStrings", `{"description":"` + strings.Repeat("[{", 40) + `","x":["]]]}}}\"[["]}`},
		{"KeysDifferingInCase", `{"amount":1,"Amount":2,"AMOUNT":3}`},
		{"AllKinds", `{"a":"s","b":1.5e3,"c":null,"d":true,"e":false,"f":{"g":[1,{"h":"}"}]},"i":[]}`},
	} {
		t.Run("Accepts/"+tc.name, func(t *testing.T) {
			if _, err := DecodeObject([]byte(tc.body)); err != nil {
				t.Errorf("DecodeObject(%s): %v", tc.body, err)
			}
		})
	}
	t.Run("MembersInBodyOrder", func(t *testing.T) {
		ms, err := DecodeObject([]byte(`{"zeta":1,"amount":"x","alpha":null}`))
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, m := range ms {
			keys = append(keys, m.Key)
		}
		if got, want := strings.Join(keys, ","), "zeta,amount,alpha"; got != want {
			t.Errorf("keys = %s, want %s", got, want)
		}
	})
}

func TestReadJSONBody(t *testing.T) {
	for _, tc := range []struct {
		name, ct string
		size     int
		code     stampduty.Code
	}{
		{"JSON", "application/json", 10, ""},
		{"JSONCharset", "application/json; charset=utf-8", 10, ""},
		{"VendorJSON", "application/vnd.api+json", 10, ""},
		{"NoContentType", "", 10, ""},
		{"AtLimit", "application/json", MaxBody, ""},
		{"OverLimit", "application/json", MaxBody + 1, stampduty.ETOOLARGE},
		{"TextPlain", "text/plain", 10, stampduty.EUNSUPPORTED},
		{"Form", "application/x-www-form-urlencoded", 10, stampduty.EUNSUPPORTED},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", tc.size)))
			if tc.ct != "" {
				r.Header.Set("Content-Type", tc.ct)
			}
			b, err := ReadJSONBody(r)
			if got := stampduty.ErrorCode(err); got != tc.code {
				t.Fatalf("code = %q, want %q", got, tc.code)
			}
			if err == nil && len(b) != tc.size {
				t.Errorf("read %d bytes, want %d", len(b), tc.size)
			}
		})
	}
	t.Run("UnknownLengthOverLimit", func(t *testing.T) {
		r := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", MaxBody+5)))
		r.ContentLength = -1
		if _, err := ReadJSONBody(r); stampduty.ErrorCode(err) != stampduty.ETOOLARGE {
			t.Errorf("err = %v", err)
		}
	})
}
