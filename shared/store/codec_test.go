package store

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/rules"
)

func TestOrderCodec(t *testing.T) {
	req := rules.OrderRequest{Amount: 20, Purpose: "Affidavit", State: "Karnataka", PaidBy: rules.FirstParty, Description: "N/A",
		FirstPartyMobileNumber: "9876543210", FirstPartyName: "Asha", SecondPartyName: "B", FirstPartyPan: "ABCDE1234F",
		FirstPartyAddress: `12, MG Road \ Bengaluru`, PurchasedBy: "ü≠"}
	o, err := rules.NewOrder(req, rules.Article{ID: 3, DocumentID: "a", PurposeName: "Affidavit"}, 20, rules.OrderIDs{Order: 1, Fulfillment: 2, StampDuty: 3}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	o.Fulfillments = append(o.Fulfillments, rules.Fulfillment{ID: 9, DocumentID: "f", Status: rules.StatusPrinted, CertificateNumber: "IN-KA123",
		CertificateFile: &rules.File{ID: 10, DocumentID: "g", URL: "https://files.example/c.pdf", Name: "c.pdf"}})

	t.Run("RoundTrip", func(t *testing.T) {
		item := encodeOrder("acme", 7, o)
		if got := item["seq"].(*types.AttributeValueMemberN).Value; got != "7" {
			t.Errorf("seq = %s", got)
		}
		back, err := decodeOrder(item)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(o)
		got, _ := json.Marshal(back)
		if string(got) != string(want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("WrongTypeIsAnError", func(t *testing.T) {
		item := encodeOrder("acme", 7, o)
		item["sd"].(*types.AttributeValueMemberM).Value["amt"] = avS("twenty")
		if _, err := decodeOrder(item); err == nil || !strings.Contains(err.Error(), "sd.amt") {
			t.Errorf("err = %v, want one naming sd.amt", err)
		}
	})
	t.Run("MissingStampDutyIsAnError", func(t *testing.T) {
		item := encodeOrder("acme", 7, o)
		delete(item, "sd")
		if _, err := decodeOrder(item); err == nil {
			t.Error("no error")
		}
	})
}

func TestArticleCodec(t *testing.T) {
	item := map[string]types.AttributeValue{
		"purpose_name": avS("Sale Deed"), "state": avS("Delhi"), "id": avN(4), "doc": avS("d"), "min": avN(100), "max": avN(900),
		"follow": &types.AttributeValueMemberBOOL{Value: true}, "factor": &types.AttributeValueMemberN{Value: "0.065"},
	}
	a, err := decodeArticle(item)
	if err != nil {
		t.Fatal(err)
	}
	if a.Fixed != nil || a.Factor == nil || a.Factor.String() != "0.065" || !a.FollowsConsideration || a.Max != 900 {
		t.Errorf("article = %+v", a)
	}
	item["factor"] = &types.AttributeValueMemberN{Value: "-1"}
	if _, err := decodeArticle(item); rules.ErrorCode(err) != rules.EINTERNAL {
		t.Errorf("bad factor: %v, want EINTERNAL", err)
	}
}
