package stampduty

// This file holds the checks of a create-order body's values once read:
// the length and characters each text field allows, the state, who pays,
// the mobile number and the PAN.

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The characters each free-text field allows, as byte tables: ASCII letters
// and digits plus the listed symbols. Any byte of a non-ASCII character is
// outside every table.
var (
	descriptionChars = charTable(" !#@$*()-+;:,.?/")
	nameChars        = charTable(" ")
	addressChars     = charTable(" ./:,-\\")
)

// charTable returns the table of ASCII letters, digits and the given symbols.
func charTable(symbols string) *[256]bool {
	var t [256]bool
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for i := 0; i < len(symbols); i++ {
		t[symbols[i]] = true
	}
	return &t
}

// onlyChars reports whether every byte of s is in the table.
func onlyChars(s string, t *[256]bool) bool {
	for i := 0; i < len(s); i++ {
		if !t[s[i]] {
			return false
		}
	}
	return true
}

// checkDescription checks the length and characters of a description.
func checkDescription(s string) string {
	return checkText(s, 100, descriptionChars, msgDescriptionLen, msgDescriptionSet)
}

// MaxFreeTextLength is the longest purpose or purchasedBy, in characters.
const MaxFreeTextLength = 200

// checkPurpose checks a trimmed purpose: not empty, then checkFreeText. It
// returns "" or the failing message, after the field name.
func checkPurpose(s string) string {
	if s == "" {
		return msgNotEmpty
	}
	return checkFreeText(s)
}

// checkFreeText checks a text that will be printed on a legal document as
// sent ("any character" in the contract): at most MaxFreeTextLength
// characters, each printable.
func checkFreeText(s string) string {
	if utf8.RuneCountInString(s) > MaxFreeTextLength {
		return msgFreeTextLen
	}
	if !printable(s) {
		return msgUnprintable
	}
	return ""
}

// printable reports whether s is valid UTF-8 of characters that print as
// what they are: Unicode letters, marks, numbers, punctuation, symbols and
// spaces (unicode.IsGraphic). That refuses what a reader of the document
// could not see or would be misled by: control characters, format
// characters (among them the bidirectional controls U+202A–U+202E and
// U+2066–U+2069, the zero-width U+200B–U+200D and U+2060, and U+FEFF), line
// and paragraph separators, surrogates, private-use and unassigned code
// points.
func printable(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return false // not UTF-8
			}
		}
		if !unicode.IsGraphic(r) {
			return false
		}
	}
	return true
}

// checkName checks a party name.
func checkName(s string) string {
	if strings.Trim(s, " ") == "" {
		return msgNotEmpty
	}
	return checkText(s, 40, nameChars, msgNameLen, msgNameSet)
}

// checkAddress checks a party address.
func checkAddress(s string) string {
	return checkText(s, 120, addressChars, msgAddressLen, msgAddressSet)
}

// checkText returns tooLong when s has more than max characters, badChar
// when it has one outside chars, and "" when it is fine.
func checkText(s string, max int, chars *[256]bool, tooLong, badChar string) string {
	if utf8.RuneCountInString(s) > max {
		return tooLong
	}
	if !onlyChars(s, chars) {
		return badChar
	}
	return ""
}

// checkState, checkPaidBy, checkMobile and checkPAN check the fields of
// those names; each returns "" or the failing message.
func checkState(s string) string  { return unless(ValidState(s), msgState) }
func checkPaidBy(s string) string { return unless(s == FirstParty || s == SecondParty, msgPaidBy) }
func checkMobile(s string) string { return unless(isMobile(s), msgMobile) }
func checkPAN(s string) string    { return unless(isPANOrEmpty(s), msgPAN) }

// unless returns "" when ok and msg when not.
func unless(ok bool, msg string) string {
	if ok {
		return ""
	}
	return msg
}

// isMobile reports exactly 10 ASCII digits.
func isMobile(s string) bool {
	if len(s) != 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// isPANOrEmpty reports "" or a PAN: ^[A-Z]{5}[0-9]{4}[A-Z]$.
func isPANOrEmpty(s string) bool {
	if s == "" {
		return true
	}
	if len(s) != 10 {
		return false
	}
	for i := 0; i < 10; i++ {
		c := s[i]
		upper := c >= 'A' && c <= 'Z'
		if i >= 5 && i < 9 && !isDigit(c) || (i < 5 || i == 9) && !upper {
			return false
		}
	}
	return true
}
