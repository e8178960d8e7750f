package fake_test

import (
	"context"
	"fmt"
	"testing"

	"stampduty/shared/auth"
	"stampduty/shared/function"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
	"stampduty/shared/testkit/fake"
)

// body decodes a valid order for the article, with the given amount.
func body(t *testing.T, amount int) *stampduty.OrderBody {
	t.Helper()
	members, err := function.DecodeObject(fmt.Appendf(nil, `{"amount": %d, "considerationPrice": 0, "purpose": "Rent Agreement",
		"state": "Karnataka", "paidBy": "First Party", "firstPartyMobileNumber": "9876543210",
		"firstPartyName": "Asha Rao", "secondPartyName": "Vikram Shah"}`, amount))
	if err != nil {
		t.Fatal(err)
	}
	return stampduty.NewOrderBody(stampjson.Fields(members))
}

// TestCreatorOverFakes runs the real workflow on the fake catalogue: an
// unknown purpose must fail as it does over the DynamoDB store.
func TestCreatorOverFakes(t *testing.T) {
	ctx := context.Background()
	t.Run("UnknownPurpose", func(t *testing.T) {
		empty := &orders.Creator{Articles: fake.Articles{}}
		_, err := empty.Create(ctx, "alice", body(t, 200), nil)
		if got, want := fmt.Sprint(err), "Purpose with the name: Rent Agreement cannot be found."; stampduty.ErrorCode(err) != stampduty.ENOTFOUND || got != want {
			t.Errorf("Create = %v, want ENOTFOUND %q", got, want)
		}
	})
}

// TestOrdersPage pages 7 orders of one owner, 3 a page, newest first.
func TestOrdersPage(t *testing.T) {
	ctx := context.Background()
	s := &fake.Orders{}
	for i := 1; i <= 7; i++ {
		if seq, err := s.Create(ctx, "alice", stampduty.Order{ID: int64(i)}); err != nil || seq != int64(i) {
			t.Fatalf("create %d: seq %d, %v", i, seq, err)
		}
	}
	s.Create(ctx, "bob", stampduty.Order{ID: 99})
	for _, tc := range []struct {
		owner      string
		page, size int
		want       string
	}{
		{"alice", 1, 3, "[7 6 5] of 7"}, {"alice", 3, 3, "[1] of 7"}, {"alice", 4, 3, "[] of 7"},
		{"alice", 1, 100, "[7 6 5 4 3 2 1] of 7"}, {"bob", 1, 3, "[99] of 1"}, {"carol", 1, 3, "[] of 0"},
	} {
		page, total, err := s.Slice(ctx, tc.owner, (tc.page-1)*tc.size, tc.size) // page tc.page
		ids := []int64{}
		for _, o := range page {
			ids = append(ids, o.ID)
		}
		if got := fmt.Sprintf("%v of %d", ids, total); err != nil || got != tc.want || page == nil {
			t.Errorf("Page(%s, %d, %d) = %s, %v; want %s", tc.owner, tc.page, tc.size, got, err, tc.want)
		}
	}
}

// TestTokens looks a token up by its hash, and an unknown one.
func TestTokens(t *testing.T) {
	h, err := auth.NewHasher("0123456789abcdef0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	tokens := fake.NewTokens(h, map[string]string{"secret": "alice"})
	if tok, err := tokens.Token(context.Background(), h.Hash("secret")); err != nil || tok.Owner != "alice" {
		t.Errorf("known token: %+v, %v", tok, err)
	}
	if _, err := tokens.Token(context.Background(), h.Hash("other")); stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
		t.Errorf("unknown token: %v, want ENOTFOUND", err)
	}
}
