package accounts_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
)

// fieldOf returns the path of the one field err names ("" when err is not
// an EINVALID naming one).
func fieldOf(err error) string {
	var e *stampduty.Error
	if !errors.As(err, &e) || e.Code != stampduty.EINVALID || len(e.Fields) != 1 {
		return ""
	}
	return e.Fields[0].Path
}

func TestStatementOfKeepsBothIdentities(t *testing.T) {
	for _, tc := range []struct {
		name             string
		opening, closing accounts.Totals
	}{
		{"Empty", accounts.Totals{}, accounts.Totals{}},
		{"FirstMonth", accounts.Totals{}, accounts.Totals{Credits: 10_000_00, Holds: 5_000_00, Charges: 2_000_00, Releases: 1_000_00}},
		{"NegativeAdjustment", accounts.Totals{Credits: 100_00}, accounts.Totals{Credits: 100_00, Adjustments: -40_50}},
		{"AcrossMonths", accounts.Totals{Credits: 1_00, Holds: 70_00, Charges: 20_00, Releases: 3_00, Adjustments: 7_77},
			accounts.Totals{Credits: 501_00, Holds: 170_00, Charges: 120_00, Releases: 13_00, Adjustments: -2_23}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := accounts.StatementOf("2026-04", tc.opening, tc.closing)
			if got, want := s.OpeningBalance+s.Credits-s.Charges+s.Adjustments, s.ClosingBalance; got != want {
				t.Errorf("opening + credits − charges + adjustments = %s, closing %s", got, want)
			}
			if got, want := s.OpeningHeld+s.Holds-s.Releases-s.Charges, s.ClosingHeld; got != want {
				t.Errorf("openingHeld + holds − releases − charges = %s, closingHeld %s", got, want)
			}
			if got, want := s.ClosingBalance, tc.closing.Balance(); got != want {
				t.Errorf("closing balance %s, want the closing totals' %s", got, want)
			}
			if got, want := s.OpeningHeld, tc.opening.Held(); got != want {
				t.Errorf("opening held %s, want the opening totals' %s", got, want)
			}
		})
	}
}

func TestParseMonth(t *testing.T) {
	now := time.Date(2026, 12, 6, 23, 41, 0, 0, time.UTC) // 7 December in India
	for _, tc := range []struct {
		name, month string
		start       string // RFC 3339, "" when refused
	}{
		{"PastMonth", "2026-04", "2026-04-01T00:00:00+05:30"},
		{"CurrentMonthInIndia", "2026-12", "2026-12-01T00:00:00+05:30"},
		{"FutureMonth", "2027-01", ""},
		{"MonthWithoutZero", "2026-4", ""},
		{"ThirteenthMonth", "2026-13", ""},
		{"Day", "2026-04-01", ""},
		{"Empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start, end, err := accounts.ParseMonth(tc.month, now)
			if tc.start == "" {
				if fieldOf(err) != "month" {
					t.Errorf("err = %v, want 400 naming month", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := start.Format(time.RFC3339); got != tc.start {
				t.Errorf("start %s, want %s", got, tc.start)
			}
			if got, want := end, start.AddDate(0, 1, 0); !got.Equal(want) {
				t.Errorf("end %s, want %s", got, want)
			}
		})
	}
	t.Run("MonthBeginsInIndiaBeforeUTC", func(t *testing.T) {
		// 30 November 19:00 UTC is 1 December 00:30 in India.
		if _, _, err := accounts.ParseMonth("2026-12", time.Date(2026, 11, 30, 19, 0, 0, 0, time.UTC)); err != nil {
			t.Errorf("December in India refused: %v", err)
		}
	})
}

func TestCSVRange(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		field          string // the field a refusal names, "" when accepted
		days           int
	}{
		{"OneDay", "2026-04-01", "2026-04-01", "", 1},
		{"LeapYearWhole", "2024-01-01", "2024-12-31", "", 366},
		{"ThreeHundredSixtySixDays", "2025-01-01", "2026-01-01", "", 366},
		{"ThreeHundredSixtySevenDays", "2025-01-01", "2026-01-02", "to", 0},
		{"ToBeforeFrom", "2026-04-02", "2026-04-01", "to", 0},
		{"BadFrom", "2026-4-1", "2026-04-01", "from", 0},
		{"BadTo", "2026-04-01", "01-04-2026", "to", 0},
		{"MissingFrom", "", "2026-04-01", "from", 0},
		{"MissingTo", "2026-04-01", "", "to", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start, end, err := accounts.CSVRange(tc.from, tc.to)
			if tc.field != "" {
				if got := fieldOf(err); got != tc.field {
					t.Errorf("err = %v, want 400 naming %s", err, tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := int(end.Sub(start).Hours() / 24); got != tc.days {
				t.Errorf("%d days, want %d", got, tc.days)
			}
			if got, want := start.Format(time.RFC3339), tc.from+"T00:00:00+05:30"; got != want {
				t.Errorf("start %s, want India's midnight %s", got, want)
			}
		})
	}
}

func TestCursor(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // 0: refused
	}{
		{"s1", 1}, {"s999999999999", 999_999_999_999}, {"s0", 0}, {"s01", 0}, {"1", 0}, {"s-1", 0}, {"s", 0},
		{"s1000000000000", 0}, {"s1.0", 0}, {"", 0},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := accounts.ParseCursor(tc.in)
			if tc.want == 0 {
				if fieldOf(err) != "cursor" {
					t.Errorf("ParseCursor(%q) = %d, %v; want 400 naming cursor", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ParseCursor(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
			if back := accounts.FormatCursor(got); back != tc.in {
				t.Errorf("FormatCursor(%d) = %q, want %q", got, back, tc.in)
			}
		})
	}
}

func TestEntryFilterKeeps(t *testing.T) {
	e := accounts.Entry{Type: accounts.TypeHold, Order: "o1"}
	for _, tc := range []struct {
		name string
		f    accounts.EntryFilter
		want bool
	}{
		{"None", accounts.EntryFilter{}, true},
		{"Type", accounts.EntryFilter{Types: []string{accounts.TypeHold}}, true},
		{"OtherType", accounts.EntryFilter{Types: []string{accounts.TypeCharge}}, false},
		{"TypeIn", accounts.EntryFilter{Types: []string{accounts.TypeCharge, accounts.TypeHold}}, true},
		{"Order", accounts.EntryFilter{Order: "o1"}, true},
		{"OtherOrder", accounts.EntryFilter{Order: "o2"}, false},
		{"TypeAndOtherOrder", accounts.EntryFilter{Types: []string{accounts.TypeHold}, Order: "o2"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f.Keeps(e); got != tc.want {
				t.Errorf("Keeps = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTestCreditTooLargeSaysTheMost(t *testing.T) {
	for _, tc := range []struct {
		room accounts.Money
		most string
	}{{25_000_00, "25000.00"}, {0, "0.00"}, {-5_00, "0.00"}} {
		err := accounts.TestCreditTooLarge(tc.room)
		if fieldOf(err) != "amount" || !strings.Contains(err.Error(), "at most "+tc.most) || !strings.Contains(err.Error(), "10000000.00") {
			t.Errorf("room %s: %v; want 400 naming amount, saying at most %s", tc.room, err, tc.most)
		}
	}
}
