package stampduty

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

const (
	testRef  = "SUBIN-KAKA142330491727791236986Y"
	testCN   = "IN-KA93689528000869Y"
	testAt   = "2026-11-21T05:00:00.000Z"
	testBy   = "arn:aws:iam::123456789012:user/ops"
	testMade = "2026-11-21T04:09:00.123Z"
)

// fulfillmentAt returns a fulfillment that has reached status the way the
// lifecycle gets there: each earlier step in its history, its references
// and, from Printed on, its certificate file.
func fulfillmentAt(status string) Fulfillment {
	f := Fulfillment{ID: 2, DocumentID: "f0000000000000000000000a", Status: StatusPending,
		History: []StatusEntry{{Status: StatusPending, At: testMade}}}
	for _, s := range statuses[1 : StatusRank(status)+1] {
		f.Status = s
		f.History = append(f.History, StatusEntry{Status: s, At: testAt, By: testBy})
	}
	if StatusRank(status) >= 1 {
		f.UniqueDocRef = testRef
	}
	if StatusRank(status) >= 2 {
		f.CertificateNumber = testCN
	}
	if StatusRank(status) >= 3 {
		f.CertificateFile = &File{ID: 9, Name: "certificate.pdf"}
	}
	return f
}

func TestStatusRank(t *testing.T) {
	for i, s := range []string{"Pending", "Created", "Procured", "Printed"} {
		if got := StatusRank(s); got != i {
			t.Errorf("StatusRank(%q) = %d, want %d", s, got, i)
		}
	}
	for _, s := range []string{"", "pending", "PENDING", "Done", " Pending"} {
		if got := StatusRank(s); got != -1 {
			t.Errorf("StatusRank(%q) = %d, want -1", s, got)
		}
	}
}

func TestValidDocRef(t *testing.T) {
	for s, want := range map[string]bool{
		testRef: true, "A": true, "0/1-2": true, strings.Repeat("A", 64): true,
		"": false, strings.Repeat("A", 65): false, "subin": false, "A B": false,
		"A_B": false, "AÉ": false, "A\n": false,
	} {
		if got := ValidDocRef(s); got != want {
			t.Errorf("ValidDocRef(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestValidCertificateNumber(t *testing.T) {
	re := regexp.MustCompile(`^IN-[A-Z]{2}[0-9]{14}[A-Z]$`)
	for _, s := range []string{
		testCN, "IN-AA00000000000000A", "IN-ZZ99999999999999Z", "",
		"IN-KA9368952800086Y", "IN-KA936895280008691Y", "in-KA93689528000869Y",
		"IN-K193689528000869Y", "IN-KA93689528000869y", "IN-KA9368952800086AY",
		"IX-KA93689528000869Y", "IN_KA93689528000869Y", "IN-KA93689528000869Y\n",
	} {
		if got, want := ValidCertificateNumber(s), re.MatchString(s); got != want {
			t.Errorf("ValidCertificateNumber(%q) = %v, want %v (the pattern)", s, got, want)
		}
	}
}

// TestApplyMoves tries every (from, to) pair of statuses with every value a
// move may need: only one step forward, or staying, is ever allowed.
func TestApplyMoves(t *testing.T) {
	for _, from := range statuses {
		for _, to := range statuses {
			f := fulfillmentAt(from)
			if StatusRank(to) >= 3 {
				f.CertificateFile = &File{ID: 9}
			}
			got, changed, err := f.Apply(Change{Status: to, UniqueDocRef: testRef, CertificateNumber: testCN}, testAt, testBy)
			step := StatusRank(to) - StatusRank(from)
			switch {
			case step == 0 || step == 1:
				if err != nil {
					t.Errorf("%s → %s: %v, want no error", from, to, err)
				} else if got.Status != to {
					t.Errorf("%s → %s: status %s", from, to, got.Status)
				}
				if step == 1 && !changed {
					t.Errorf("%s → %s: changed = false", from, to)
				}
			default:
				want := "Cannot move a fulfillment from " + from + " to " + to + "."
				if ErrorCode(err) != ECONFLICT || ErrorMessage(err) != want {
					t.Errorf("%s → %s: %v (%s), want %s %q", from, to, err, ErrorCode(err), ECONFLICT, want)
				}
				if !reflect.DeepEqual(got, f) || changed {
					t.Errorf("%s → %s: refused move changed the fulfillment", from, to)
				}
			}
		}
	}
}

// moved is the want of a move one step forward: the fulfillment at status,
// with the step in its history and ref and cn stored where they are not "".
func moved(status, ref, cn string) func(Fulfillment) Fulfillment {
	return func(f Fulfillment) Fulfillment {
		f.Status = status
		if ref != "" {
			f.UniqueDocRef = ref
		}
		if cn != "" {
			f.CertificateNumber = cn
		}
		f.History = append(f.History, StatusEntry{Status: status, At: testAt, By: testBy})
		return f
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		from    Fulfillment
		change  Change
		code    Code   // "" for success
		message string // the error's message, when code is set
		want    func(Fulfillment) Fulfillment
		changed bool
	}{
		{
			name: "CreatedWithRef", from: fulfillmentAt(StatusPending),
			change: Change{Status: StatusCreated, UniqueDocRef: testRef},
			want:   moved(StatusCreated, testRef, ""), changed: true,
		},
		{
			name: "ErrCreatedWithoutRef", from: fulfillmentAt(StatusPending),
			change: Change{Status: StatusCreated}, code: EINVALID,
			message: "Invalid data. unique_doc_ref is required to move a fulfillment to Created",
		},
		{
			name: "CertificateNumberEarly", from: fulfillmentAt(StatusPending),
			change: Change{Status: StatusCreated, UniqueDocRef: testRef, CertificateNumber: testCN},
			want:   moved(StatusCreated, testRef, testCN), changed: true,
		},
		{
			name: "ProcuredUsesStoredRefAndSentNumber", from: fulfillmentAt(StatusCreated),
			change: Change{Status: StatusProcured, CertificateNumber: testCN},
			want:   moved(StatusProcured, "", testCN), changed: true,
		},
		{
			name: "ErrProcuredWithoutNumber", from: fulfillmentAt(StatusCreated),
			change: Change{Status: StatusProcured}, code: EINVALID,
			message: "Invalid data. certificate_number is required to move a fulfillment to Procured",
		},
		{
			name: "ErrPrintedWithoutFile", from: fulfillmentAt(StatusProcured),
			change: Change{Status: StatusPrinted}, code: ECONFLICT,
			message: "Cannot move a fulfillment to Printed before its certificate file is attached.",
		},
		{
			name:   "PrintedWithFile",
			from:   func() Fulfillment { f := fulfillmentAt(StatusProcured); f.CertificateFile = &File{ID: 9}; return f }(),
			change: Change{Status: StatusPrinted},
			want:   moved(StatusPrinted, "", ""), changed: true,
		},
		{
			name: "RepeatChangesNothing", from: fulfillmentAt(StatusCreated),
			change: Change{Status: StatusCreated, UniqueDocRef: testRef},
			want:   func(f Fulfillment) Fulfillment { return f },
		},
		{
			name: "RepeatWithoutValuesChangesNothing", from: fulfillmentAt(StatusProcured),
			change: Change{Status: StatusProcured},
			want:   func(f Fulfillment) Fulfillment { return f },
		},
		{
			name: "StayingStoresAMissingNumber", from: fulfillmentAt(StatusCreated),
			change:  Change{Status: StatusCreated, CertificateNumber: testCN},
			want:    func(f Fulfillment) Fulfillment { f.CertificateNumber = testCN; return f },
			changed: true,
		},
		{
			name: "ErrChangingTheRef", from: fulfillmentAt(StatusCreated),
			change: Change{Status: StatusProcured, UniqueDocRef: "OTHER-1", CertificateNumber: testCN}, code: ECONFLICT,
			message: "The unique_doc_ref of a fulfillment cannot be changed once stored.",
		},
		{
			name: "ErrChangingTheNumber", from: fulfillmentAt(StatusProcured),
			change: Change{Status: StatusProcured, CertificateNumber: "IN-DL00000000000000A"}, code: ECONFLICT,
			message: "The certificate_number of a fulfillment cannot be changed once stored.",
		},
		{
			name: "ErrUnknownStatus", from: fulfillmentAt(StatusPending),
			change: Change{Status: "Shipped"}, code: EINVALID,
			message: "Invalid data. order_status must be one of the following values: Pending, Created, Procured, Printed",
		},
		{
			name: "ErrEveryBadField", from: fulfillmentAt(StatusPending),
			change: Change{Status: "created", UniqueDocRef: "lower", CertificateNumber: "IN-1"}, code: EINVALID,
			message: "Invalid data. order_status must be one of the following values: Pending, Created, Procured, Printed; " +
				"unique_doc_ref must be 1 to 64 characters of A-Z, 0-9, - and /; " +
				"certificate_number must match IN-AA00000000000000A (IN-, two letters, 14 digits, a letter)",
		},
		{
			name: "ErrBadFormatBeforeBadMove", from: fulfillmentAt(StatusPending),
			change: Change{Status: StatusPrinted, UniqueDocRef: "bad ref"}, code: EINVALID,
			message: "Invalid data. unique_doc_ref must be 1 to 64 characters of A-Z, 0-9, - and /",
		},
		{
			name: "ErrStoredStatusUnknown", from: Fulfillment{Status: "Lost"},
			change: Change{Status: StatusCreated, UniqueDocRef: testRef}, code: EINTERNAL,
			message: "Internal Server Error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.from
			before.History = append([]StatusEntry(nil), tt.from.History...)
			got, changed, err := tt.from.Apply(tt.change, testAt, testBy)
			if tt.code != "" {
				if ErrorCode(err) != tt.code || ErrorMessage(err) != tt.message {
					t.Fatalf("Apply: %v (%s), want %s %q", err, ErrorCode(err), tt.code, tt.message)
				}
				if changed || !reflect.DeepEqual(got, before) {
					t.Errorf("Apply refused but returned %+v, changed %v", got, changed)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if want := tt.want(before); !reflect.DeepEqual(got, want) {
				t.Errorf("Apply =\n%+v\nwant\n%+v", got, want)
			}
			if changed != tt.changed {
				t.Errorf("changed = %v, want %v", changed, tt.changed)
			}
			if !reflect.DeepEqual(tt.from.History, before.History) {
				t.Errorf("Apply changed the history it was given: %+v", tt.from.History)
			}
		})
	}
}

func TestCanAttachCertificate(t *testing.T) {
	for _, s := range statuses {
		err := fulfillmentAt(s).CanAttachCertificate()
		if got, want := err == nil, s == StatusProcured; got != want {
			t.Errorf("%s: CanAttachCertificate() = %v", s, err)
		}
		if err != nil && ErrorCode(err) != ECONFLICT {
			t.Errorf("%s: code %s, want %s", s, ErrorCode(err), ECONFLICT)
		}
	}
}

func TestOrderLifecycle(t *testing.T) {
	order := func(ss ...string) Order {
		var o Order
		for i, s := range ss {
			f := fulfillmentAt(s)
			f.DocumentID = string(rune('a'+i)) + f.DocumentID[1:]
			o.Fulfillments = append(o.Fulfillments, f)
		}
		return o
	}
	t.Run("CanUploadDocument", func(t *testing.T) {
		if err := order(StatusPending, StatusPending).CanUploadDocument(); err != nil {
			t.Errorf("all Pending: %v", err)
		}
		if err := order(StatusPending, StatusCreated).CanUploadDocument(); ErrorCode(err) != ECONFLICT {
			t.Errorf("one Created: %v, want %s", err, ECONFLICT)
		}
	})
	t.Run("QueueStatusIsTheSlowest", func(t *testing.T) {
		for _, tt := range []struct {
			ss   []string
			want string
		}{
			{[]string{StatusPending}, StatusPending},
			{[]string{StatusPrinted}, StatusPrinted},
			{[]string{StatusPrinted, StatusCreated, StatusProcured}, StatusCreated},
		} {
			if got := order(tt.ss...).QueueStatus(); got != tt.want {
				t.Errorf("QueueStatus(%v) = %s, want %s", tt.ss, got, tt.want)
			}
		}
	})
	t.Run("FulfillmentByDocumentID", func(t *testing.T) {
		o := order(StatusPending, StatusCreated)
		if got := o.Fulfillment(o.Fulfillments[1].DocumentID); got != 1 {
			t.Errorf("Fulfillment(second) = %d, want 1", got)
		}
		if got := o.Fulfillment("nope"); got != -1 {
			t.Errorf("Fulfillment(unknown) = %d, want -1", got)
		}
	})
	t.Run("ForCallerHidesOperators", func(t *testing.T) {
		o := order(StatusPrinted)
		c := o.ForCaller()
		for _, e := range c.Fulfillments[0].History {
			if e.By != "" {
				t.Errorf("caller view shows by = %q", e.By)
			}
		}
		if got, want := len(c.Fulfillments[0].History), 4; got != want {
			t.Errorf("caller history has %d entries, want %d", got, want)
		}
		if o.Fulfillments[0].History[1].By != testBy {
			t.Errorf("ForCaller changed the order it was given")
		}
	})
}

func TestOrderFiles(t *testing.T) {
	doc, cert := &File{Key: "documents/o/d"}, &File{Key: "certificates/o/c"}
	o := Order{StampDuty: StampDuty{UploadedDocument: doc},
		Fulfillments: []Fulfillment{{}, {CertificateFile: cert}}}
	got := o.Files()
	if len(got) != 2 || got[0] != doc || got[1] != cert {
		t.Fatalf("Files() = %v, want the document then the certificate", got)
	}
	got[1].URL = "u"
	if o.Fulfillments[1].CertificateFile.URL != "u" {
		t.Error("Files() does not point into the order")
	}
	if fs := (&Order{Fulfillments: []Fulfillment{{}}}).Files(); len(fs) != 0 {
		t.Errorf("an order without files: %v", fs)
	}
}

func TestCheckCertificateNumber(t *testing.T) {
	o := Order{Fulfillments: []Fulfillment{{CertificateNumber: "IN-KA93689528000869Y"}, {}, {CertificateNumber: ""}}}
	for _, tc := range []struct {
		name string
		i    int
		cn   string
		want Code
	}{
		{"AnotherPapersNumber", 1, "IN-KA93689528000869Y", ECONFLICT},
		{"ItsOwnNumberAgain", 0, "IN-KA93689528000869Y", ""},
		{"ANewNumber", 1, "IN-KA11111111111111Y", ""},
		{"NoNumber", 1, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := o.CheckCertificateNumber(tc.i, tc.cn)
			if got := ErrorCode(err); got != tc.want {
				t.Errorf("CheckCertificateNumber(%d, %q) = %q, want %q", tc.i, tc.cn, got, tc.want)
			}
			// The refusal names its field, as the service-wide claim's does.
			var e *Error
			if err != nil && (!errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Path != "certificate_number") {
				t.Errorf("CheckCertificateNumber(%d, %q) = %#v, want it to name certificate_number", tc.i, tc.cn, err)
			}
		})
	}
}
