package stampduty

import (
	"reflect"
	"regexp"
	"testing"
	"time"
)

var documentIDPattern = regexp.MustCompile(`^[a-z][0-9a-z]{23}$`)

func TestNewDocumentID(t *testing.T) {
	const draws = 20000
	seen := make(map[string]bool, draws)
	var first [26]int
	var rest [36]int
	for range draws {
		id, err := NewDocumentID()
		if err != nil {
			t.Fatal(err)
		}
		if !documentIDPattern.MatchString(id) {
			t.Fatalf("NewDocumentID() = %q, does not match %s", id, documentIDPattern)
		}
		if seen[id] {
			t.Fatalf("NewDocumentID() repeated %q", id)
		}
		seen[id] = true
		first[id[0]-'a']++
		for i := 1; i < len(id); i++ {
			rest[indexByte(docIDRest, id[i])]++
		}
	}
	t.Run("Length", func(t *testing.T) {
		for id := range seen {
			if got, want := len(id), 24; got != want {
				t.Fatalf("len(%q) = %d, want %d", id, got, want)
			}
			break
		}
	})
	// With uniform draws each count is within a few standard deviations of
	// its mean; a biased modulo (256 % 36 != 0) would show in the rest.
	t.Run("FirstCharacterUniform", func(t *testing.T) {
		mean := float64(draws) / 26
		for i, n := range first {
			if d := float64(n) - mean; d > 0.25*mean || d < -0.25*mean {
				t.Errorf("first character %q drawn %d times, mean %.0f", rune('a'+i), n, mean)
			}
		}
	})
	t.Run("OtherCharactersUniform", func(t *testing.T) {
		mean := float64(draws*23) / 36
		for i, n := range rest {
			if d := float64(n) - mean; d > 0.05*mean || d < -0.05*mean {
				t.Errorf("character %q drawn %d times, mean %.0f", docIDRest[i], n, mean)
			}
		}
	})
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	panic("not in alphabet: " + string(c))
}

func TestFormatTime(t *testing.T) {
	ist := time.FixedZone("IST", 5*3600+1800)
	cases := []struct {
		name string
		in   time.Time
		want string
	}{
		{"UTC", time.Date(2026, 11, 21, 4, 9, 0, 123000000, time.UTC), "2026-11-21T04:09:00.123Z"},
		{"ConvertedToUTC", time.Date(2026, 11, 21, 9, 39, 0, 123000000, ist), "2026-11-21T04:09:00.123Z"},
		{"DayChangesInUTC", time.Date(2026, 1, 1, 3, 0, 0, 0, ist), "2025-12-31T21:30:00.000Z"},
		{"ZeroMilliseconds", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "2026-01-02T03:04:05.000Z"},
		{"MillisecondsTruncated", time.Date(2026, 1, 2, 3, 4, 5, 999999999, time.UTC), "2026-01-02T03:04:05.999Z"},
		{"OneMillisecond", time.Date(2026, 1, 2, 3, 4, 5, 1000000, time.UTC), "2026-01-02T03:04:05.001Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := FormatTime(tc.in), tc.want; got != want {
				t.Errorf("FormatTime(%v) = %q, want %q", tc.in, got, want)
			}
			back, err := time.Parse(time.RFC3339Nano, FormatTime(tc.in))
			if err != nil {
				t.Fatalf("FormatTime output is not RFC 3339: %v", err)
			}
			if got, want := back, tc.in.Truncate(time.Millisecond); !got.Equal(want) {
				t.Errorf("parsed back %v, want %v", got, want)
			}
		})
	}
}

func TestNewOrder(t *testing.T) {
	art := Article{ID: 42, DocumentID: "k3j2h4g5f6d7s8a9p0o1i2u3", PurposeName: "Rent Agreement", State: "Karnataka", Min: 100, Max: 500}
	ids := NewOrderIDs(7, 1)
	now := time.Date(2026, 11, 21, 9, 39, 0, 123456789, time.FixedZone("IST", 5*3600+1800))
	o, err := NewOrder(fullRequest, art, 321, ids, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("OrderFields", func(t *testing.T) {
		if got, want := o.ID, int64(7); got != want {
			t.Errorf("ID = %d, want %d", got, want)
		}
		if !documentIDPattern.MatchString(o.DocumentID) {
			t.Errorf("DocumentID = %q", o.DocumentID)
		}
		if got, want := o.CreatedAt, "2026-11-21T04:09:00.123Z"; got != want {
			t.Errorf("CreatedAt = %q, want %q", got, want)
		}
		if got, want := o.UpdatedAt, o.CreatedAt; got != want {
			t.Errorf("UpdatedAt = %q, want CreatedAt %q", got, want)
		}
	})
	t.Run("OnePendingFulfillment", func(t *testing.T) {
		if got, want := len(o.Fulfillments), 1; got != want {
			t.Fatalf("%d fulfillments, want %d", got, want)
		}
		f := o.Fulfillments[0]
		if !documentIDPattern.MatchString(f.DocumentID) {
			t.Errorf("fulfillment DocumentID = %q", f.DocumentID)
		}
		if f.DocumentID == o.DocumentID {
			t.Errorf("fulfillment and order share documentId %q", f.DocumentID)
		}
		want := Fulfillment{ID: 8, DocumentID: f.DocumentID, Status: StatusPending, UniqueDocRef: "", CertificateNumber: "", CertificateFile: nil,
			History: []StatusEntry{{Status: StatusPending, At: o.CreatedAt}}}
		if !reflect.DeepEqual(f, want) {
			t.Errorf("fulfillment = %+v, want %+v", f, want)
		}
	})
	t.Run("StampDuty", func(t *testing.T) {
		want := StampDuty{
			ID:                 9,
			Amount:             321,
			Description:        "Rent agreement for flat 4B, 2nd floor.",
			FirstPartyName:     "Ravi Kumar",
			FirstPartyAddress:  "12/3, MG Road: Bengaluru - 560001",
			FirstPartyPAN:      "ABCDE1234F",
			SecondPartyName:    "Anita Sharma",
			SecondPartyAddress: `Flat 4B\Tower 2, Indiranagar`,
			SecondPartyPAN:     "PQRST6789Z",
			PaidBy:             "First Party",
			PurchasedBy:        "Ravi Kumar (agent)",
			Quantity:           1,
			TotalAmount:        321,
			State:              "Karnataka",
			ConsiderationPrice: 100000,
			MobileNumber:       "9876543210",
			UploadedDocument:   nil,
			StatePurpose:       StatePurpose{ID: 42, DocumentID: "k3j2h4g5f6d7s8a9p0o1i2u3", PurposeName: "Rent Agreement"},
		}
		if got := o.StampDuty; !reflect.DeepEqual(got, want) {
			t.Errorf("StampDuty =\n%+v\nwant\n%+v", got, want)
		}
	})
	t.Run("OnePendingFulfillmentPerPaper", func(t *testing.T) {
		req := fullRequest
		req.Quantity = 3
		o, err := NewOrder(req, art, 321, NewOrderIDs(7, 3), now)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(o.Fulfillments), 3; got != want {
			t.Fatalf("%d fulfillments, want %d", got, want)
		}
		seen := map[string]bool{o.DocumentID: true}
		for k, f := range o.Fulfillments {
			if got, want := f.ID, int64(8+k); got != want {
				t.Errorf("paper %d: id %d, want %d (the ids after the order's, oldest first)", k, got, want)
			}
			if f.Status != StatusPending || len(f.History) != 1 || !documentIDPattern.MatchString(f.DocumentID) || seen[f.DocumentID] {
				t.Errorf("paper %d = %+v: want Pending with its own documentId", k, f)
			}
			seen[f.DocumentID] = true
		}
		if got, want := o.StampDuty.ID, int64(11); got != want {
			t.Errorf("stamp duty id %d, want %d", got, want)
		}
		if sd := o.StampDuty; sd.Amount != 321 || sd.Quantity != 3 || sd.TotalAmount != 963 {
			t.Errorf("amount %d quantity %d total_amount %d, want 321 3 963", sd.Amount, sd.Quantity, sd.TotalAmount)
		}
	})
	t.Run("FreshDocumentIDs", func(t *testing.T) {
		o2, err := NewOrder(fullRequest, art, 321, ids, now)
		if err != nil {
			t.Fatal(err)
		}
		if o2.DocumentID == o.DocumentID || o2.Fulfillments[0].DocumentID == o.Fulfillments[0].DocumentID {
			t.Error("two orders got the same documentId")
		}
	})
	for name, bad := range map[string]OrderIDs{
		"ZeroOrderID":        {0, []int64{8}, 9},
		"ZeroFulfillmentID":  {7, []int64{0}, 9},
		"NegativeStampID":    {7, []int64{8}, -1},
		"FewerIDsThanPapers": {7, nil, 9},
		"MoreIDsThanPapers":  {7, []int64{8, 10}, 9},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewOrder(fullRequest, art, 321, bad, now)
			if got, want := ErrorCode(err), EINTERNAL; got != want {
				t.Errorf("NewOrder with ids %+v: code %q, want %q", bad, got, want)
			}
		})
	}
}
