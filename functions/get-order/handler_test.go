package main

import (
	"context"
	"encoding/json"
	"net/http"
	"stampduty/shared/duty"
	"strings"
	"testing"

	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
)

func TestMain(m *testing.M) { functest.Main(m) }

type orderBody struct {
	Data stampduty.Order `json:"data"`
	Meta json.RawMessage `json:"meta"`
}

func TestGetOrder(t *testing.T) {
	s := functest.New(t, "GetOrderFunction", wire)
	mine := functest.AddOrders(t, s.Env, localdb.DevOwner, 3)
	theirs := functest.AddOrders(t, s.Env, "someone-else", 1)
	get := func(headers map[string]string, doc string) functest.Response {
		return s.Invoke(functest.Request("GET", "/api/live-orders/"+doc, "", headers, ""))
	}

	t.Run("OwnOrder", func(t *testing.T) {
		get(functest.DevHeaders, mine[0].DocumentID) // the token is cached from here on; mine[1]'s key is not
		s.Proxy.Take()
		resp := get(functest.DevHeaders, mine[1].DocumentID)
		if resp.Status != http.StatusOK {
			t.Fatalf("status %d: %s", resp.Status, resp.Body)
		}
		var body orderBody
		if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
			t.Fatal(err)
		}
		// The one-order read adds the rule version the order was priced
		// with, whose canonical JSON hashes to its duty's rule.
		snap := body.Data.StampDuty.RuleSnapshot
		if snap == nil || snap.JSON == nil || body.Data.StampDuty.Duty == nil {
			t.Fatalf("duty %v, duty_rule_snapshot %v", body.Data.StampDuty.Duty, snap)
		}
		if hash, err := duty.Hash(snap.JSON); err != nil || hash != body.Data.StampDuty.Duty.Rule.Hash {
			t.Errorf("duty_rule_snapshot hashes to %s (%v), duty.rule.hash is %s", hash, err, body.Data.StampDuty.Duty.Rule.Hash)
		}
		mine[1].StampDuty.RuleSnapshot = snap
		want, _ := json.Marshal(mine[1])
		if got, _ := json.Marshal(body.Data); string(got) != string(want) {
			t.Errorf("order\n%s\nwant\n%s", got, want)
		}
		if string(body.Meta) != "{}" {
			t.Errorf("meta = %s, want {}", body.Meta)
		}
		// At most 2 calls and 1 RCU, whatever the number of orders: one
		// consistent Query of the range its documentId carries (the token
		// is cached).
		if got, want := s.Env.Operations(s.Proxy.Take()), "Query:OrdersTable=1"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
		s.Proxy.SetMode(storetest.Account)
		defer s.Proxy.SetMode(storetest.Record)
		get(functest.DevHeaders, mine[1].DocumentID)
		var units storetest.Capacity
		for _, c := range s.Proxy.Take() {
			if !c.Accounted {
				t.Fatalf("%s was not accounted: %v", c.Operation, s.Proxy.Err())
			}
			units = units.Add(c.Billed)
		}
		if units.Read <= 0 || units.Read > 1 || units.Write != 0 {
			t.Errorf("a one-order read costs %+v by DynamoDB's rules, want at most 1 RCU and no write", units)
		}
	})
	t.Run("OrderStoredBeforeIdsCarriedTheirSeq", func(t *testing.T) {
		// Its documentId is random: its key is found through the documentId index.
		old := functest.AddOrders(t, s.Env, "someone-else", 1)[0]
		old.DocumentID = "b" + strings.Repeat("y", 23)
		if _, err := s.Env.DB().Orders(s.Env.Table("OrdersTable")).Create(context.Background(), localdb.DevOwner, old); err != nil {
			t.Fatal(err)
		}
		s.Proxy.Take()
		if resp := get(functest.DevHeaders, old.DocumentID); resp.Status != http.StatusOK {
			t.Fatalf("status %d: %s", resp.Status, resp.Body)
		}
		if got, want := s.Env.Operations(s.Proxy.Take()), "Query:OrdersTable/index/by-document-keys=1 Query:OrdersTable=1"; got != want {
			t.Errorf("calls = %s, want %s", got, want)
		}
	})
	t.Run("ErrAnotherCallersOrderIsNotFound", func(t *testing.T) {
		for _, doc := range []string{theirs[0].DocumentID, "nosuchorder0000000000000", "x"} {
			resp := get(functest.DevHeaders, doc)
			e := resp.Error(t)
			if resp.Status != http.StatusNotFound || e.Error.Message != "Order with the documentId: "+doc+" cannot be found." {
				t.Errorf("%s: %d %q", doc, resp.Status, e.Error.Message)
			}
		}
	})
	t.Run("ErrNoToken", func(t *testing.T) {
		if resp := get(nil, mine[0].DocumentID); resp.Status != http.StatusForbidden {
			t.Errorf("status %d, want 403", resp.Status)
		}
		if resp := get(map[string]string{"authorization": "Bearer sdt_nope"}, mine[0].DocumentID); resp.Status != http.StatusUnauthorized {
			t.Errorf("status %d, want 401", resp.Status)
		}
	})
	t.Run("FilesHaveWorkingAddressesAndNoOperators", func(t *testing.T) {
		// The order as the fulfillment leaves it: a document, moved by an
		// operator; the caller sees the document's address and no "by".
		ctx := context.Background()
		f := functest.Fulfiller(s.Env)
		pdf := []byte("%PDF-1.7\nlease\n%%EOF\n")
		if _, err := f.UploadDocument(ctx, localdb.DevOwner, mine[2].DocumentID, stampduty.Upload{ContentType: stampduty.MimePDF, Body: pdf}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Advance(ctx, mine[2].DocumentID, mine[2].Fulfillments[0].DocumentID,
			stampduty.Change{Status: stampduty.StatusCreated, UniqueDocRef: "REF-1"}, functest.Operator); err != nil {
			t.Fatal(err)
		}
		resp := get(functest.DevHeaders, mine[2].DocumentID)
		if strings.Contains(resp.Body, functest.Operator) || strings.Contains(resp.Body, `"by"`) {
			t.Errorf("the caller sees the operator: %s", resp.Body)
		}
		var body orderBody
		json.Unmarshal([]byte(resp.Body), &body)
		doc := body.Data.StampDuty.UploadedDocument
		if doc == nil || !strings.HasPrefix(doc.URL, "https://api.example.com/api/files/") {
			t.Fatalf("uploaded_document = %+v: want a download link to the API the request came to", doc)
		}
		if got := s.Download(t, doc.URL); got.Status != http.StatusOK || got.Body != string(pdf) {
			t.Errorf("download = %d %q", got.Status, got.Body)
		}
		if h := body.Data.Fulfillments[0].History; len(h) != 2 || h[1].Status != stampduty.StatusCreated {
			t.Errorf("status_history = %+v", h)
		}
	})
	t.Run("EventFile", func(t *testing.T) {
		// events/get-order.json names an order no one has: 404.
		s.CheckEvents(t, map[string]int{"get-order": http.StatusNotFound})
	})
	s.CheckRoutes()
	s.CheckTemplate(s.Proxy.All())
}
