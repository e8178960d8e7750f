package stampduty

import (
	"fmt"
	"strings"
)

// statuses are the fulfillment statuses in the order a fulfillment passes
// through them (lifecycle.md): each step forward is the only move allowed.
var statuses = [...]string{StatusPending, StatusCreated, StatusProcured, StatusPrinted}

// StatusRank returns the position of status in the lifecycle (Pending 0 …
// Printed 3), or -1 when status is not one of the four.
func StatusRank(status string) int {
	for i, s := range statuses {
		if s == status {
			return i
		}
	}
	return -1
}

// StatusEntry is one entry of a fulfillment's status_history: the status it
// entered and when. By is the operator's identity (an IAM ARN), shown only
// in operator views and empty for the first entry.
type StatusEntry struct {
	Status string `json:"order_status" dynamodbav:"st"`
	At     string `json:"at" dynamodbav:"at"`
	By     string `json:"by,omitempty" dynamodbav:"by,omitempty"`
}

// Change is an operator's request to move a fulfillment: the status it
// asks for and the references sent with it ("" when not sent).
type Change struct {
	Status            string
	UniqueDocRef      string
	CertificateNumber string
}

// The bounds of a unique_doc_ref.
const maxDocRefLength = 64

// ValidDocRef reports whether s is a unique_doc_ref: 1–64 characters of
// A–Z 0–9 - /.
func ValidDocRef(s string) bool {
	if len(s) < 1 || len(s) > maxDocRefLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '/') {
			return false
		}
	}
	return true
}

// ValidCertificateNumber reports whether s matches
// ^IN-[A-Z]{2}[0-9]{14}[A-Z]$ (e.g. IN-KA93689528000869Y).
func ValidCertificateNumber(s string) bool {
	if len(s) != 20 || !strings.HasPrefix(s, "IN-") {
		return false
	}
	for i := 3; i < 20; i++ {
		c := s[i]
		switch {
		case i < 5 || i == 19:
			if c < 'A' || c > 'Z' {
				return false
			}
		case c < '0' || c > '9':
			return false
		}
	}
	return true
}

// Validate checks the change's own values: a known status (the four), and
// each reference sent in its format. It reports every failing field at
// once, as EINVALID.
func (c Change) Validate() error {
	var fields []FieldError
	if StatusRank(c.Status) < 0 {
		fields = append(fields, FieldError{Path: "order_status",
			Message: "order_status must be one of the following values: " + strings.Join(statuses[:], ", ")})
	}
	if c.UniqueDocRef != "" && !ValidDocRef(c.UniqueDocRef) {
		fields = append(fields, FieldError{Path: "unique_doc_ref",
			Message: "unique_doc_ref must be 1 to 64 characters of A-Z, 0-9, - and /"})
	}
	if c.CertificateNumber != "" && !ValidCertificateNumber(c.CertificateNumber) {
		fields = append(fields, FieldError{Path: "certificate_number",
			Message: "certificate_number must match IN-AA00000000000000A (IN-, two letters, 14 digits, a letter)"})
	}
	if fields != nil {
		return Invalid(fields)
	}
	return nil
}

// Apply applies the change to f at time at (formatted as createdAt) by the
// operator by, and reports whether anything changed. The rules
// (lifecycle.md), checked in this order:
//
//   - the change's own values (Validate): EINVALID;
//   - a move other than one step forward, or asking for the status f has:
//     ECONFLICT "Cannot move a fulfillment from <from> to <to>." for the
//     former; the latter is no move and is allowed;
//   - a reference that differs from the one stored: ECONFLICT (stored
//     references never change);
//   - what the new status needs: unique_doc_ref for Created,
//     certificate_number for Procured (sent now or stored before: EINVALID
//     when neither), an attached certificate file for Printed (ECONFLICT
//     while there is none).
//
// Asking for f's status with the values it has changes nothing; asking for
// it with a reference f does not have yet stores the reference (a change
// without a history entry).
func (f Fulfillment) Apply(c Change, at, by string) (Fulfillment, bool, error) {
	if err := c.Validate(); err != nil {
		return f, false, err
	}
	from, to := StatusRank(f.Status), StatusRank(c.Status)
	if from < 0 {
		return f, false, Internal(fmt.Errorf("stored fulfillment %s has status %q", f.DocumentID, f.Status))
	}
	if to != from && to != from+1 {
		return f, false, Errorf(ECONFLICT, "Cannot move a fulfillment from %s to %s.", f.Status, c.Status)
	}
	if err := writeOnce("unique_doc_ref", f.UniqueDocRef, c.UniqueDocRef); err != nil {
		return f, false, err
	}
	if err := writeOnce("certificate_number", f.CertificateNumber, c.CertificateNumber); err != nil {
		return f, false, err
	}
	next := f
	if next.UniqueDocRef == "" {
		next.UniqueDocRef = c.UniqueDocRef
	}
	if next.CertificateNumber == "" {
		next.CertificateNumber = c.CertificateNumber
	}
	var missing []FieldError
	if to >= StatusRank(StatusCreated) && next.UniqueDocRef == "" {
		missing = append(missing, FieldError{Path: "unique_doc_ref",
			Message: "unique_doc_ref is required to move a fulfillment to " + c.Status})
	}
	if to >= StatusRank(StatusProcured) && next.CertificateNumber == "" {
		missing = append(missing, FieldError{Path: "certificate_number",
			Message: "certificate_number is required to move a fulfillment to " + c.Status})
	}
	if missing != nil {
		return f, false, Invalid(missing)
	}
	if to == StatusRank(StatusPrinted) && next.CertificateFile == nil {
		return f, false, Errorf(ECONFLICT, "Cannot move a fulfillment to %s before its certificate file is attached.", c.Status)
	}
	if to == from+1 {
		next.Status = c.Status
		next.History = append(f.History[:len(f.History):len(f.History)], StatusEntry{Status: c.Status, At: at, By: by})
	}
	changed := next.Status != f.Status || next.UniqueDocRef != f.UniqueDocRef || next.CertificateNumber != f.CertificateNumber
	return next, changed, nil
}

// writeOnce refuses a reference that would replace a different stored one.
func writeOnce(field, stored, sent string) error {
	if stored != "" && sent != "" && sent != stored {
		return Errorf(ECONFLICT, "The %s of a fulfillment cannot be changed once stored.", field)
	}
	return nil
}

// CanAttachCertificate reports as an error why a certificate may not be
// attached to f: only while it is Procured (ECONFLICT otherwise).
func (f Fulfillment) CanAttachCertificate() error {
	if f.Status != StatusProcured {
		return Errorf(ECONFLICT, "A certificate can be attached only while the fulfillment is %s; it is %s.", StatusProcured, f.Status)
	}
	return nil
}

// CanUploadDocument reports as an error why the caller's document may not
// be uploaded to o: only while o is not cancelled and every fulfillment is
// Pending (ECONFLICT).
func (o Order) CanUploadDocument() error {
	if err := o.NotCancelled(CancelledDocument); err != nil {
		return err
	}
	for _, f := range o.Fulfillments {
		if f.Status != StatusPending {
			return Errorf(ECONFLICT, "A document can be uploaded only while every fulfillment of the order is %s.", StatusPending)
		}
	}
	return nil
}

// Fulfillment returns the index of o's fulfillment with the given
// documentId, or -1.
func (o Order) Fulfillment(documentID string) int {
	for i, f := range o.Fulfillments {
		if f.DocumentID == documentID {
			return i
		}
	}
	return -1
}

// QueueStatus is the status under which o waits in the operators' work
// queue: that of its least advanced fulfillment (an order has one
// fulfillment today; with several, the order waits for its slowest); ""
// for a cancelled order, which waits in no queue.
func (o Order) QueueStatus() string {
	if o.Cancelled() {
		return ""
	}
	rank := len(statuses) - 1
	for _, f := range o.Fulfillments {
		if r := StatusRank(f.Status); r >= 0 && r < rank {
			rank = r
		}
	}
	return statuses[rank]
}

// Files returns the files o holds (its caller's document, its fulfillments'
// certificates), as pointers into o, so that a caller may fill in their
// addresses.
func (o *Order) Files() []*File {
	var fs []*File
	if o.StampDuty.UploadedDocument != nil {
		fs = append(fs, o.StampDuty.UploadedDocument)
	}
	for i := range o.Fulfillments {
		if f := o.Fulfillments[i].CertificateFile; f != nil {
			fs = append(fs, f)
		}
	}
	return fs
}

// ForCaller returns o as its caller sees it: the operators' identities
// removed from every status history.
func (o Order) ForCaller() Order {
	ff := make([]Fulfillment, len(o.Fulfillments))
	for i, f := range o.Fulfillments {
		h := make([]StatusEntry, len(f.History))
		for j, e := range f.History {
			e.By = ""
			h[j] = e
		}
		f.History = h
		ff[i] = f
	}
	o.Fulfillments = ff
	return o
}

// CheckCertificateNumber refuses cn as the certificate number of paper i
// of o when another paper of o has it (papers.md: two papers of one order
// never share a certificate number): ECONFLICT naming certificate_number,
// as the service-wide claim's refusal does, so that a move that loses a
// race answers alike whichever of the two checks saw the winner first.
// "" is no number.
func (o Order) CheckCertificateNumber(i int, cn string) error {
	for k, f := range o.Fulfillments {
		if k != i && cn != "" && f.CertificateNumber == cn {
			const msg = "The certificate_number of a fulfillment cannot be another fulfillment's of the same order."
			return &Error{Code: ECONFLICT, Message: msg,
				Fields: []FieldError{{Path: "certificate_number", Message: msg}}}
		}
	}
	return nil
}
