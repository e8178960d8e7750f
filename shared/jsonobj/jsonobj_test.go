package jsonobj

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMembers(t *testing.T) {
	t.Run("KindsKept", func(t *testing.T) {
		got, err := Members([]byte(`{"a":"1","b":null,"c":[1,"]"],"d":{"a":"}"},"e":true,"f":false,"g":-2.5e1,"h":""}`), math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		want := []Member{
			{"a", Value{Kind: String, Text: "1"}, 1},
			{"b", Value{Kind: Null}, 1},
			{"c", Value{Kind: Array, Raw: []byte(`[1,"]"]`)}, 1},
			{"d", Value{Kind: Object, Raw: []byte(`{"a":"}"}`)}, 1},
			{"e", Value{Kind: Bool, Bool: true}, 1},
			{"f", Value{Kind: Bool}, 1},
			{"g", Value{Kind: Number, Number: "-2.5e1"}, 1},
			{"h", Value{Kind: String}, 1},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Members =\n%+v\nwant\n%+v", got, want)
		}
	})
	t.Run("NumbersAsSent", func(t *testing.T) {
		for _, lit := range []string{"0", "-0", "200.0", "1e400", "-1E-400", "99999999999999999999999", "0.000000000000000000001"} {
			got, err := Members([]byte(`{"n":`+lit+`}`), math.MaxInt)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := got[0].Value, (Value{Kind: Number, Number: json.Number(lit)}); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: value = %+v, want %+v", lit, got, want)
			}
		}
	})
	t.Run("RepeatedKeysCounted", func(t *testing.T) {
		got, err := Members([]byte(`{"b":1,"a":1,"\u0061":2,"b":2,"a":3,"A":1}`), math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		var occurrences []int
		for _, m := range got {
			keys = append(keys, m.Key)
			occurrences = append(occurrences, m.Occurrence)
		}
		if got, want := keys, []string{"b", "a", "a", "b", "a", "A"}; !reflect.DeepEqual(got, want) {
			t.Errorf("keys = %q, want %q", got, want)
		}
		if got, want := occurrences, []int{1, 1, 2, 2, 3, 1}; !reflect.DeepEqual(got, want) {
			t.Errorf("occurrences = %v, want %v", got, want)
		}
	})
	t.Run("RepeatedKeysCountedInALargeObject", func(t *testing.T) {
		// 40 keys, then k0, k39 and k0 again: past the members Members
		// looks back through.
		var b strings.Builder
		b.WriteString("{")
		for i := range 40 {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		b.WriteString(`"k0":1,"k39":1,"k0":2}`)
		got, err := Members([]byte(b.String()), math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		var occurrences []int
		for _, m := range got[38:] {
			occurrences = append(occurrences, m.Occurrence)
		}
		if got, want := occurrences, []int{1, 1, 2, 2, 3}; !reflect.DeepEqual(got, want) {
			t.Errorf("occurrences of k38, k39, k0, k39, k0 = %v, want %v", got, want)
		}
	})
	t.Run("EmptyObject", func(t *testing.T) {
		got, err := Members([]byte(" \r\n\t{ } \n"), math.MaxInt)
		if err != nil || len(got) != 0 {
			t.Errorf("Members({}) = %v, %v; want no members", got, err)
		}
	})
}

func TestMembersErrors(t *testing.T) {
	// an object holding arrays nested to depth n
	deep := func(n int) string { return `{"x":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}` }
	cases := []struct {
		name, data string
		want       error
	}{
		{"NotUTF8BeforeNotJSON", "{\"a\":\"\xff\"", ErrNotUTF8},
		{"NotJSONBeforeNotObject", `[1,`, ErrNotJSON},
		{"NotJSONBeforeTooDeep", deep(40)[:len(deep(40))-1], ErrNotJSON},
		{"TwoObjects", `{} {}`, ErrNotJSON},
		{"NotAnObject", `[{"a":1}]`, ErrNotObject},
		{"Depth33", deep(33), ErrTooDeep},
		{"Depth33Objects", `{"a":` + strings.Repeat(`{"a":`, 32) + "1" + strings.Repeat("}", 32) + `}`, ErrTooDeep},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := Members([]byte(tc.data), 32)
			if !errors.Is(err, tc.want) {
				t.Errorf("Members = %v, %v; want %v", ms, err, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, data string }{
		{"Depth32", deep(32)},
		{"Depth32Objects", `{"a":` + strings.Repeat(`{"a":`, 30) + "1" + strings.Repeat("}", 30) + `}`},
		{"BracketsInsideStrings", `{"d":"` + strings.Repeat("[{", 40) + `","x":["]]]}}}\"[["]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Members([]byte(tc.data), 32); err != nil {
				t.Errorf("Members: %v", err)
			}
		})
	}
}

// TestStringsDecodedLikeEncodingJSON: the text of a string is what
// encoding/json makes of it, and a lone surrogate, which it decodes as
// U+FFFD, is flagged.
func TestStringsDecodedLikeEncodingJSON(t *testing.T) {
	cases := []struct {
		name, raw string
		lone      bool
	}{
		{"Plain", `abc`, false},
		{"Simple", `\"\\\/\b\f\n\r\t`, false},
		{"BMP", `\u0041\u00e9\u20ac`, false},
		{"UpperHex", `\u00E9\u20AC`, false},
		{"SurrogatePair", `\ud83d\ude00`, false},
		{"SurrogatePairUpper", `\uD83D\uDE00`, false},
		{"LoneHigh", `\ud83d`, true},
		{"LoneHighThenText", `\ud83dx`, true},
		{"LoneLow", `\ude00`, true},
		{"HighThenBMP", `\ud83d\u0041`, true},
		{"HighHigh", `\ud83d\ud83d\ude00`, true},
		{"LowHigh", `\ude00\ud83d`, true},
		{"HighThenSimpleEscape", `\ud83d\n`, true},
		{"Nul", `a\u0000b`, false},
		{"Mixed", `Flat 4B\\Tower \u0032 \u00e9 😀`, false},
		{"ReplacementCharacterAsSent", "Rent \uFFFD", false},
		{"ReplacementCharacterEscaped", `Rent \ufffd`, false},
		{"EscapedBackslashBeforeU", `\\ud800`, false},
		{"ReplacementCharacterThenLone", `\ufffd\udfff`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var want string
			if err := json.Unmarshal([]byte(`"`+tc.raw+`"`), &want); err != nil {
				t.Fatal(err)
			}
			ms, err := Members([]byte(`{"s":"`+tc.raw+`"}`), math.MaxInt)
			if err != nil {
				t.Fatal(err)
			}
			v := ms[0].Value
			if got := v.Text; got != want {
				t.Errorf("text of %s = %q, want %q", tc.raw, got, want)
			}
			if got, want := v.LoneSurrogate, tc.lone; got != want {
				t.Errorf("LoneSurrogate of %s = %v, want %v", tc.raw, got, want)
			}
		})
	}
	t.Run("KeysDecoded", func(t *testing.T) {
		ms, err := Members([]byte(`{"\u0061mount":1,"\ud83d\ude00":2}`), math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ms[0].Key+" "+ms[1].Key, "amount 😀"; got != want {
			t.Errorf("keys = %q, want %q", got, want)
		}
	})
}

// FuzzMembers checks Members against encoding/json: it accepts exactly the
// JSON objects, finds the members json.Unmarshal finds, with the same
// texts and number literals, and flags a lone surrogate only in a text
// where encoding/json wrote U+FFFD.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{
		`{"amount":200,"considerationPrice":100000,"purpose":"  Rent Agreement  ","state":"Karnataka"}`,
		`{}`, `[]`, `null`, `{"amount":1,"amount":2}`, `{"\u0061mount":1e999999}`,
		`{"purpose":"\ud83d\ude00","state":"\ud83d"}`, `{"x":[[[{"y":"]"}]]]}`,
		"{\"purpose\":\"\xff\"}", `{"amount":-0.0e-5,"considerationPrice":1E15}`,
		`{"s":"\\ud800\ufffd\udfff"}`, `{} {}`, `{"a":1 "b":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := Members(data, 32)
		var m map[string]json.RawMessage
		jsonErr := json.Unmarshal(data, &m)
		switch {
		case errors.Is(err, ErrNotUTF8):
			if utf8.Valid(data) {
				t.Fatalf("ErrNotUTF8 for UTF-8 %q", data)
			}
			return
		case errors.Is(err, ErrNotJSON):
			if json.Valid(data) {
				t.Fatalf("ErrNotJSON for JSON %q", data)
			}
			return
		case errors.Is(err, ErrNotObject):
			if !json.Valid(data) || jsonErr == nil && m != nil {
				t.Fatalf("ErrNotObject for %q", data)
			}
			return
		case errors.Is(err, ErrTooDeep):
			if !json.Valid(data) {
				t.Fatalf("ErrTooDeep for %q, which is not JSON", data)
			}
			return
		case err != nil:
			t.Fatalf("Members(%q): %v", data, err)
		}
		if jsonErr != nil || m == nil {
			t.Fatalf("Members accepts %q, encoding/json says %v", data, jsonErr)
		}
		first := map[string]bool{}
		for _, mem := range ms {
			raw, ok := m[mem.Key]
			if !ok {
				t.Fatalf("key %q invented in %q", mem.Key, data)
			}
			if mem.Occurrence == 1 {
				first[mem.Key] = true
			}
			if mem.Occurrence > 1 && !first[mem.Key] {
				t.Fatalf("key %q: occurrence %d before its first in %q", mem.Key, mem.Occurrence, data)
			}
			// encoding/json keeps the last value of a repeated key.
			last := true
			for _, later := range ms {
				last = last && !(later.Key == mem.Key && later.Occurrence > mem.Occurrence)
			}
			if !last {
				continue
			}
			v := mem.Value
			switch v.Kind {
			case String:
				var s string
				if err := json.Unmarshal(raw, &s); err != nil {
					t.Fatalf("%q is not a string in %q", mem.Key, data)
				}
				if v.Text != s {
					t.Fatalf("%q = %q, encoding/json says %q", mem.Key, v.Text, s)
				}
				if v.LoneSurrogate && !strings.ContainsRune(s, utf8.RuneError) {
					t.Fatalf("%q flagged as a lone surrogate in %q", mem.Key, data)
				}
				if !strings.Contains(string(raw), `\u`) && v.LoneSurrogate {
					t.Fatalf("%q flagged without an escape in %q", mem.Key, data)
				}
			case Number:
				if string(v.Number) != string(raw) {
					t.Fatalf("%q = %s, encoding/json says %s", mem.Key, v.Number, raw)
				}
			default:
				var want Kind
				switch raw[0] {
				case 'n':
					want = Null
				case 't', 'f':
					want = Bool
				case '{':
					want = Object
				case '[':
					want = Array
				}
				if v.Kind != want || v.Kind == Bool && v.Bool != (raw[0] == 't') {
					t.Fatalf("%q = %+v, encoding/json says %s", mem.Key, v, raw)
				}
			}
		}
		if got, want := len(first), len(m); got != want {
			t.Fatalf("%d keys, encoding/json says %d, in %q", got, want, data)
		}
	})
}
