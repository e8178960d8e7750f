package staff

// This file holds how a person's email is checked and spelt.

import (
	"fmt"
	"net/mail"
	"strings"

	"stampduty/shared/stampduty"
)

// MaxEmailLength is the longest email an account may have (RFC 5321's
// limit on a path, which Cognito's email attribute keeps too).
const MaxEmailLength = 254

// ParseEmail returns the email s names, lower-cased, or an EINVALID error:
// a bare address (local@domain, no display name or angle brackets), at
// most MaxEmailLength characters, its domain with a dot. Lower-cased
// because the pool signs in by email case-insensitively, so that the
// list, the last-admin rule and the change log name one person one way.
func ParseEmail(s string) (string, error) {
	bad := func(msg string) error {
		return stampduty.Invalid([]stampduty.FieldError{{Path: "email", Message: msg}})
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", bad("email is required")
	}
	if len(s) > MaxEmailLength {
		return "", bad(fmt.Sprintf("email must be at most %d characters", MaxEmailLength))
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s || strings.ContainsAny(s, " <>\"") {
		return "", bad("email must be an address such as name@example.com")
	}
	at := strings.LastIndexByte(s, '@')
	if domain := s[at+1:]; !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") {
		return "", bad("email's domain must have a dot, as name@example.com")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return "", bad("email must be printable ASCII")
		}
	}
	return strings.ToLower(s), nil
}
