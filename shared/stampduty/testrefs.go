package stampduty

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
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
// hex digits of it), so two papers of the same order, or two orders,
// differ, but only almost always: test papers' numbers are unique among
// test papers (papers.md), and ten digits over many test papers do meet.
// try, from 0, picks another set for a paper whose first is another
// paper's: try 0 hashes the two ids alone, try k > 0 the ids and k, so a
// retried step still meets the same sets in the same order.
// A state the service does not accept is an internal error: a stored order
// always has one.
func MadeUpReferences(orderID, paperID, state string, try int) (TestReferences, error) {
	code, ok := StateCode(state)
	if !ok {
		return TestReferences{}, Internal(fmt.Errorf("made-up references for order %s: unknown state %q", orderID, state))
	}
	in := orderID + "\x00" + paperID
	if try > 0 {
		in += "\x00" + strconv.Itoa(try)
	}
	sum := sha256.Sum256([]byte(in))
	digits := binary.BigEndian.Uint64(sum[0:8]) % 1e10
	return TestReferences{
		UniqueDocRef:      fmt.Sprintf("SPECIMEN-%s-%016X", code, sum[8:16]),
		CertificateNumber: fmt.Sprintf("IN-%s0000%010dT", code, digits),
	}, nil
}
