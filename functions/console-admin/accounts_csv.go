package main

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"stampduty/shared/accounts"
	"stampduty/shared/function"
	"stampduty/shared/function/staffauth"
	"stampduty/shared/stampduty"
)

// maxCSVBytes is the most CSV one answer carries: a Lambda answer is at
// most 6 MB, less the envelope. (The caller's route writes its CSV to S3
// and redirects, for 100,000 rows; this function links no S3 client.)
const maxCSVBytes = 5 << 20

// entriesCSV answers GET /api/console/accounts/{owner}/entries.csv
// [?from=YYYY-MM-DD&to=YYYY-MM-DD&mode=test]: the account's entries of
// those India days (both included; either may be left out), oldest first,
// as RFC 4180 CSV with accounts.md's escaping (accounts.CSVWriter). An
// admin's only, checked as the JSON routes are (staffauth.AsAdmin) before
// anything is read. It reads what the caller's export reads: the account,
// the range's ends by binary search, and the range's entries alone.
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
		d, err := time.ParseInLocation(time.DateOnly, s, accounts.India)
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
	case !lo.IsZero() && !hi.IsZero() && hi.Sub(lo) > accounts.MaxCSVDays*24*time.Hour:
		bad = append(bad, stampduty.FieldError{Path: "to", Message: fmt.Sprintf("from and to must be at most %d days apart, both counted", accounts.MaxCSVDays)})
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
	var buf bytes.Buffer
	cw, err := accounts.NewCSVWriter(&buf)
	if err != nil {
		return nil, err
	}
	_, err = h.accounts.Export(r.Context(), key, lo, hi, func(es []accounts.Entry) error {
		if err := cw.Write(es); err != nil {
			return err
		}
		if buf.Len() > maxCSVBytes {
			return stampduty.Invalid([]stampduty.FieldError{{Path: "from",
				Message: "the range holds more entries than one download carries (5 MB): ask for a shorter range with from and to"}})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := cw.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
