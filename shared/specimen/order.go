package specimen

import (
	"errors"
	"fmt"
	"strconv"

	"stampduty/shared/stampduty"
)

// Undrawable stands on a specimen for a value in a script its font cannot
// draw (a name in Devanagari, say), so that such an order still gets its
// certificate: the value itself is in the order.
const Undrawable = "(in a script this specimen cannot show: see the order)"

// ForOrder returns the specimen certificate of paper i (from 0) of the
// test order o (orders.Specimen): its parties, purpose, state, one paper's
// duty, the paper's certificate number and unique_doc_ref, the order's
// documentId and the paper's number. A value the font cannot draw is
// shown as Undrawable.
func ForOrder(o stampduty.Order, i int) ([]byte, error) {
	if i < 0 || i >= len(o.Fulfillments) {
		return nil, fmt.Errorf("specimen: order %s has no paper %d", o.DocumentID, i+1)
	}
	ff, sd := o.Fulfillments[i], o.StampDuty
	c := Certificate{
		FirstPartyName: sd.FirstPartyName, SecondPartyName: sd.SecondPartyName,
		Purpose: sd.StatePurpose.PurposeName, State: sd.State, Amount: strconv.FormatInt(sd.Amount, 10),
		CertificateNumber: ff.CertificateNumber, UniqueDocRef: ff.UniqueDocRef, OrderDocumentID: o.DocumentID,
		Paper: i + 1, Papers: len(o.Fulfillments),
	}
	fonts, err := parseFonts()
	if err != nil {
		return nil, err
	}
	for _, v := range []*string{&c.FirstPartyName, &c.SecondPartyName, &c.Purpose, &c.State} {
		if !drawable(fonts, *v) {
			*v = Undrawable
		}
	}
	b, err := PDF(c)
	if errors.Is(err, ErrUnsupportedText) { // a reference: the service made it, so never
		return nil, fmt.Errorf("specimen of order %s: %w", o.DocumentID, err)
	}
	return b, err
}
