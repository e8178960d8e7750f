package stampduty

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// TestReferences are the references a test order's paper is given when it
// fulfils itself (test-mode.md, "Test orders fulfil themselves"): a
// unique_doc_ref for Created and a certificate_number for Procured.
type TestReferences struct {
	UniqueDocRef      string
	CertificateNumber string
}

// MadeUpReferences returns the references of the paper paperID of the test
// order orderID, whose state is state. They are
//
//   - valid: each passes the check an operator's move applies (ValidDocRef,
//     ValidCertificateNumber), the certificate number's two letters after
//     "IN-" being the state's code (StateCode);
//   - deterministic: the same ids give the same references, so a step that
//     is retried writes the values it wrote before (stored references never
//     change: a different value would be refused as a conflict);
//   - plainly made up: the doc ref reads SPECIMEN-<code>-<16 hex digits>,
//     and the certificate number's 14 digits begin with four zeros and it
//     ends in T (for test), IN-KA0000dddddddddd T, so no one takes one for
//     an issued certificate.
//
// The varying part is a SHA-256 of the two ids (10 decimal digits and 16
// hex digits of it), so two papers of the same order, or two orders, differ.
// A state the service does not accept is an internal error: a stored order
// always has one.
func MadeUpReferences(orderID, paperID, state string) (TestReferences, error) {
	code, ok := StateCode(state)
	if !ok {
		return TestReferences{}, Internal(fmt.Errorf("made-up references for order %s: unknown state %q", orderID, state))
	}
	sum := sha256.Sum256([]byte(orderID + "\x00" + paperID))
	digits := binary.BigEndian.Uint64(sum[0:8]) % 1e10
	return TestReferences{
		UniqueDocRef:      fmt.Sprintf("SPECIMEN-%s-%016X", code, sum[8:16]),
		CertificateNumber: fmt.Sprintf("IN-%s0000%010dT", code, digits),
	}, nil
}
