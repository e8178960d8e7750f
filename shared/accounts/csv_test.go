package accounts_test

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"stampduty/shared/accounts"
)

func TestCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"},
		{"+91", "'+91"},
		{"-40", "'-40"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"UTR123", "UTR123"},
		{"a=b", "a=b"},
		{"", ""},
		{"'quoted", "'quoted"},
	} {
		if got := accounts.Cell(tc.in); got != tc.want {
			t.Errorf("Cell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCSVWriter(t *testing.T) {
	at := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	es := []accounts.Entry{
		{ID: "credit_UTR1", Type: accounts.TypeCredit, Amount: 1000_00, BalanceAfter: 1000_00, Reference: "=cmd|' /C calc'!A0", Note: "line one\nline, two", By: accounts.ByAdmin, CreatedAt: at},
		{ID: "adjustment_r1", Type: accounts.TypeAdjustment, Amount: -40_50, BalanceAfter: 959_50, Note: "-bank charge", By: accounts.ByAdmin, CreatedAt: at},
		{ID: "hold_o1", Type: accounts.TypeHold, Amount: 20_00, BalanceAfter: 959_50, HeldAfter: 20_00, Order: "o1", Reference: "@x", By: accounts.ByCaller, CreatedAt: at},
	}
	var b bytes.Buffer
	w, err := accounts.NewCSVWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(es); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Run("LinesEndInCRLF", func(t *testing.T) {
		if !strings.HasPrefix(out, strings.Join(accounts.CSVHeader, ",")+"\r\n") {
			t.Errorf("first line of %q is not the header ending in CRLF", out)
		}
	})
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rows), len(es)+1; got != want {
		t.Fatalf("%d rows, want %d", got, want)
	}
	col := func(name string) int {
		for i, h := range accounts.CSVHeader {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	t.Run("FormulasAreText", func(t *testing.T) {
		for _, c := range []struct {
			row  int
			col  string
			want string
		}{{1, "reference", "'=cmd|' /C calc'!A0"}, {2, "note", "'-bank charge"}, {3, "reference", "'@x"}} {
			if got := rows[c.row][col(c.col)]; got != c.want {
				t.Errorf("row %d %s = %q, want %q", c.row, c.col, got, c.want)
			}
		}
	})
	t.Run("MoneyIsAPlainNumber", func(t *testing.T) {
		if got := rows[2][col("amount")]; got != "-40.50" {
			t.Errorf("amount %q, want -40.50 unescaped", got)
		}
		if got := rows[1][col("balanceAfter")]; got != "1000.00" {
			t.Errorf("balanceAfter %q, want 1000.00", got)
		}
	})
	t.Run("QuotedFieldsRoundTrip", func(t *testing.T) {
		if got, want := rows[1][col("note")], "line one\nline, two"; got != want {
			t.Errorf("note %q, want %q", got, want)
		}
	})
	t.Run("CreatedAtIsTheAPIsTime", func(t *testing.T) {
		if got, want := rows[1][col("createdAt")], "2026-04-01T10:00:00.000Z"; got != want {
			t.Errorf("createdAt %q, want %q", got, want)
		}
	})
}
