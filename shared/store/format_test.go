package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/auth"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/storetest"
)

// Attribute values, for items written as literals.
func avS(v string) types.AttributeValue  { return &types.AttributeValueMemberS{Value: v} }
func avN(v string) types.AttributeValue  { return &types.AttributeValueMemberN{Value: v} }
func avBool(v bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: v} }
func avL(v ...types.AttributeValue) types.AttributeValue {
	return &types.AttributeValueMemberL{Value: v}
}
func avM(v map[string]types.AttributeValue) types.AttributeValue {
	return &types.AttributeValueMemberM{Value: v}
}

// putItem writes item as it is to the table of logicalID, around the store:
// an item of an older format, or one the store would refuse to write.
func putItem(t testing.TB, env *storetest.Env, logicalID string, item map[string]types.AttributeValue) {
	t.Helper()
	if _, err := env.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(env.Table(logicalID)), Item: item}); err != nil {
		t.Fatal(err)
	}
}

// getItem reads the item of key from the table of logicalID as it is
// stored (a consistent read, around the store); nil when there is none.
func getItem(t testing.TB, env *storetest.Env, logicalID string, key map[string]types.AttributeValue) map[string]types.AttributeValue {
	t.Helper()
	out, err := env.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(env.Table(logicalID)), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// storedOrder is an order item exactly as the store wrote it before orders
// could be fulfilled (no version, queue keys, status history, updatedAt or
// files), and storedOrderValue the order it holds.
func storedOrder(owner string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"owner": avS(owner), "seq": avN("1"), "id": avN("101"), "doc": avS("o2ZQm3X8pV1nR7tK4wY9sL0c"), "at": avS("2026-11-21T04:09:00.123Z"),
		"ff": avL(
			avM(map[string]types.AttributeValue{"id": avN("102"), "doc": avS("f1"), "st": avS("Pending"), "ref": avS(""), "cn": avS("")}),
			avM(map[string]types.AttributeValue{"id": avN("9"), "doc": avS("f"), "st": avS("Pending"), "ref": avS(""), "cn": avS("")}),
		),
		"sd": avM(map[string]types.AttributeValue{
			"id": avN("103"), "amt": avN("20"), "desc": avS("N/A"),
			"n1": avS("Asha"), "a1": avS(`12, MG Road \ Bengaluru`), "p1": avS("ABCDE1234F"),
			"n2": avS("B"), "a2": avS(""), "p2": avS(""),
			"pb": avS("First Party"), "pu": avS("ü≠"), "q": avN("1"), "state": avS("Karnataka"),
			"cp": avN("0"), "mob": avS("9876543210"),
			"aid": avN("3"), "adoc": avS("a"), "purpose": avS("Affidavit"),
		}),
	}
}

var storedOrderValue = stampduty.Order{ID: 101, DocumentID: "o2ZQm3X8pV1nR7tK4wY9sL0c", CreatedAt: "2026-11-21T04:09:00.123Z",
	UpdatedAt: "2026-11-21T04:09:00.123Z",
	Fulfillments: []stampduty.Fulfillment{
		{ID: 102, DocumentID: "f1", Status: "Pending", History: []stampduty.StatusEntry{{Status: "Pending", At: "2026-11-21T04:09:00.123Z"}}},
		{ID: 9, DocumentID: "f", Status: "Pending", History: []stampduty.StatusEntry{{Status: "Pending", At: "2026-11-21T04:09:00.123Z"}}},
	},
	StampDuty: stampduty.StampDuty{ID: 103, Amount: 20, Description: "N/A", FirstPartyName: "Asha", FirstPartyAddress: `12, MG Road \ Bengaluru`,
		FirstPartyPAN: "ABCDE1234F", SecondPartyName: "B", PaidBy: "First Party", PurchasedBy: "ü≠", Quantity: 1, TotalAmount: 20, State: "Karnataka",
		MobileNumber: "9876543210", StatePurpose: stampduty.StatePurpose{ID: 3, DocumentID: "a", PurposeName: "Affidavit"}},
	Livemode: true, // as read under a live owner key: never stored
}

// render writes an item in DynamoDB's JSON form with its names sorted, for messages.
func render(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return fmt.Sprintf("{S:%q}", v.Value)
	case *types.AttributeValueMemberN:
		return "{N:" + v.Value + "}"
	case *types.AttributeValueMemberBOOL:
		return fmt.Sprintf("{BOOL:%v}", v.Value)
	case *types.AttributeValueMemberL:
		parts := make([]string, len(v.Value))
		for i, e := range v.Value {
			parts[i] = render(e)
		}
		return "{L:[" + strings.Join(parts, ",") + "]}"
	case *types.AttributeValueMemberM:
		keys := make([]string, 0, len(v.Value))
		for k := range v.Value {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + render(v.Value[k])
		}
		return "{M:{" + strings.Join(parts, ",") + "}}"
	}
	return fmt.Sprintf("%T", v)
}

// checkSameItem fails unless got and want are the same item.
func checkSameItem(t *testing.T, got, want map[string]types.AttributeValue) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stored item\n%s\nwant\n%s", render(avM(got)), render(avM(want)))
	}
}

// TestStoredFormat: items go through attributevalue, and the stored format
// is the one the store has always written: items written before read back
// the same, and what the store writes now is attribute for attribute what
// it wrote then.
func TestStoredFormat(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	db := env.DB()

	t.Run("OrderWrittenBeforeReads", func(t *testing.T) {
		putItem(t, env, "OrdersTable", storedOrder("before"))
		got, total, err := db.Orders(env.Table("OrdersTable")).Page(ctx, "before", 1, 10)
		if err != nil {
			t.Fatal(err)
		}
		if total != 1 || len(got) != 1 {
			t.Fatalf("total %d, %d orders; want 1, 1", total, len(got))
		}
		want, _ := json.Marshal(storedOrderValue)
		if got, _ := json.Marshal(got[0]); string(got) != string(want) {
			t.Errorf("read\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("OrderWrittenAsBeforeWithVersionQueueAndHistory", func(t *testing.T) {
		seq, err := db.Orders(env.Table("OrdersTable")).Create(ctx, "now", storedOrderValue)
		if err != nil || seq != 1 {
			t.Fatalf("Create = %d, %v; want 1", seq, err)
		}
		want := storedOrder("now")
		want["v"], want["qs"], want["qk"] = avN("1"), avS("Pending#11"), avS("2026-11-21T04:09:00.123Z#o2ZQm3X8pV1nR7tK4wY9sL0c") // qs: the status and its shard
		for _, f := range want["ff"].(*types.AttributeValueMemberL).Value {
			f.(*types.AttributeValueMemberM).Value["h"] = avL(avM(map[string]types.AttributeValue{"st": avS("Pending"), "at": avS("2026-11-21T04:09:00.123Z")}))
		}
		checkSameItem(t, getItem(t, env, "OrdersTable", map[string]types.AttributeValue{"owner": avS("now"), "seq": avN("1")}), want)
	})
	t.Run("OrderWithPendingEventsWritesItsOutbox", func(t *testing.T) {
		prev, st := "Pending", "Created"
		events := []stampduty.Pending{
			{ID: "evt_a00000000000000000000001", Type: stampduty.EventOrderCreated, At: "2026-11-21T04:09:00.123Z", Order: storedOrderValue},
			{ID: "evt_a00000000000000000000002", Type: stampduty.EventOrderStatusChanged, At: "2026-11-21T04:10:00.000Z",
				PreviousStatus: &prev, Status: &st, Order: storedOrderValue},
		}
		ords := db.Orders(env.Table("OrdersTable"))
		seq, err := ords.Create(ctx, "outbox", storedOrderValue, events...)
		if err != nil || seq != 1 {
			t.Fatalf("Create = %d, %v; want 1", seq, err)
		}
		// Each event holds the order as the order's item does, without
		// its key, version and index keys; the newest leaves it out when
		// it is the item's own order (it is read back from the item).
		snapshot := storedOrder("outbox")
		delete(snapshot, "owner")
		delete(snapshot, "seq")
		for _, f := range snapshot["ff"].(*types.AttributeValueMemberL).Value {
			f.(*types.AttributeValueMemberM).Value["h"] = avL(avM(map[string]types.AttributeValue{"st": avS("Pending"), "at": avS("2026-11-21T04:09:00.123Z")}))
		}
		want := storedOrder("outbox")
		want["v"], want["qs"], want["qk"] = avN("1"), avS("Pending#11"), avS("2026-11-21T04:09:00.123Z#o2ZQm3X8pV1nR7tK4wY9sL0c")
		want["ff"] = snapshot["ff"]
		want["ob"] = avL(
			avM(map[string]types.AttributeValue{"id": avS("evt_a00000000000000000000001"), "t": avS("order.created"),
				"at": avS("2026-11-21T04:09:00.123Z"), "o": avM(snapshot)}),
			avM(map[string]types.AttributeValue{"id": avS("evt_a00000000000000000000002"), "t": avS("order.status_changed"),
				"at": avS("2026-11-21T04:10:00.000Z"), "ps": avS("Pending"), "st": avS("Created")}),
		)
		want["obp"], want["obk"] = avS("pending#11"), avS("2026-11-21T04:09:00.123Z#o2ZQm3X8pV1nR7tK4wY9sL0c")
		checkSameItem(t, getItem(t, env, "OrdersTable", map[string]types.AttributeValue{"owner": avS("outbox"), "seq": avN("1")}), want)
		read, err := ords.Reread(ctx, orders.Stored{OpsOrder: stampduty.OpsOrder{Owner: "outbox"}, Seq: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(read.Outbox, events) {
			t.Errorf("outbox read back\n%+v\nwant\n%+v", read.Outbox, events)
		}
		// As stored before: every event with its o, under the unsharded key.
		old := maps.Clone(want)
		old["owner"], old["obp"] = avS("outbox-old"), avS("pending")
		old["ob"] = avL(want["ob"].(*types.AttributeValueMemberL).Value[0], avM(map[string]types.AttributeValue{
			"id": avS("evt_a00000000000000000000002"), "t": avS("order.status_changed"), "at": avS("2026-11-21T04:10:00.000Z"),
			"ps": avS("Pending"), "st": avS("Created"), "o": avM(snapshot)}))
		if _, err := env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Table("OrdersTable")), Item: old}); err != nil {
			t.Fatal(err)
		}
		read, err = ords.Reread(ctx, orders.Stored{OpsOrder: stampduty.OpsOrder{Owner: "outbox-old"}, Seq: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(read.Outbox, events) {
			t.Errorf("outbox stored before, read back\n%+v\nwant\n%+v", read.Outbox, events)
		}
	})
	t.Run("FilesWrittenWithoutAddresses", func(t *testing.T) {
		o := storedOrderValue
		file := &stampduty.File{ID: 10, DocumentID: "g", Name: "c.pdf", Mime: "application/pdf", Size: 42, SHA256: "ab12",
			URL: "https://files.example/c.pdf", CreatedAt: "2026-11-21T05:00:00.000Z", Key: "certificates/o/g"}
		o.StampDuty.UploadedDocument = file
		seq, err := db.Orders(env.Table("OrdersTable")).Create(ctx, "files", o)
		if err != nil || seq != 1 {
			t.Fatalf("Create = %d, %v; want 1", seq, err)
		}
		item := getItem(t, env, "OrdersTable", map[string]types.AttributeValue{"owner": avS("files"), "seq": avN("1")})
		got := item["sd"].(*types.AttributeValueMemberM).Value["ud"]
		want := avM(map[string]types.AttributeValue{"id": avN("10"), "doc": avS("g"), "name": avS("c.pdf"), "mime": avS("application/pdf"),
			"size": avN("42"), "sha": avS("ab12"), "key": avS("certificates/o/g"), "at": avS("2026-11-21T05:00:00.000Z")})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("stored file\n%s\nwant\n%s", render(got), render(want))
		}
	})
}

// TestStoredFormatOfOtherTables: as TestStoredFormat, for the articles,
// tokens and idempotency tables.
func TestStoredFormatOfOtherTables(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	db := env.DB()

	t.Run("ArticleWrittenBeforeReads", func(t *testing.T) {
		putItem(t, env, "ArticlesTable", map[string]types.AttributeValue{
			"purpose_name": avS("Sale Deed"), "state": avS("Delhi"), "id": avN("4"), "doc": avS("d"), "min": avN("100"), "max": avN("900"),
			"follow": avBool(true), "factor": avN("0.065"),
		})
		putItem(t, env, "ArticlesTable", map[string]types.AttributeValue{
			"purpose_name": avS("Affidavit"), "state": avS("Delhi"), "id": avN("5"), "doc": avS("e"), "min": avN("0"), "max": avN("0"),
			"fixed": avN("20"), "follow": avBool(false),
		})
		arts := db.Articles(env.Table("ArticlesTable"))
		a, err := arts.Get(ctx, "Sale Deed", "Delhi")
		if err != nil {
			t.Fatal(err)
		}
		if a.ID != 4 || a.DocumentID != "d" || a.Min != 100 || a.Max != 900 || a.Fixed != nil || !a.FollowsConsideration || a.Factor == nil || a.Factor.String() != "0.065" {
			t.Errorf("Sale Deed = %+v", a)
		}
		a, err = arts.Get(ctx, "Affidavit", "Delhi")
		if err != nil {
			t.Fatal(err)
		}
		if a.ID != 5 || a.Fixed == nil || *a.Fixed != 20 || a.Factor != nil || a.FollowsConsideration {
			t.Errorf("Affidavit = %+v", a)
		}
	})
	t.Run("TokenWrittenBeforeReads", func(t *testing.T) {
		putItem(t, env, "TokensTable", map[string]types.AttributeValue{
			"hash": avS("abc123"), "owner": avS("alice"), "created_at": avS("2026-11-21T04:09:00.123456789Z"), "revoked_at": avS("2026-11-22T00:00:00Z"),
		})
		tok, err := db.Tokens(env.Table("TokensTable")).Token(ctx, "abc123")
		if err != nil {
			t.Fatal(err)
		}
		want := auth.Token{Hash: "abc123", Owner: "alice", CreatedAt: time.Date(2026, 11, 21, 4, 9, 0, 123456789, time.UTC),
			RevokedAt: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)}
		if tok.Hash != want.Hash || tok.Owner != want.Owner || !tok.CreatedAt.Equal(want.CreatedAt) || !tok.RevokedAt.Equal(want.RevokedAt) {
			t.Errorf("token = %+v, want %+v", tok, want)
		}
	})
	t.Run("KeyRecordWrittenTheSame", func(t *testing.T) {
		now := time.UnixMilli(1795000000123)
		_, claimed, err := db.Idempotency(env.Table("IdempotencyTable")).Claim(ctx, "alice", "k1", "fp", "doc1", now, 15*time.Second, 24*time.Hour)
		if err != nil || !claimed {
			t.Fatalf("Claim = %v, %v; want claimed", claimed, err)
		}
		checkSameItem(t, getItem(t, env, "IdempotencyTable", map[string]types.AttributeValue{"pk": avS("alice#k1")}), map[string]types.AttributeValue{
			"pk": avS("alice#k1"), "fp": avS("fp"), "st": avS(orders.KeyPending), "doc": avS("doc1"),
			"claimed": avN("1795000000123"), "lease": avN("1795000015123"), "expires": avN("1795086400"),
		})
	})
}

// TestCorruptItemsAreInternal: an item the store cannot read as what its
// table holds is an internal error (500), never a partial answer.
func TestCorruptItemsAreInternal(t *testing.T) {
	ctx := context.Background()
	env := storetest.New(t)
	db := env.DB()
	ordersTable := db.Orders(env.Table("OrdersTable"))

	for _, tc := range []struct {
		name   string
		change func(item map[string]types.AttributeValue)
	}{
		{"OrderAmountAString", func(item map[string]types.AttributeValue) {
			item["sd"].(*types.AttributeValueMemberM).Value["amt"] = avS("twenty")
		}},
		{"OrderWithoutStampDuty", func(item map[string]types.AttributeValue) { delete(item, "sd") }},
		{"OrderFulfillmentNotAMap", func(item map[string]types.AttributeValue) { item["ff"] = avL(avS("x")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			item := storedOrder(tc.name)
			tc.change(item)
			putItem(t, env, "OrdersTable", item)
			_, _, err := ordersTable.Page(ctx, tc.name, 1, 10)
			if got, want := stampduty.ErrorCode(err), stampduty.EINTERNAL; got != want {
				t.Errorf("code = %q, want %q (%v)", got, want, err)
			}
		})
	}
	t.Run("ArticleFactorNegative", func(t *testing.T) {
		putItem(t, env, "ArticlesTable", map[string]types.AttributeValue{
			"purpose_name": avS("Sale Deed"), "state": avS("Delhi"), "id": avN("4"), "doc": avS("d"), "min": avN("100"), "max": avN("900"),
			"follow": avBool(true), "factor": avN("-1"),
		})
		_, err := db.Articles(env.Table("ArticlesTable")).Get(ctx, "Sale Deed", "Delhi")
		if got, want := stampduty.ErrorCode(err), stampduty.EINTERNAL; got != want {
			t.Errorf("code = %q, want %q (%v)", got, want, err)
		}
	})
	t.Run("TokenOwnerNotAString", func(t *testing.T) {
		putItem(t, env, "TokensTable", map[string]types.AttributeValue{"hash": avS("h"), "owner": avBool(true), "created_at": avS("2026-11-21T04:09:00Z")})
		_, err := db.Tokens(env.Table("TokensTable")).Token(ctx, "h")
		if got, want := stampduty.ErrorCode(err), stampduty.EINTERNAL; got != want {
			t.Errorf("code = %q, want %q (%v)", got, want, err)
		}
	})
	t.Run("KeyRecordLiveWithClaimedAString", func(t *testing.T) {
		now := time.Now()
		putItem(t, env, "IdempotencyTable", map[string]types.AttributeValue{
			"pk": avS("alice#live"), "fp": avS("fp"), "st": avS(orders.KeyPending), "doc": avS("d"),
			"claimed": avS("yesterday"), "lease": avN("0"), "expires": avN(fmt.Sprint(now.Add(time.Hour).Unix())),
		})
		_, _, err := db.Idempotency(env.Table("IdempotencyTable")).Get(ctx, "alice", "live", now)
		if got, want := stampduty.ErrorCode(err), stampduty.EINTERNAL; got != want {
			t.Errorf("code = %q, want %q (%v)", got, want, err)
		}
	})
	t.Run("KeyRecordExpiredIsAbsentWhateverItHolds", func(t *testing.T) {
		now := time.Now()
		putItem(t, env, "IdempotencyTable", map[string]types.AttributeValue{
			"pk": avS("alice#gone"), "claimed": avS("yesterday"), "expires": avN(fmt.Sprint(now.Add(-time.Hour).Unix())),
		})
		if _, live, err := db.Idempotency(env.Table("IdempotencyTable")).Get(ctx, "alice", "gone", now); err != nil || live {
			t.Errorf("Get = %v, %v; want not live, no error", live, err)
		}
	})
}
