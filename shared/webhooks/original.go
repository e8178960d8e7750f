package webhooks

import (
	"bytes"
	"encoding/json"
	"fmt"

	"stampduty/shared/stampduty"
)

// original is the body of the original API's certificate callback, its
// keys in the original's order (encoding/json writes a struct's fields in
// their order). It has no livemode: it is a fixed foreign format that its
// receivers read as they always did, and a webhook is its principal's (a
// webhook registered with a test token gets test events only), so its
// receiver knows the mode from the webhook it registered.
type original struct {
	URL                string `json:"url"`
	Name               string `json:"name"`
	OrderID            string `json:"orderId"`
	OrderFulfillmentID string `json:"orderFulfillmentId"`
}

// originalBody returns the body of event eventID for a webhook of
// FormatOriginal: {"url", "name", "orderId", "orderFulfillmentId"} of the
// certificate of o's fulfillment fulfillment (a documentId), o being the
// order right after the change as its caller sees it, its addresses signed
// now. An empty fulfillment (an event recorded before events named theirs)
// means o's first fulfillment with a certificate. The JSON is written as
// the original API, a Node service, wrote it: no HTML escaping, so the
// pre-signed address's "&" stays "&" rather than "\u0026" (the same string
// once parsed; receivers that log or compare the raw body see what they
// saw before).
func originalBody(eventID string, o stampduty.Order, fulfillment string) ([]byte, error) {
	var f *stampduty.Fulfillment
	for i := range o.Fulfillments {
		c := &o.Fulfillments[i]
		if c.CertificateFile != nil && (fulfillment == "" || c.DocumentID == fulfillment) {
			f = c
			break
		}
	}
	switch {
	case f == nil && fulfillment == "":
		return nil, fmt.Errorf("render event %s in the original format: order %s has no certificate", eventID, o.DocumentID)
	case f == nil:
		return nil, fmt.Errorf("render event %s in the original format: order %s has no certificate on fulfillment %s", eventID, o.DocumentID, fulfillment)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(original{URL: f.CertificateFile.URL, Name: f.CertificateFile.Name, OrderID: o.DocumentID, OrderFulfillmentID: f.DocumentID}); err != nil {
		return nil, fmt.Errorf("encode event %s in the original format: %w", eventID, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
