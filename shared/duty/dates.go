package duty

import (
	"fmt"
	"time"
)

// india is Asia/Kolkata: +05:30 all year (India keeps no daylight saving
// time), fixed here so that a date in India needs no time-zone database.
var india = time.FixedZone("IST", 5*3600+1800)

// dateLayout is a rule's and an instrument's date: "YYYY-MM-DD".
const dateLayout = "2006-01-02"

// ParseDate checks that s is a calendar date written "YYYY-MM-DD"
// (§7: "2025-02-30" and "2025-9-1" are not).
func ParseDate(s string) (string, error) {
	t, err := time.Parse(dateLayout, s)
	if err != nil || t.Format(dateLayout) != s {
		return "", fmt.Errorf("%q is not a date (YYYY-MM-DD)", s)
	}
	return s, nil
}

// TodayInIndia returns the calendar date in India at now: an order's
// instrument date, and a quote's when it names none (§7).
func TodayInIndia(now time.Time) string { return now.In(india).Format(dateLayout) }

// Period is when a rule version is in force: From its first day
// (inclusive; "" since before the catalogue knew) to To, the first day it
// no longer is ("" open).
type Period struct{ From, To string }

// In reports whether date ("YYYY-MM-DD") is in p: From ≤ date < To.
// Dates in that form compare as strings.
func (p Period) In(date string) bool {
	return (p.From == "" || p.From <= date) && (p.To == "" || date < p.To)
}

// InForce returns the index of the period of ps in force on date, ok
// false when none is (§6 step 1). Periods do not overlap (§1), so at most
// one is.
func InForce(ps []Period, date string) (i int, ok bool) {
	for i, p := range ps {
		if p.In(date) {
			return i, true
		}
	}
	return -1, false
}
