package accounts

import (
	"errors"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
)

func TestNormalReference(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
		ok             bool
	}{
		{"UpperCased", "utr00123", "UTR00123", true},
		{"Trimmed", "  SBIN0001  ", "SBIN0001", true},
		{"Punctuation", "CHQ-123/45", "CHQ-123/45", true},
		{"LongestAllowed", strings.Repeat("A", MaxReference), strings.Repeat("A", MaxReference), true},
		{"TooLong", strings.Repeat("A", MaxReference+1), "", false},
		{"Empty", "", "", false},
		{"Blank", "   ", "", false},
		{"InnerSpace", "UTR 1", "", false},
		{"Tab", "UTR\t1", "", false},
		{"NotASCII", "UTR₹1", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalReference(tt.in)
			var e *stampduty.Error
			switch {
			case tt.ok && (err != nil || got != tt.want):
				t.Errorf("NormalReference(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			case !tt.ok && (!errors.As(err, &e) || e.Code != stampduty.EINVALID || e.Fields[0].Path != "reference"):
				t.Errorf("NormalReference(%q) = %q, %v; want 400 naming reference", tt.in, got, err)
			}
		})
	}
}

func TestCheckNote(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		required bool
		want     string
		ok       bool
	}{
		{"OptionalEmpty", "", false, "", true},
		{"RequiredEmpty", "  ", true, "", false},
		{"Trimmed", " bank charge ", true, "bank charge", true},
		{"Unicode", "रिफंड ₹40", true, "रिफंड ₹40", true},
		{"NewLine", "a\nb", false, "", false},
		{"LongestAllowed", strings.Repeat("न", MaxNote), true, strings.Repeat("न", MaxNote), true},
		{"TooLong", strings.Repeat("a", MaxNote+1), false, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkNote(tt.in, tt.required, "why")
			var e *stampduty.Error
			switch {
			case tt.ok && (err != nil || got != tt.want):
				t.Errorf("checkNote(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			case !tt.ok && (!errors.As(err, &e) || e.Code != stampduty.EINVALID || e.Fields[0].Path != "note"):
				t.Errorf("checkNote(%q) = %q, %v; want 400 naming note", tt.in, got, err)
			}
		})
	}
}

func TestParseLimit(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     *Money
		ok       bool
	}{
		{"Unlimited", "unlimited", nil, true},
		{"UnlimitedAnyCase", "Unlimited", nil, true},
		{"Prepaid", "0.00", new(Money), true},
		{"Credit", "50000.00", ptr(Money(50000_00)), true},
		{"Negative", "-1.00", nil, false},
		{"NoDecimals", "100", nil, false},
		{"Word", "none", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLimit("creditLimit", tt.in)
			switch {
			case !tt.ok:
				if stampduty.ErrorCode(err) != stampduty.EINVALID {
					t.Errorf("ParseLimit(%q) = %v, %v; want 400", tt.in, got, err)
				}
			case err != nil || (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want):
				t.Errorf("ParseLimit(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
