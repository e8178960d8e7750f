package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"stampduty/shared/function"
	"stampduty/shared/testkit/functest"
)

// hostileFields are the members of a valid order for Rent Agreement in
// Karnataka (range 100–500), as raw JSON, in body order. Every string field
// is non-empty, so that a character can be slipped into each.
var hostileFields = [][2]string{
	{"amount", `200`},
	{"considerationPrice", `0`},
	{"description", `"Rent for flat 4B"`},
	{"purpose", `"Rent Agreement"`},
	{"state", `"Karnataka"`},
	{"paidBy", `"First Party"`},
	{"purchasedBy", `"Asha Rao"`},
	{"firstPartyMobileNumber", `"9876543210"`},
	{"firstPartyName", `"Asha Rao"`},
	{"secondPartyName", `"Vikram Shah"`},
	{"firstPartyAddress", `"12, MG Road, Bengaluru - 560001"`},
	{"secondPartyAddress", `"7, Park Street, Kolkata - 700016"`},
	{"firstPartyPan", `"ABCDE1234F"`},
	{"secondPartyPan", `"PQRSV6789K"`},
}

// orderJSON returns the valid order with the members named in edits given
// the raw JSON values there instead; names that are not fields are added at
// the end, in the order given.
func orderJSON(edits ...[2]string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	add := func(k, v string) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", k, v)
	}
	for _, f := range hostileFields {
		for _, e := range edits {
			if e[0] == f[0] {
				f[1] = e[1]
			}
		}
		add(f[0], f[1])
	}
	for _, e := range edits {
		if !slices.ContainsFunc(hostileFields, func(f [2]string) bool { return f[0] == e[0] }) {
			add(e[0], e[1])
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// within returns the string value of a field with text inserted in its
// middle, as raw JSON.
func within(field, text string) string {
	for _, f := range hostileFields {
		if f[0] == field {
			v := f[1][1 : len(f[1])-1]
			return `"` + v[:len(v)/2] + text + v[len(v)/2:] + `"`
		}
	}
	panic("no string field " + field)
}

// badCharacter is, per string field, the answer to a character the field
// does not allow: the 400 message, or for purpose and state a 404, since
// the article is looked up first (decisions.md, step 3) and no article can
// have such a key.
var badCharacter = map[string]struct {
	status  int
	message string
}{
	"description":            {400, "description may only contain letters, digits, spaces and ! # @ $ * ( ) - + ; : , . ? /"},
	"paidBy":                 {400, "paidBy must be one of: First Party, Second Party"},
	"purchasedBy":            {400, "purchasedBy must not contain control, format, bidirectional, zero-width or line separator characters"},
	"firstPartyMobileNumber": {400, "firstPartyMobileNumber must be exactly 10 digits"},
	"firstPartyName":         {400, "firstPartyName may only contain letters, digits and spaces"},
	"secondPartyName":        {400, "secondPartyName may only contain letters, digits and spaces"},
	"firstPartyAddress":      {400, `firstPartyAddress may only contain letters, digits, spaces and . / : , - \`},
	"secondPartyAddress":     {400, `secondPartyAddress may only contain letters, digits, spaces and . / : , - \`},
	"firstPartyPan":          {400, "firstPartyPan must be empty or a PAN: 5 capital letters, 4 digits, 1 capital letter"},
	"secondPartyPan":         {400, "secondPartyPan must be empty or a PAN: 5 capital letters, 4 digits, 1 capital letter"},
	"purpose":                {404, ""},
	"state":                  {404, "Purpose with the name: Rent Agreement cannot be found."},
}

// hostileCase is a request body and the exact answer it must get.
type hostileCase struct {
	name    string
	body    []byte
	chunked bool     // no Content-Length
	status  int      // the HTTP status, and error.status
	message string   // error.message
	paths   []string // the paths of details.errors; nil when there are none
}

// Messages of the body-level errors.
const (
	notJSON   = "Invalid data. The body is not valid JSON"
	notObject = "Invalid data. The body must be a JSON object"
	notUTF8   = "Invalid data. The body is not valid UTF-8"
	tooDeep   = "Invalid data. The body is nested too deeply"
	tooLarge  = "The request body is larger than 64 KiB"
)

// invalidField is the 400 case of one failing field.
func invalidField(name string, body []byte, field, msg string) hostileCase {
	return hostileCase{name, body, false, 400, "Invalid data. " + field + msg, []string{field}}
}

// invalidBody is the 400 case of a body-level error (details path []).
func invalidBody(name string, body []byte, msg string) hostileCase {
	return hostileCase{name, body, false, 400, msg, []string{""}}
}

// nested returns depth levels of open, then inner, then depth levels of close.
func nested(open, inner, close string, depth int) string {
	return strings.Repeat(open, depth) + inner + strings.Repeat(close, depth)
}

// padded returns body with spaces around it up to exactly n bytes.
func padded(body []byte, n int) []byte {
	pad := n - len(body)
	return slices.Concat(bytes.Repeat([]byte(" "), pad/2), body, bytes.Repeat([]byte(" "), pad-pad/2))
}

// hostileCases are the hostile bodies and their answers: never a 5xx, never
// an order stored.
func hostileCases() []hostileCase {
	valid := orderJSON()
	cases := []hostileCase{
		// Nesting. 100,000 levels are over 64 KiB, so they never reach a parser.
		{"ArrayNesting100000IsTooLarge", []byte(strings.Repeat("[", 100000)), false, 413, tooLarge, nil},
		{"ArrayNesting100000ChunkedIsTooLarge", []byte(strings.Repeat("[", 100000)), true, 413, tooLarge, nil},
		invalidBody("ArrayNesting32000IsNotJSON", []byte(nested("[", "", "]", 32000)), notJSON), // beyond encoding/json's 10,000
		invalidBody("ArrayNesting5000IsNotAnObject", []byte(nested("[", "", "]", 5000)), notObject),
		invalidBody("ObjectNesting5000AsFieldValue", orderJSON([2]string{"purpose", nested(`{"$ne":`, "null", "}", 5000)}), tooDeep),
		invalidBody("ArrayNesting5000AsFieldValue", orderJSON([2]string{"amount", nested("[", "1", "]", 5000)}), tooDeep),
		invalidBody("ObjectNesting32AsFieldValue", orderJSON([2]string{"purpose", nested(`{"a":`, "1", "}", 32)}), tooDeep),
		invalidField("ObjectNesting31AsFieldValue", orderJSON([2]string{"purpose", nested(`{"a":`, "1", "}", 31)}), "purpose", " must be a string"),
		invalidBody("UnknownFieldNestedTooDeep", orderJSON([2]string{"x", nested("[", "", "]", 32)}), tooDeep),

		// Numbers past every limit.
		invalidField("Amount1e400", orderJSON([2]string{"amount", "1e400"}), "amount", " must be at most 999999999999999"),
		invalidField("Amount400Digits", orderJSON([2]string{"amount", "1" + strings.Repeat("0", 399)}), "amount", " must be at most 999999999999999"),
		invalidField("AmountMinus1e400", orderJSON([2]string{"amount", "-1e400"}), "amount", " must be greater than or equal to 0"),
		invalidField("AmountHugeExponent", orderJSON([2]string{"amount", "1E+99999999999999999999999"}), "amount", " must be at most 999999999999999"),
		invalidField("Amount1eMinus400", orderJSON([2]string{"amount", "1e-400"}), "amount", " must be an integer"),
		invalidField("AmountFractionAfter400Zeros", orderJSON([2]string{"amount", "200." + strings.Repeat("0", 400) + "1"}), "amount", " must be an integer"),
		invalidField("ConsiderationPrice1e400", orderJSON([2]string{"considerationPrice", "1e400"}), "considerationPrice", " must have at most 15 digits"),
		invalidField("ConsiderationPriceMinus1e400", orderJSON([2]string{"considerationPrice", "-1e400"}), "considerationPrice", " must be greater than or equal to 0"),

		// NUL bytes outside \u escapes are not JSON.
		invalidBody("RawNULInString", orderJSON([2]string{"firstPartyName", "\"Asha\x00Rao\""}), notJSON),
		invalidBody("RawNULBetweenMembers", bytes.Replace(valid, []byte(","), []byte(",\x00"), 1), notJSON),
		invalidBody("RawNULAfterObject", append(slices.Clone(valid), 0), notJSON),
		invalidBody("RawNULOnly", []byte{0}, notJSON),

		// Invalid UTF-8 is refused before anything else.
		invalidBody("RawFFInString", orderJSON([2]string{"firstPartyName", "\"Asha\xffRao\""}), notUTF8),
		invalidBody("RawFFInPurpose", orderJSON([2]string{"purpose", "\"\xff\xfe\""}), notUTF8),
		invalidBody("RawFFOutsideStrings", append([]byte{0xff}, valid...), notUTF8),
		invalidBody("EncodedSurrogateBytes", orderJSON([2]string{"purchasedBy", "\"\xed\xa0\x80\""}), notUTF8),
		invalidBody("OverlongEncoding", orderJSON([2]string{"purchasedBy", "\"\xc0\xaf\""}), notUTF8),
		invalidBody("TruncatedSequence", orderJSON([2]string{"description", "\"Rent \xe2\x82\""}), notUTF8),

		// Duplicate keys, also when escaped differently.
		invalidField("DuplicateAmount", orderJSON([2]string{"amount", "200,\"amount\":200"}), "amount", " is given more than once"),
		invalidField("DuplicateEscapedKey", orderJSON([2]string{"amount", `200,"\u0061mount":200`}), "amount", " is given more than once"),
		invalidField("DuplicateUnknownKey", orderJSON([2]string{"x", `1,"x":2`}), "x", " is given more than once"),
		{"DuplicatePurposeAndState", orderJSON([2]string{"purpose", `"Rent Agreement","purpose":"Affidavit"`}, [2]string{"state", `"Karnataka","state":"Delhi"`}),
			false, 400, "Invalid data. purpose is given more than once; state is given more than once", []string{"purpose", "state"}},

		// Operator-like objects are neither strings nor numbers.
		invalidField("OperatorNeInPurpose", orderJSON([2]string{"purpose", `{"$ne": null}`}), "purpose", " must be a string"),
		invalidField("OperatorGtInAmount", orderJSON([2]string{"amount", `{"$gt": 0}`}), "amount", " must be an integer"),
		invalidField("OperatorInInState", orderJSON([2]string{"state", `{"$in": ["Karnataka", "Delhi"]}`}), "state", " must be a string"),
		invalidField("OperatorRegexInName", orderJSON([2]string{"firstPartyName", `{"$regex": ".*"}`}), "firstPartyName", " must be a string"),
		invalidField("OperatorWhere", orderJSON([2]string{"$where", `"1 == 1"`}), "$where", " is not an allowed field"),
		invalidField("ProtoKey", orderJSON([2]string{"__proto__", `{"admin": true}`}), "__proto__", " is not an allowed field"),

		// Arrays instead of objects.
		invalidBody("ArrayOfTheOrder", slices.Concat([]byte("["), valid, []byte("]")), notObject),
		invalidBody("EmptyArray", []byte(`[]`), notObject),
		invalidField("ArrayForPurpose", orderJSON([2]string{"purpose", `["Rent Agreement"]`}), "purpose", " must be a string"),
		invalidField("ArrayForAmount", orderJSON([2]string{"amount", `[200]`}), "amount", " must be an integer"),

		// Bodies that are not objects at all.
		invalidBody("Null", []byte(`null`), notObject),
		invalidBody("NullWithSpaces", []byte(" \n null \t"), notObject),
		invalidBody("String", []byte(`"{}"`), notObject),
		invalidBody("Number", []byte(`0`), notObject),
		invalidBody("True", []byte(`true`), notObject),
		invalidBody("Empty", []byte(``), notJSON),
		invalidBody("OnlySpaces", []byte("  \r\n\t "), notJSON),

		// The 64 KiB limit, with and without a declared length.
		{"OneByteOver64KiB", padded(valid, function.MaxBody+1), false, 413, tooLarge, nil},
		{"OneByteOver64KiBChunked", padded(valid, function.MaxBody+1), true, 413, tooLarge, nil},

		// Things around the object.
		invalidBody("ByteOrderMark", append([]byte("\xef\xbb\xbf"), valid...), notJSON),
		invalidBody("TrailingGarbage", append(slices.Clone(valid), 'x'), notJSON),
		invalidBody("TrailingBrace", append(slices.Clone(valid), '}'), notJSON),
		invalidBody("TwoObjects", slices.Concat(valid, valid), notJSON),
		invalidBody("TwoObjectsOnTwoLines", slices.Concat(valid, []byte("\n"), valid), notJSON),
		invalidBody("TrailingComma", append(valid[:len(valid)-1:len(valid)-1], ",}"...), notJSON),
	}

	// Inside each string field, what a legal document must not carry
	// (decisions.md): a \u0000, a lone UTF-16 surrogate (which
	// encoding/json would silently read as U+FFFD), bidirectional controls,
	// zero-width characters, line separators and a byte-order mark, escaped
	// or as they are. Even purchasedBy and purpose, "any character", refuse
	// them; for purpose the refusal is the 404 of a purpose no article has.
	for _, f := range hostileFields {
		want, ok := badCharacter[f[0]]
		if !ok {
			continue
		}
		for _, bad := range []struct{ name, text string }{
			{"NULEscape", `\u0000`}, {"LoneHighSurrogate", `\ud800`}, {"LoneLowSurrogate", `\udfff`}, {"HighSurrogateThenA", `\ud800\u0041`},
			{"RightToLeftOverride", "\u202e"}, {"RightToLeftOverrideEscape", `\u202E`}, {"LeftToRightIsolate", "\u2066"},
			{"ZeroWidthSpace", "\u200b"}, {"ZeroWidthJoinerEscape", `\u200d`}, {"WordJoiner", "\u2060"},
			{"LineSeparator", "\u2028"}, {"ParagraphSeparatorEscape", `\u2029`}, {"ByteOrderMark", "\ufeff"},
		} {
			value := within(f[0], bad.text)
			c := hostileCase{name: bad.name + "In_" + f[0], body: orderJSON([2]string{f[0], value}), status: want.status, message: want.message}
			switch {
			case want.status == 400:
				c.message, c.paths = "Invalid data. "+want.message, []string{f[0]}
			case f[0] == "purpose":
				c.message = "Purpose with the name: " + decodedPurpose(value) + " cannot be found."
			}
			cases = append(cases, c)
		}
	}
	// Free text is at most 200 characters (decisions.md): a longer
	// purchasedBy is a 400, a longer purpose a 404 decided without a lookup.
	long := strings.Repeat("a", 201)
	cases = append(cases,
		hostileCase{name: "PurchasedByLongerThan200Characters", body: orderJSON([2]string{"purchasedBy", `"` + long + `"`}),
			status: 400, message: "Invalid data. purchasedBy must be at most 200 characters", paths: []string{"purchasedBy"}},
		hostileCase{name: "PurchasedBy65KB", body: orderJSON([2]string{"purchasedBy", `"` + strings.Repeat("<", 65000) + `"`}),
			status: 400, message: "Invalid data. purchasedBy must be at most 200 characters", paths: []string{"purchasedBy"}},
		hostileCase{name: "PurposeLongerThan200Characters", body: orderJSON([2]string{"purpose", `"` + long + `"`}),
			status: 404, message: "Purpose with the name: " + long + " cannot be found."},
	)
	return cases
}

// decodedPurpose is what the service makes of the raw purpose value in its
// 404 message: its escapes decoded the way encoding/json decodes them, a
// lone surrogate as U+FFFD.
func decodedPurpose(raw string) string {
	var s string
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		panic(err)
	}
	return strings.TrimSpace(s)
}

// TestHostileBodies sends each hostile body, with a valid token and
// Content-Type, and checks the exact status and envelope, and that nothing
// was stored.
func TestHostileBodies(t *testing.T) {
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			s := newFuzzService(t)
			w := s.post(fuzzAuthHeaders[0], "application/json", tc.body, tc.chunked)
			if got, want := w.Code, tc.status; got != want {
				t.Fatalf("status = %d, want %d: %.300s", got, want, w.Body.Bytes())
			}
			e := functest.CheckEnvelope(t, w.Code, w.Body.Bytes())
			if got, want := e.Error.Message, tc.message; got != want {
				t.Errorf("message = %q\n want %q", got, want)
			}
			if got, want := e.Paths(), tc.paths; !slices.Equal(got, want) {
				t.Errorf("detail paths = %q, want %q", got, want)
			}
			if got := len(s.orders.Created()); got != 0 {
				t.Errorf("%d orders stored, want none", got)
			}
		})
	}
}

// TestHostileAccepted covers hostile-looking bodies that are valid orders:
// each is created once, as it would be without the hostile part.
func TestHostileAccepted(t *testing.T) {
	valid := orderJSON()
	for _, tc := range []struct {
		name    string
		body    []byte
		chunked bool
		check   func(t *testing.T, s *fuzzService)
	}{
		{name: "Exactly64KiBOfSpacesAroundTheObject", body: padded(valid, function.MaxBody)},
		{name: "Exactly64KiBChunked", body: padded(valid, function.MaxBody), chunked: true},
		{
			// U+FFFD sent as itself is a symbol like any other; it is stored
			// exactly as sent (a lone surrogate, which would also read as
			// U+FFFD, is refused: see hostileCases).
			name: "ReplacementCharacterInPurchasedByIsStoredAsSent",
			body: orderJSON([2]string{"purchasedBy", `"Asha \ufffd"`}),
			check: func(t *testing.T, s *fuzzService) {
				if got, want := s.orders.Created()[0].Order.StampDuty.PurchasedBy, "Asha \uFFFD"; got != want {
					t.Errorf("purchasedBy stored as %q, want %q", got, want)
				}
			},
		},
		{
			// Names in Indian scripts need combining marks (virama, matras);
			// they are letters and marks, not the characters refused.
			name: "IndianScriptsInPurchasedByAreStoredAsSent",
			body: orderJSON([2]string{"purchasedBy", `"श्रीमती प्रिया शर्मा, ಕನ್ನಡ"`}),
			check: func(t *testing.T, s *fuzzService) {
				if got, want := s.orders.Created()[0].Order.StampDuty.PurchasedBy, "श्रीमती प्रिया शर्मा, ಕನ್ನಡ"; got != want {
					t.Errorf("purchasedBy stored as %q, want %q", got, want)
				}
			},
		},
		{
			name: "PurchasedByAt200CharactersIsStoredAsSent",
			body: orderJSON([2]string{"purchasedBy", `"` + strings.Repeat("😀", 200) + `"`}),
			check: func(t *testing.T, s *fuzzService) {
				if got, want := s.orders.Created()[0].Order.StampDuty.PurchasedBy, strings.Repeat("😀", 200); got != want {
					t.Errorf("purchasedBy stored as %q, want %q", got, want)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFuzzService(t)
			w := s.post(fuzzAuthHeaders[0], "application/json", tc.body, tc.chunked)
			if got, want := w.Code, 200; got != want {
				t.Fatalf("status = %d, want %d: %.300s", got, want, w.Body.Bytes())
			}
			checkCreated(t, s, w.Body.Bytes())
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}
