package accounts

import (
	"encoding/csv"
	"io"
	"stampduty/shared/stampduty"
)

// CSVHeader is the header row of an entries export: the entry's fields
// (accounts.md), in its JSON's order.
var CSVHeader = []string{"id", "type", "amount", "balanceAfter", "heldAfter", "order", "fulfillment", "reference", "note", "by", "createdAt"}

// CSVWriter writes entries as RFC 4180 rows (CRLF line ends, fields
// quoted when they hold a comma, a quote or a line end), safe to open in a
// spreadsheet: a text cell that starts with =, +, -, @, a tab or a
// carriage return is prefixed with ' so that no formula runs. Money cells
// are plain numbers ("-40.50"), never escaped: they are numbers.
type CSVWriter struct{ w *csv.Writer }

// NewCSVWriter writes the header row to w and returns the writer of the
// rows after it.
func NewCSVWriter(w io.Writer) (*CSVWriter, error) {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	if err := cw.Write(CSVHeader); err != nil {
		return nil, err
	}
	return &CSVWriter{w: cw}, nil
}

// Write writes one row per entry, in the order given.
func (c *CSVWriter) Write(es []Entry) error {
	for _, e := range es {
		row := []string{Cell(e.ID), Cell(e.Type), e.Amount.Plain(), e.BalanceAfter.Plain(), e.HeldAfter.Plain(),
			Cell(e.Order), Cell(e.Fulfillment), Cell(e.Reference), Cell(e.Note), Cell(e.By), stampduty.FormatTime(e.CreatedAt)}
		if err := c.w.Write(row); err != nil {
			return err
		}
	}
	return c.w.Error()
}

// Flush writes what is buffered and returns the first error met.
func (c *CSVWriter) Flush() error {
	c.w.Flush()
	return c.w.Error()
}

// Cell is the text s as a CSV cell a spreadsheet shows as text: prefixed
// with ' when it starts with a character that makes a formula (=, +, -, @)
// or that some spreadsheets skip before one (tab, carriage return).
func Cell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}
