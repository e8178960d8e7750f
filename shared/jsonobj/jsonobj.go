// Package jsonobj reads the members of one JSON object with encoding/json,
// for the readers of JSON from outside: request bodies and the articles
// catalogue file. They need what a struct and json.Unmarshal do not give:
// every member in order, with the JSON type of its value (so that a field
// can say "must be a string" or "is a required field"), numbers as their
// exact literal (json.Number), repeated keys, a nesting limit, and strings
// that escape a lone UTF-16 surrogate. It imports only the standard
// library.
//
// Why encoding/json and not encoding/json/jsontext, which has token kinds,
// StackDepth and SkipValue. In go1.26.8 jsontext is built only with
// GOEXPERIMENT=jsonv2: without it `go doc encoding/json/jsontext` cannot
// find the package and importing it fails with "build constraints exclude
// all Go files". Every build of a function (the Makefile, sam build, go test)
// would have to set the experiment, for an API the Go team may still change;
// github.com/go-json-experiment/json, its module twin, says the same of
// itself. Tested with the experiment on, jsontext would not remove the
// code that matters here either: by default it refuses {"a":1,"a":2}
// ("duplicate object member name") and "\ud800" ("invalid surrogate pair"),
// where the API answers a repeated key or a lone surrogate with the field's
// own message, so both must be allowed (AllowDuplicateNames,
// AllowInvalidUTF8); it then decodes "\ud800" to U+FFFD as encoding/json
// does, so loneSurrogate stays, as do Occurrence and the order of
// precedence of the errors. Revisit when jsontext leaves the experiment.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JSON type of a value.
type Kind uint8

// The JSON types; Absent is a key that is not in the object.
const (
	Absent Kind = iota
	String
	Number
	Null
	Bool
	Object
	Array
)

// Value is the value of one member, as encoding/json decodes it.
type Value struct {
	Kind Kind
	// Text is a String's text, its escapes decoded.
	Text string
	// Number is a Number's literal, exactly as sent.
	Number json.Number
	// Bool is a Bool's value.
	Bool bool
	// LoneSurrogate reports a String whose escapes name a lone UTF-16
	// surrogate, such as "\ud800": encoding/json decodes it as U+FFFD, so
	// Text is then not the text that was sent.
	LoneSurrogate bool
	// Raw is an Object's or an Array's JSON text, as sent (a slice of the
	// data read): for a member whose value is a document of its own, such
	// as an article's duty_rules.
	Raw []byte
}

// Member is one member of an object.
type Member struct {
	// Key is the member's name, its escapes decoded.
	Key   string
	Value Value
	// Occurrence counts the members with this key so far: 1 for its first
	// member, 2 for the one that repeats it, and so on.
	Occurrence int
}

// The errors of Members.
var (
	ErrNotUTF8   = errors.New("not valid UTF-8")
	ErrNotJSON   = errors.New("not valid JSON")
	ErrNotObject = errors.New("not a JSON object")
	ErrTooDeep   = errors.New("nested too deeply")
)

// Members returns the members of the JSON object data holds, in order, a
// repeated key at each of its places. The object itself is at depth 1; a
// value nested deeper than maxDepth is ErrTooDeep. Data that is not UTF-8,
// not JSON (one value, white space around it) or not an object is
// ErrNotUTF8, ErrNotJSON or ErrNotObject, in that order of precedence
// wherever the faults are: JSON text that breaks off after a nesting too
// deep is not JSON.
func Members(data []byte, maxDepth int) ([]Member, error) {
	// encoding/json turns bytes that are not UTF-8 into U+FFFD.
	if !utf8.Valid(data) {
		return nil, ErrNotUTF8
	}
	ms, err := members(data, maxDepth)
	// The decoder stops at the first fault it meets; look at the whole
	// text only then, to keep json.Valid's pass off the common path.
	if err != nil && !json.Valid(data) {
		return nil, ErrNotJSON
	}
	return ms, err
}

// members is Members on UTF-8 data.
func members(data []byte, maxDepth int) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil {
		return nil, ErrNotJSON
	} else if tok != json.Delim('{') {
		return nil, ErrNotObject
	}
	var (
		ms   = make([]Member, 0, 16)
		seen map[string]int // occurrences by key, in an object of many members
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, ErrNotJSON
		}
		key, _ := tok.(string)
		v, err := value(dec, data, maxDepth)
		if err != nil {
			return nil, err
		}
		m := Member{Key: key, Value: v, Occurrence: 1}
		if len(ms) < 32 { // look back: cheaper than a map for a small object
			for _, prev := range ms {
				if prev.Key == key {
					m.Occurrence++
				}
			}
		} else {
			if seen == nil {
				seen = make(map[string]int, 2*len(ms))
				for _, prev := range ms {
					seen[prev.Key]++
				}
			}
			seen[key]++
			m.Occurrence = seen[key]
		}
		ms = append(ms, m)
	}
	// The closing brace, then nothing but white space.
	if _, err := dec.Token(); err != nil {
		return nil, ErrNotJSON
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, ErrNotJSON
	}
	return ms, nil
}

// value reads the value of a member, just after its key.
func value(dec *json.Decoder, data []byte, maxDepth int) (Value, error) {
	start := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return Value{}, ErrNotJSON
	}
	switch t := tok.(type) {
	case string:
		v := Value{Kind: String, Text: t}
		// Only a text holding U+FFFD can have come from a lone surrogate;
		// the JSON text of the value is what was read since start.
		if strings.ContainsRune(t, utf8.RuneError) {
			v.LoneSurrogate = loneSurrogate(data[start:dec.InputOffset()])
		}
		return v, nil
	case json.Number:
		return Value{Kind: Number, Number: t}, nil
	case bool:
		return Value{Kind: Bool, Bool: t}, nil
	case nil:
		return Value{Kind: Null}, nil
	case json.Delim:
		k := Object
		if t == '[' {
			k = Array
		}
		err := skip(dec, 2, maxDepth)
		return Value{Kind: k, Raw: bytes.TrimLeft(data[start:dec.InputOffset()], " \t\r\n:")}, err
	}
	return Value{}, ErrNotJSON // a closing delimiter, where a value belongs
}

// skip reads the rest of the object or array whose opening delimiter, at
// the given depth, was just read.
func skip(dec *json.Decoder, depth, maxDepth int) error {
	for open := depth; open >= depth; {
		if open > maxDepth {
			return ErrTooDeep
		}
		tok, err := dec.Token()
		if err != nil {
			return ErrNotJSON
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			open++
		case json.Delim('}'), json.Delim(']'):
			open--
		}
	}
	return nil
}

// loneSurrogate reports whether the JSON text s, known valid, escapes a
// UTF-16 surrogate that is not half of a pair: \ud800–\udbff directly
// followed by \udc00–\udfff. It reads only the escapes.
func loneSurrogate(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		r := escapedUnit(s[i:])
		if r < 0 {
			i++ // a one-character escape, such as \\ or \"
			continue
		}
		i += 5
		if !utf16.IsSurrogate(r) {
			continue
		}
		if utf16.DecodeRune(r, escapedUnit(s[i+1:])) == unicode.ReplacementChar {
			return true
		}
		i += 6 // the low half
	}
	return false
}

// escapedUnit returns the UTF-16 code unit of the \uXXXX escape s starts
// with, -1 when s does not start with one.
func escapedUnit(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	u, err := strconv.ParseUint(string(s[2:6]), 16, 16)
	if err != nil {
		return -1
	}
	return rune(u)
}
