package rules

import (
	"errors"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// kind is the JSON type of a value.
type kind uint8

// The JSON types; kindAbsent is a key that is not in the object.
const (
	kindAbsent kind = iota
	kindString
	kindNumber
	kindNull
	kindBool
	kindObject
	kindArray
)

// rawValue is one member value of a JSON object, not yet decoded.
type rawValue struct {
	kind kind
	// raw is, for a string, the text between the quotes, still escaped; for
	// other kinds, the literal text of the value.
	raw string
	// esc says a string holds escapes (a backslash).
	esc bool
}

// str returns the value of a string, unescaped.
func (v rawValue) str() string {
	s, _ := v.text()
	return s
}

// text returns the value of a string, unescaped; paired is false when an
// escape names a lone UTF-16 surrogate, which str gives as U+FFFD: text
// that was not what the caller sent.
func (v rawValue) text() (s string, paired bool) {
	if !v.esc {
		return v.raw, true
	}
	s, lone := unescape(v.raw)
	return s, !lone
}

// The scanning errors. The input is checked by json.Valid first, so
// errBadJSON only guards the scanner against misuse.
var (
	errTooDeep = errors.New("nested too deeply")
	errBadJSON = errors.New("not valid JSON")
)

// objectScanner walks the members of one JSON object in a string known to be
// valid JSON (checked with json.Valid), one member at a time, without
// allocating. Nested objects and arrays are skipped; their depth is checked.
type objectScanner struct {
	s        string
	i        int
	maxDepth int // the object itself is at depth 1
	started  bool
	done     bool
}

// newObjectScanner returns a scanner of the object s starts with (after
// white space); ok is false when s does not start with an object.
func newObjectScanner(s string, maxDepth int) (sc objectScanner, ok bool) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return objectScanner{}, false
	}
	return objectScanner{s: s, i: i + 1, maxDepth: maxDepth}, true
}

// next returns the next member: its key (still escaped, escKey says so) and
// value. more is false after the last member.
func (sc *objectScanner) next() (key string, escKey bool, val rawValue, more bool, err error) {
	if sc.done {
		return "", false, rawValue{}, false, nil
	}
	s := sc.s
	i := skipSpace(s, sc.i)
	if i >= len(s) {
		return "", false, rawValue{}, false, errBadJSON
	}
	if s[i] == '}' {
		sc.done = true
		sc.i = i + 1
		return "", false, rawValue{}, false, nil
	}
	if sc.started {
		if s[i] != ',' {
			return "", false, rawValue{}, false, errBadJSON
		}
		i = skipSpace(s, i+1)
	}
	sc.started = true
	if i >= len(s) || s[i] != '"' {
		return "", false, rawValue{}, false, errBadJSON
	}
	end, esc, ok := scanString(s, i+1)
	if !ok {
		return "", false, rawValue{}, false, errBadJSON
	}
	key, escKey = s[i+1:end], esc
	i = skipSpace(s, end+1)
	if i >= len(s) || s[i] != ':' {
		return "", false, rawValue{}, false, errBadJSON
	}
	i = skipSpace(s, i+1)
	val, i, err = scanValue(s, i, 2, sc.maxDepth)
	if err != nil {
		return "", false, rawValue{}, false, err
	}
	sc.i = i
	return key, escKey, val, true, nil
}

// scanValue reads the value starting at s[i], at the given depth, and
// returns it with the index just after it.
func scanValue(s string, i, depth, maxDepth int) (rawValue, int, error) {
	if i >= len(s) {
		return rawValue{}, i, errBadJSON
	}
	switch c := s[i]; {
	case c == '"':
		end, esc, ok := scanString(s, i+1)
		if !ok {
			return rawValue{}, i, errBadJSON
		}
		return rawValue{kind: kindString, raw: s[i+1 : end], esc: esc}, end + 1, nil
	case c == '{' || c == '[':
		end, err := skipComposite(s, i, depth, maxDepth)
		if err != nil {
			return rawValue{}, i, err
		}
		k := kindObject
		if c == '[' {
			k = kindArray
		}
		return rawValue{kind: k, raw: s[i:end]}, end, nil
	case c == 't' && strings.HasPrefix(s[i:], "true"):
		return rawValue{kind: kindBool, raw: s[i : i+4]}, i + 4, nil
	case c == 'f' && strings.HasPrefix(s[i:], "false"):
		return rawValue{kind: kindBool, raw: s[i : i+5]}, i + 5, nil
	case c == 'n' && strings.HasPrefix(s[i:], "null"):
		return rawValue{kind: kindNull, raw: s[i : i+4]}, i + 4, nil
	case c == '-' || isDigit(c):
		j := i + 1
		for j < len(s) && isNumberByte(s[j]) {
			j++
		}
		return rawValue{kind: kindNumber, raw: s[i:j]}, j, nil
	}
	return rawValue{}, i, errBadJSON
}

func isNumberByte(c byte) bool {
	return isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// skipComposite skips the object or array starting at s[i], which sits at
// the given depth, and returns the index just after it. Strings inside are
// skipped whole, so brackets in them do not count.
func skipComposite(s string, i, depth, maxDepth int) (int, error) {
	if depth > maxDepth {
		return i, errTooDeep
	}
	base := depth
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '"':
			end, _, ok := scanString(s, j+1)
			if !ok {
				return j, errBadJSON
			}
			j = end
		case '{', '[':
			depth++
			if depth > maxDepth {
				return j, errTooDeep
			}
		case '}', ']':
			if depth == base {
				return j + 1, nil
			}
			depth--
		}
	}
	return len(s), errBadJSON
}

// scanString finds the closing quote of the string whose content starts at
// s[i]. esc reports a backslash in it.
func scanString(s string, i int) (end int, esc, ok bool) {
	for i < len(s) {
		switch s[i] {
		case '"':
			return i, esc, true
		case '\\':
			esc = true
			i += 2
		default:
			i++
		}
	}
	return len(s), esc, false
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// unescape decodes the escapes of a JSON string's content, as encoding/json
// does: a lone UTF-16 surrogate becomes U+FFFD, and lone reports that one
// did. The content is known valid.
func unescape(s string) (_ string, lone bool) {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(s, i+2)
			if !ok {
				b.WriteString(s[i : i+2])
				break
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(s, i+2); ok && s[i] == '\\' && s[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						b.WriteRune(dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
				lone = true
			}
			b.WriteRune(r)
			continue
		default:
			b.WriteString(s[i : i+2])
		}
		i += 2
	}
	return b.String(), lone
}

// hex4 reads the four hex digits at s[i:i+4].
func hex4(s string, i int) (rune, bool) {
	if i < 0 || i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
