package stampduty

import (
	"reflect"
	"strings"
	"testing"
)

// ordered returns an order (created at testMade) whose fulfillments have
// reached the statuses ss.
func ordered(ss ...string) Order {
	o := Order{DocumentID: "k3aaaaaaaaaaaaaaaaaaaaaa", CreatedAt: testMade, UpdatedAt: testMade}
	for i, s := range ss {
		f := fulfillmentAt(s)
		f.DocumentID = string(rune('a'+i)) + f.DocumentID[1:]
		o.Fulfillments = append(o.Fulfillments, f)
	}
	return o
}

func TestCancel(t *testing.T) {
	reason := "Duplicate order"
	const (
		P, C, Pr, Pt = StatusPending, StatusCreated, StatusProcured, StatusPrinted
	)
	for _, tt := range []struct {
		name     string
		statuses []string
		who      string
		wantErr  string // the ECONFLICT message, "" for a cancel
	}{
		{"CallerEveryPending", []string{P}, ByCaller, ""},
		{"CallerEveryPendingOfThree", []string{P, P, P}, ByCaller, ""},
		{"ErrCallerOneCreated", []string{P, C}, ByCaller, MsgCallerCancel},
		{"ErrCallerCreated", []string{C}, ByCaller, MsgCallerCancel},
		{"ErrCallerPrinted", []string{Pt}, ByCaller, MsgCallerCancel},
		{"OperatorPending", []string{P}, ByOperator, ""},
		{"OperatorCreated", []string{C}, ByOperator, ""},
		{"OperatorCreatedAndPending", []string{C, P}, ByOperator, ""},
		{"ErrOperatorProcured", []string{Pr}, ByOperator, MsgOperatorCancel},
		{"ErrOperatorOneProcured", []string{P, C, Pr}, ByOperator, MsgOperatorCancel},
		{"ErrOperatorPrinted", []string{Pt, P}, ByOperator, MsgOperatorCancel},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := ordered(tt.statuses...)
			var r *string
			if tt.who == ByOperator {
				r = &reason
			}
			got, changed, err := o.Cancel(tt.who, r, testAt)
			if tt.wantErr != "" {
				if ErrorCode(err) != ECONFLICT || err.Error() != tt.wantErr || changed || !reflect.DeepEqual(got, o) {
					t.Errorf("Cancel = %v, %v, %v: want ECONFLICT %q and the order unchanged", got.CancelledAt, changed, err, tt.wantErr)
				}
				return
			}
			if err != nil || !changed {
				t.Fatalf("Cancel = %v, %v", changed, err)
			}
			want := o
			want.CancelledAt, want.UpdatedAt = &got.UpdatedAt, testAt
			want.Cancellation = &Cancellation{By: tt.who, Reason: r}
			if !reflect.DeepEqual(got, want) || *got.CancelledAt != testAt {
				t.Errorf("Cancel =\n%+v\nwant\n%+v", got, want)
			}
			if o.Cancelled() || !got.Cancelled() {
				t.Errorf("Cancelled() = %v before, %v after", o.Cancelled(), got.Cancelled())
			}
		})
	}
	t.Run("CallerReasonIsNotKept", func(t *testing.T) {
		got, _, err := ordered(P).Cancel(ByCaller, &reason, testAt)
		if err != nil || got.Cancellation.Reason != nil {
			t.Errorf("Cancel = %+v, %v: want a null reason", got.Cancellation, err)
		}
	})
	t.Run("SecondCancelChangesNothingWhoeverAsks", func(t *testing.T) {
		first, _, err := ordered(P).Cancel(ByCaller, nil, testAt)
		if err != nil {
			t.Fatal(err)
		}
		other := "Another reason"
		for _, who := range []string{ByCaller, ByOperator} {
			got, changed, err := first.Cancel(who, &other, "2026-11-22T00:00:00.000Z")
			if err != nil || changed || !reflect.DeepEqual(got, first) {
				t.Errorf("%s again: %+v, %v, %v: want the first cancel's order, unchanged", who, got.Cancellation, changed, err)
			}
		}
		// Even once a paper could no longer be cancelled (not reachable
		// through the API, but the rule is the order's).
		moved := first
		moved.Fulfillments = []Fulfillment{fulfillmentAt(Pt)}
		if _, changed, err := moved.Cancel(ByCaller, nil, testAt); err != nil || changed {
			t.Errorf("cancelled with a Printed paper, again: %v, %v", changed, err)
		}
	})
	t.Run("ErrOperatorWithoutReason", func(t *testing.T) {
		if _, _, err := ordered(P).Cancel(ByOperator, nil, testAt); ErrorCode(err) != EINTERNAL {
			t.Errorf("Cancel = %v, want %s", err, EINTERNAL)
		}
		if _, _, err := ordered(P).Cancel("someone", nil, testAt); ErrorCode(err) != EINTERNAL {
			t.Errorf("Cancel = %v, want %s", err, EINTERNAL)
		}
	})
}

func TestCancelledOrderRefuses(t *testing.T) {
	o := ordered(StatusPending)
	for _, what := range []string{CancelledMove, CancelledCertificate, CancelledDocument} {
		if err := o.NotCancelled(what); err != nil {
			t.Errorf("not cancelled: %v", err)
		}
	}
	if err := o.CanUploadDocument(); err != nil {
		t.Fatalf("CanUploadDocument before the cancel: %v", err)
	}
	if got, want := o.QueueStatus(), StatusPending; got != want {
		t.Fatalf("QueueStatus before the cancel = %q, want %q", got, want)
	}
	c, _, err := o.Cancel(ByCaller, nil, testAt)
	if err != nil {
		t.Fatal(err)
	}
	for what, want := range map[string]string{
		CancelledMove:        "The order is cancelled: its fulfillments can no longer move.",
		CancelledCertificate: "The order is cancelled: its fulfillments can no longer take a certificate.",
		CancelledDocument:    "The order is cancelled: it can no longer take a document.",
	} {
		if err := c.NotCancelled(what); ErrorCode(err) != ECONFLICT || err.Error() != want {
			t.Errorf("NotCancelled = %v, want ECONFLICT %q", err, want)
		}
	}
	if err := c.CanUploadDocument(); ErrorCode(err) != ECONFLICT || !strings.Contains(err.Error(), CancelledDocument) {
		t.Errorf("CanUploadDocument = %v, want the cancelled order's refusal", err)
	}
	if got := c.QueueStatus(); got != "" {
		t.Errorf("QueueStatus = %q, want none: a cancelled order leaves the queue", got)
	}
}

func TestWaits(t *testing.T) {
	o := ordered(StatusPending, StatusCreated)
	for status, want := range map[string]bool{StatusPending: true, StatusCreated: true, StatusProcured: false} {
		if got := o.Waits(status); got != want {
			t.Errorf("Waits(%s) = %v, want %v", status, got, want)
		}
	}
	reason := "x"
	c, _, err := o.Cancel(ByOperator, &reason, testAt)
	if err != nil {
		t.Fatal(err)
	}
	for _, status := range statuses {
		if c.Waits(status) {
			t.Errorf("a cancelled order waits in %s", status)
		}
	}
}

func TestCancelReason(t *testing.T) {
	str := func(s string) Value { return Value{Kind: String, Text: s} }
	reason := func(v Value) []Field { return []Field{{Name: "reason", Value: v}} }
	for _, tt := range []struct {
		name   string
		fields []Field
		want   string   // the reason, when accepted
		errs   []string // the failing members' messages
	}{
		{"One", reason(str("x")), "x", nil},
		{"TwoHundred", reason(str(strings.Repeat("é", 200))), strings.Repeat("é", 200), nil},
		{"KeptAsSent", reason(str(" Customer asked: duplicate ₹ ")), " Customer asked: duplicate ₹ ", nil},
		{"ErrMissing", nil, "", []string{"reason is a required field"}},
		{"ErrNull", reason(Value{Kind: Null}), "", []string{"reason is a required field"}},
		{"ErrEmpty", reason(str("")), "", []string{"reason must not be empty"}},
		{"ErrBlank", reason(str("   ")), "", []string{"reason must not be empty"}},
		{"ErrTwoHundredAndOne", reason(str(strings.Repeat("a", 201))), "", []string{"reason must be at most 200 characters"}},
		{"ErrNumber", reason(Value{Kind: Number, Text: "1"}), "", []string{"reason must be a string"}},
		{"ErrBool", reason(Value{Kind: Bool, Bool: true}), "", []string{"reason must be a string"}},
		{"ErrObject", reason(Value{Kind: Other}), "", []string{"reason must be a string"}},
		{"ErrNewline", reason(str("a\nb")), "", []string{"reason" + msgUnprintable}},
		{"ErrBidi", reason(str("a\u202eb")), "", []string{"reason" + msgUnprintable}},
		{"ErrLoneSurrogate", reason(Value{Kind: String, Text: "a\ufffd", LoneSurrogate: true}), "", []string{"reason" + msgUnprintable}},
		{"ErrUnknownMember", append(reason(str("x")), Field{Name: "by", Value: str("me")}), "", []string{"by is not a field of a cancellation"}},
		{"ErrUnknownAndMissing", []Field{{Name: "Reason", Value: str("x")}}, "", []string{"reason is a required field", "Reason is not a field of a cancellation"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CancelReason(tt.fields)
			if tt.errs == nil {
				if err != nil || got != tt.want {
					t.Errorf("CancelReason = %q, %v, want %q", got, err, tt.want)
				}
				return
			}
			e := asError(err)
			if e == nil || e.Code != EINVALID {
				t.Fatalf("CancelReason = %q, %v, want EINVALID", got, err)
			}
			var msgs []string
			for _, f := range e.Fields {
				msgs = append(msgs, f.Message)
				if !strings.HasPrefix(f.Message, f.Path+" ") {
					t.Errorf("the message %q does not name its member %q", f.Message, f.Path)
				}
			}
			if !reflect.DeepEqual(msgs, tt.errs) {
				t.Errorf("messages %q, want %q", msgs, tt.errs)
			}
		})
	}
}
