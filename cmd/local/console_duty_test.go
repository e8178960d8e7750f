package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/testkit/browser"
	"stampduty/shared/testkit/localdb"
)

// saleRule is a rule version of Maharashtra's conveyance (duty-rules.md
// §12, MH-SALE-02): 5% of the higher of the price and the market value,
// less a women purchasers' remission of 1%.
const saleRule = `{"effectiveFrom": null, "effectiveTo": null,
  "citation": {"text": "Art. 25(b); women's 1% remission", "url": "https://example.in/mh/art-25b"},
  "inputs": {"considerationPrice": {"required": true, "positive": true}, "marketValue": {"required": true},
             "partyCategory": {"required": true, "values": ["male", "female"]}},
  "bases": {"value": {"max": [{"input": "considerationPrice"}, {"input": "marketValue"}]}},
  "components": [
    {"id": "duty", "label": "Stamp duty 5% of value", "kind": "percent", "base": "value", "rate": "0.05"},
    {"id": "women", "label": "Women purchasers' remission 1%", "kind": "percent", "base": "value", "rate": "-0.01",
     "when": {"partyCategory": ["female"]}}]}`

// addRuledArticle adds, through the console's API as admin, an article
// of purpose in state with the given duty_rules, retired when t ends, and
// returns its documentId.
func addRuledArticle(t *testing.T, s *stack, purpose, state, rules string) string {
	t.Helper()
	admin := s.Cognito.Staff[0]
	status, body := send(t, s, idToken(t, s, admin), http.MethodPost, "/api/console/catalogue/articles",
		fmt.Sprintf(`{"purpose_name": %q, "state": %q, "duty_rules": [%s]}`, purpose, state, rules))
	var added struct {
		Data struct {
			DocumentID string `json:"documentId"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &added); err != nil || status != http.StatusOK || added.Data.DocumentID == "" {
		t.Fatalf("adding %s in %s: %d %s", purpose, state, status, body)
	}
	retireAfter(t, s, admin, s.URL+"/console#article/"+added.Data.DocumentID)
	return added.Data.DocumentID
}

// checkOrderDuty: an operator sees on an order's page its Duty (duty-rules.md
// §15): the lines of the rule that priced it as a table (Label, Base, Rate,
// Amount) with their total, and the rule's citation linked to its source;
// a legacy order's migrated rule names its source without a link, and an
// order made before duty rules says it has no explanation. Each on a
// desktop and a phone: axe, no sideways scroll, the citation reached with
// Tab from the link above it.
func checkOrderDuty(t *testing.T, s *stack, b *browser.Browser) {
	operator := s.Cognito.Staff[1]
	addRuledArticle(t, s, "Browser Sale Deed", "Maharashtra", saleRule)
	status, body := send(t, s, localdb.DevToken, http.MethodPost, "/api/live-orders",
		`{"considerationPrice":8000000,"marketValue":9000000,"partyCategory":"female","purpose":"Browser Sale Deed","state":"Maharashtra",`+
			`"paidBy":"First Party","firstPartyMobileNumber":"9876543210","firstPartyName":"Duty Party","secondPartyName":"B"}`)
	var created struct {
		OrderID string `json:"orderId"`
	}
	if err := json.Unmarshal(body, &created); err != nil || status != http.StatusOK || created.OrderID == "" {
		t.Fatalf("create: %d %s", status, body)
	}
	ruled, legacy, before := created.OrderID, createOrder(t, s, 1), createOrder(t, s, 1)
	forgetDuty(t, s, before)

	for _, screen := range screens {
		t.Run("Ruled"+screen.name, func(t *testing.T) {
			p := atQueue(t, s, b, screen.vp, operator)
			p.Open(s.URL + "/console#order/" + ruled)
			p.Find(browser.Heading("Order " + ruled))
			p.Find(browser.Heading("Duty"))
			got := dutyText(p.Text(browser.Role("table", "Duty of one paper, line by line")))
			for _, want := range []string{"Label\tBase\tRate\tAmount",
				"Stamp duty 5% of value\t₹90,00,000.00 (value)\t0.05 (5%)\t₹4,50,000.00",
				"Women purchasers' remission 1%\t₹90,00,000.00 (value)\t-0.01 (−1%)\t−₹90,000.00",
				"Total\t\t\t₹3,60,000.00"} {
				if !strings.Contains(got, want) {
					t.Errorf("the Duty table reads\n%s\nwant a row %q", got, want)
				}
			}
			cite := browser.Link("Art. 25(b); women's 1% remission")
			if href := p.Attribute(cite, "href"); href != "https://example.in/mh/art-25b" {
				t.Errorf("the citation links to %q, want the rule's url", href)
			}
			// Keyboard: the citation is the next stop after the link back.
			p.Focus(browser.Link("Back to the queue"))
			p.TabTo(cite)
			p.Check("order-duty")
		})
	}
	t.Run("LegacyAndBeforeDutyRules", func(t *testing.T) {
		p := atQueue(t, s, b, browser.Phone, operator)
		p.Open(s.URL + "/console#order/" + legacy)
		p.Find(browser.Heading("Order " + legacy))
		if got, want := dutyText(p.Text(browser.Role("table", "Duty of one paper, line by line"))), "Fixed amount\t—\t—\t₹20.00"; !strings.Contains(got, want) {
			t.Errorf("a legacy order's Duty reads\n%s\nwant %q", got, want)
		}
		if got, want := p.Text(browser.Role("main", "")), "Rule: migrated: fixed 20 (shared/spec/decisions.md (Amounts))."; !strings.Contains(got, want) {
			t.Errorf("a legacy order's page does not say %q", want)
		}
		p.Gone(browser.Link("migrated: fixed 20"))
		p.Check("order-duty-legacy")

		p.Open(s.URL + "/console#order/" + before)
		p.Find(browser.Heading("Order " + before))
		p.Find(browser.Heading("Duty"))
		p.Gone(browser.Role("table", "Duty of one paper, line by line"))
		if got, want := p.Text(browser.Role("main", "")), "No duty explanation: ordered before duty rules."; !strings.Contains(got, want) {
			t.Errorf("an order made before duty rules does not say %q", want)
		}
		p.Check("order-duty-none")
	})
}

// dutyText is a Duty table's text with each row on one line: on a phone
// a base's or a rate's second part (what it is, the percentage) goes
// under the first, which innerText writes as a line break.
func dutyText(text string) string {
	return strings.NewReplacer("\n(", " (", "\n\t", "\t").Replace(text)
}

// forgetDuty makes doc an order made before duty rules: its explained
// duty removed from its item, as such orders are stored (sd.du absent).
func forgetDuty(t *testing.T, s *stack, doc string) {
	t.Helper()
	ctx := context.Background()
	db := localdb.Client(s.Endpoint)
	found, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("OrdersTable"), FilterExpression: aws.String("#doc = :doc"),
		ExpressionAttributeNames:  map[string]string{"#doc": "doc"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":doc": &types.AttributeValueMemberS{Value: doc}}})
	if err != nil || len(found.Items) != 1 {
		t.Fatalf("finding order %s: %v (%d items)", doc, err, len(found.Items))
	}
	key := map[string]types.AttributeValue{"owner": found.Items[0]["owner"], "seq": found.Items[0]["seq"]}
	if _, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("OrdersTable"), Key: key,
		UpdateExpression: aws.String("REMOVE sd.du")}); err != nil {
		t.Fatal(err)
	}
	_, read := send(t, s, localdb.DevToken, http.MethodGet, "/api/live-orders/"+doc, "")
	var got struct {
		Data struct {
			StampDuty struct {
				Duty json.RawMessage `json:"duty"`
			} `json:"stamp_duty"`
		} `json:"data"`
	}
	if err := json.Unmarshal(read, &got); err != nil || string(got.Data.StampDuty.Duty) != "null" {
		t.Fatalf("order %s after removing its duty: %s (%v); want duty null", doc, got.Data.StampDuty.Duty, err)
	}
}
