package stampduty

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestStateCode(t *testing.T) {
	t.Run("EveryAcceptedStateHasTwoLetters", func(t *testing.T) {
		for _, s := range States() {
			code, ok := StateCode(s)
			if !ok {
				t.Errorf("StateCode(%q): no code, want one for every state the service accepts", s)
				continue
			}
			if !regexp.MustCompile(`^[A-Z]{2}$`).MatchString(code) {
				t.Errorf("StateCode(%q) = %q, want two letters A-Z", s, code)
			}
		}
	})
	t.Run("NoCodeOfAStateNotAccepted", func(t *testing.T) {
		for s := range stateCodes {
			if !ValidState(s) {
				t.Errorf("stateCodes has %q, which ValidState refuses", s)
			}
		}
		for _, s := range []string{"", "Atlantis", "delhi", "Orissa", "Uttaranchal", "Daman and Diu"} {
			if code, ok := StateCode(s); ok {
				t.Errorf("StateCode(%q) = %q, true; want false", s, code)
			}
		}
	})
	t.Run("Distinct", func(t *testing.T) {
		seen := map[string]string{}
		for _, s := range States() {
			code, _ := StateCode(s)
			if other, dup := seen[code]; dup {
				t.Errorf("%s and %s share the code %q", other, s, code)
			}
			seen[code] = s
		}
	})
	// The codes ISO 3166-2:IN has today, where older lists differ.
	t.Run("Official", func(t *testing.T) {
		for s, want := range map[string]string{
			"Karnataka": "KA", "Delhi": "DL", "Maharashtra": "MH", "Chhattisgarh": "CG",
			"Odisha": "OD", "Telangana": "TS", "Uttarakhand": "UK", "Ladakh": "LA",
			"Dadra and Nagar Haveli and Daman and Diu": "DH", "Jammu and Kashmir": "JK",
			"Chandigarh": "CH", "Puducherry": "PY", "Lakshadweep": "LD",
		} {
			if got, _ := StateCode(s); got != want {
				t.Errorf("StateCode(%q) = %q, want %q", s, got, want)
			}
		}
	})
}

// The formats as lifecycle.md writes them (and the console's FORMATS in
// functions/console-pages/web/orders.js checks them), independent of
// ValidDocRef and ValidCertificateNumber.
var (
	specDocRef = regexp.MustCompile(`^[A-Z0-9\-/]{1,64}$`)
	specCN     = regexp.MustCompile(`^IN-[A-Z]{2}[0-9]{14}[A-Z]$`)
)

func TestMadeUpReferences(t *testing.T) {
	ids := []struct{ order, paper string }{
		{"a1b2c3d4e5f6g7h8i9j0k1l2", "f0000000000000000000000a"},
		{"zzzzzzzzzzzzzzzzzzzzzzzz", "f0000000000000000000000b"},
		{"o", "p"},
	}
	for _, state := range States() {
		for _, id := range ids {
			t.Run(state+"/"+id.order+"/"+id.paper, func(t *testing.T) {
				refs, err := MadeUpReferences(id.order, id.paper, state, 0)
				if err != nil {
					t.Fatalf("MadeUpReferences: %v", err)
				}
				if !specDocRef.MatchString(refs.UniqueDocRef) {
					t.Errorf("unique_doc_ref %q does not match lifecycle.md's format", refs.UniqueDocRef)
				}
				if !specCN.MatchString(refs.CertificateNumber) {
					t.Errorf("certificate_number %q does not match lifecycle.md's format", refs.CertificateNumber)
				}
				code, _ := StateCode(state)
				if got, want := refs.CertificateNumber[3:5], code; got != want {
					t.Errorf("certificate_number %q: letters after IN- = %q, want the state's code %q", refs.CertificateNumber, got, want)
				}
				// A live move's own check, then the moves themselves.
				f := fulfillmentAt(StatusPending)
				f.UniqueDocRef, f.CertificateNumber = "", ""
				f, _, err = f.Apply(Change{Status: StatusCreated, UniqueDocRef: refs.UniqueDocRef}, testAt, "")
				if err != nil {
					t.Fatalf("Pending → Created with unique_doc_ref %q: %v", refs.UniqueDocRef, err)
				}
				f, _, err = f.Apply(Change{Status: StatusProcured, CertificateNumber: refs.CertificateNumber}, testAt, "")
				if err != nil {
					t.Fatalf("Created → Procured with certificate_number %q: %v", refs.CertificateNumber, err)
				}
				if f.UniqueDocRef != refs.UniqueDocRef || f.CertificateNumber != refs.CertificateNumber {
					t.Errorf("stored %q, %q; want %q, %q", f.UniqueDocRef, f.CertificateNumber, refs.UniqueDocRef, refs.CertificateNumber)
				}
			})
		}
	}
	t.Run("PlainlyMadeUp", func(t *testing.T) {
		refs, err := MadeUpReferences(ids[0].order, ids[0].paper, "Karnataka", 0)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(refs.UniqueDocRef, "SPECIMEN-KA-") {
			t.Errorf("unique_doc_ref %q, want SPECIMEN-KA-…", refs.UniqueDocRef)
		}
		if !strings.HasPrefix(refs.CertificateNumber, "IN-KA0000") || !strings.HasSuffix(refs.CertificateNumber, "T") {
			t.Errorf("certificate_number %q, want IN-KA0000…T", refs.CertificateNumber)
		}
	})
	t.Run("SameIdsSameReferences", func(t *testing.T) {
		a, _ := MadeUpReferences(ids[0].order, ids[0].paper, "Delhi", 0)
		b, _ := MadeUpReferences(ids[0].order, ids[0].paper, "Delhi", 0)
		if a != b {
			t.Errorf("a retry made %+v, then %+v", a, b)
		}
	})
	t.Run("OtherPaperOrOrderOtherReferences", func(t *testing.T) {
		a, _ := MadeUpReferences(ids[0].order, ids[0].paper, "Delhi", 0)
		for _, other := range [][2]string{{ids[0].order, ids[1].paper}, {ids[1].order, ids[0].paper}, {ids[0].paper, ids[0].order}} {
			b, _ := MadeUpReferences(other[0], other[1], "Delhi", 0)
			if a.UniqueDocRef == b.UniqueDocRef || a.CertificateNumber == b.CertificateNumber {
				t.Errorf("order %s paper %s: %+v shares a reference with %+v", other[0], other[1], b, a)
			}
		}
	})
	t.Run("AnotherTryOtherReferencesTheSameEachTime", func(t *testing.T) {
		first, _ := MadeUpReferences(ids[0].order, ids[0].paper, "Delhi", 0)
		a, _ := MadeUpReferences(ids[0].order, ids[0].paper, "Delhi", 1)
		b, _ := MadeUpReferences(ids[0].order, ids[0].paper, "Delhi", 1)
		if a != b {
			t.Errorf("try 1 made %+v, then %+v", a, b)
		}
		if a.UniqueDocRef == first.UniqueDocRef || a.CertificateNumber == first.CertificateNumber {
			t.Errorf("try 1 %+v shares a reference with try 0 %+v", a, first)
		}
		if !ValidDocRef(a.UniqueDocRef) || !ValidCertificateNumber(a.CertificateNumber) {
			t.Errorf("try 1 %+v is not valid", a)
		}
	})
	t.Run("UnknownStateIsInternal", func(t *testing.T) {
		_, err := MadeUpReferences(ids[0].order, ids[0].paper, "Atlantis", 0)
		var e *Error
		if !errors.As(err, &e) || e.Code != EINTERNAL {
			t.Errorf("err = %v, want an EINTERNAL *Error", err)
		}
	})
}
