package duty

import (
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"2025-09-01", true},
		{"2024-02-29", true},
		{"2025-02-29", false}, // not a leap year
		{"2025-02-30", false},
		{"2025-9-1", false},
		{"01-09-2025", false},
		{"2025-09-01T00:00:00Z", false},
		{"", false},
	} {
		if _, err := ParseDate(tc.in); (err == nil) != tc.ok {
			t.Errorf("ParseDate(%q): error %v, want ok %v", tc.in, err, tc.ok)
		}
	}
}

func TestTodayInIndia(t *testing.T) {
	for _, tc := range []struct {
		utc  string
		want string
	}{
		{"2025-08-31T18:29:59Z", "2025-08-31"}, // 23:59:59 in India
		{"2025-08-31T18:30:00Z", "2025-09-01"}, // midnight in India
		{"2025-09-01T12:00:00Z", "2025-09-01"},
	} {
		now, err := time.Parse(time.RFC3339, tc.utc)
		if err != nil {
			t.Fatal(err)
		}
		if got := TodayInIndia(now); got != tc.want {
			t.Errorf("TodayInIndia(%s) = %s, want %s", tc.utc, got, tc.want)
		}
	}
}

func TestInForce(t *testing.T) {
	// Maharashtra's metro cess from 1 April 2022: an open earliest version
	// until then, the new one open after, and a gap before a third.
	ps := []Period{{"", "2022-04-01"}, {"2022-04-01", "2024-01-01"}, {"2024-06-01", ""}}
	for _, tc := range []struct {
		date string
		want int // -1: none
	}{
		{"1999-01-01", 0},
		{"2022-03-31", 0},
		{"2022-04-01", 1}, // effectiveFrom is inclusive
		{"2023-12-31", 1},
		{"2024-01-01", -1}, // effectiveTo is exclusive: the gap
		{"2024-05-31", -1},
		{"2024-06-01", 2},
		{"2099-12-31", 2},
	} {
		i, ok := InForce(ps, tc.date)
		if got := map[bool]int{true: i, false: -1}[ok]; got != tc.want {
			t.Errorf("InForce on %s = %d, want %d", tc.date, got, tc.want)
		}
	}
}
