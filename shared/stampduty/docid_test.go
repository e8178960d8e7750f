package stampduty_test

import (
	"regexp"
	"testing"

	"stampduty/shared/stampduty"
)

// TestIDSeq: a documentId with its seq put in keeps the contract's shape
// and its random part, and gives its seq back; a random one almost never
// decodes.
func TestIDSeq(t *testing.T) {
	shape := regexp.MustCompile(`^[a-z][0-9a-z]{23}$`)
	for _, seq := range []int64{1, 2, 36, 1_000_000, stampduty.MaxIDSeq} {
		doc, err := stampduty.NewDocumentID()
		if err != nil {
			t.Fatal(err)
		}
		id := stampduty.WithSeq(doc, seq)
		if !shape.MatchString(id) {
			t.Errorf("WithSeq(%s, %d) = %q, not a documentId", doc, seq, id)
		}
		if got, ok := stampduty.IDSeq(id); !ok || got != seq {
			t.Errorf("IDSeq(%s) = %d, %v, want %d", id, got, ok, seq)
		}
		if !stampduty.SameOrderID(doc, id) || id[0] != 'x' && stampduty.SameOrderID(id, "x"+id[1:]) {
			t.Errorf("SameOrderID(%s, %s) is wrong", doc, id)
		}
	}
	if got := stampduty.WithSeq("short", 5); got != "short" {
		t.Errorf("WithSeq of a non-id = %q, want it unchanged", got)
	}
	decoded := 0
	for range 20000 {
		doc, err := stampduty.NewDocumentID()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := stampduty.IDSeq(doc); ok {
			decoded++
		}
	}
	// 1 in 32,768 on average: 20,000 random ids decode about 0.6 times.
	if decoded > 5 {
		t.Errorf("%d of 20000 random ids decode, want about 1 in 32768", decoded)
	}
	doc, err := stampduty.NewDocumentID()
	if err != nil {
		t.Fatal(err)
	}
	if a, b := stampduty.WithSeq(doc, 7), stampduty.WithSeq(doc, 8); a == b {
		t.Errorf("seqs 7 and 8 give the same id %s", a)
	}
}
