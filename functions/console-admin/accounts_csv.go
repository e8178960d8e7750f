package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/function"
	"stampduty/shared/function/staffauth"
	"stampduty/shared/stampduty"
)

// The CSV's limits: accounts.md's rows, and what a Lambda answer may
// carry (6 MB, less the envelope).
const (
	maxCSVRows  = 100_000
	maxCSVBytes = 5 << 20
	maxCSVDays  = 366
)

// india is the time zone of the CSV's dates (IST, UTC+5:30, no DST).
var india = time.FixedZone("IST", 5*3600+1800)

// csvHeader is the CSV's header row: an entry's fields as accounts.md
// names them.
var csvHeader = []string{"id", "type", "amount", "balanceAfter", "heldAfter", "order", "fulfillment", "reference", "note", "by", "createdAt"}

// entriesCSV answers GET /api/console/accounts/{owner}/entries.csv
// [?from=YYYY-MM-DD&to=YYYY-MM-DD&mode=test]: the account's entries of
// those India days (both included; either may be left out), oldest first,
// as RFC 4180 CSV with accounts.md's escaping (csvText). An admin's only,
// checked as the JSON routes are (staffauth.AsAdmin) before anything is
// read. It reads the account and its entries (one Query per MB) and keeps
// those of the range.
func (h *handler) entriesCSV(w http.ResponseWriter, r *http.Request) {
	admin := staffauth.AsAdmin(func(*http.Request, string) (any, error) { return nil, nil })
	if _, err := admin(r); err != nil {
		function.WriteError(w, r, err)
		return
	}
	body, err := h.buildCSV(r)
	if err != nil {
		function.WriteError(w, r, err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/csv; charset=utf-8")
	hd.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-entries.csv"`, r.PathValue("owner")))
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// csvRange reads from and to (India dates, both included) as the instants
// [lo, hi) they bound; a zero time is no bound.
func csvRange(r *http.Request) (lo, hi time.Time, err error) {
	var bad []stampduty.FieldError
	day := func(key string) time.Time {
		s := r.URL.Query().Get(key)
		if s == "" {
			return time.Time{}
		}
		d, err := time.ParseInLocation(time.DateOnly, s, india)
		if err != nil {
			bad = append(bad, stampduty.FieldError{Path: key, Message: key + " must be a date, YYYY-MM-DD"})
		}
		return d
	}
	lo, to := day("from"), day("to")
	if !to.IsZero() {
		hi = to.AddDate(0, 0, 1)
	}
	switch {
	case bad != nil:
	case !lo.IsZero() && !hi.IsZero() && !hi.After(lo):
		bad = append(bad, stampduty.FieldError{Path: "to", Message: "to must not be before from"})
	case !lo.IsZero() && !hi.IsZero() && hi.Sub(lo) > maxCSVDays*24*time.Hour:
		bad = append(bad, stampduty.FieldError{Path: "to", Message: fmt.Sprintf("from and to must be at most %d days apart, both counted", maxCSVDays)})
	}
	if bad != nil {
		return lo, hi, stampduty.Invalid(bad)
	}
	return lo, hi, nil
}

// buildCSV reads the entries r asks for and writes them.
func (h *handler) buildCSV(r *http.Request) ([]byte, error) {
	lo, hi, err := csvRange(r)
	if err != nil {
		return nil, err
	}
	key, _, err := h.ownerKey(r)
	if err != nil {
		return nil, err
	}
	a, err := h.accounts.View(r.Context(), key)
	if err != nil {
		return nil, err
	}
	es, err := h.accounts.Entries(r.Context(), key, 1, a.Seq)
	if err != nil {
		return nil, err
	}
	slices.Reverse(es)
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.UseCRLF = true
	cw.Write(csvHeader)
	rows := 0
	for _, e := range es {
		if (!lo.IsZero() && e.CreatedAt.Before(lo)) || (!hi.IsZero() && !e.CreatedAt.Before(hi)) {
			continue
		}
		if rows++; rows > maxCSVRows || buf.Len() > maxCSVBytes {
			return nil, stampduty.Invalid([]stampduty.FieldError{{Path: "from",
				Message: fmt.Sprintf("the range holds more entries than one download carries (%d rows, 5 MB): ask for a shorter range with from and to", maxCSVRows)}})
		}
		cw.Write(csvRow(e))
	}
	cw.Flush()
	return buf.Bytes(), cw.Error()
}

// csvRow is entry e as a CSV row: money plain, text cells by csvText.
func csvRow(e accounts.Entry) []string {
	return []string{csvText(e.ID), csvText(e.Type), e.Amount.Plain(), e.BalanceAfter.Plain(), e.HeldAfter.Plain(),
		csvText(e.Order), csvText(e.Fulfillment), csvText(e.Reference), csvText(e.Note), csvText(e.By),
		e.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z")}
}

// csvText is a text cell as accounts.md writes it: one that starts with
// =, +, -, @, tab or carriage return gets a leading ' so that no formula
// runs when a person opens the file in a spreadsheet.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
