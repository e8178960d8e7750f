package stampduty

import (
	"encoding/json"
	"fmt"
)

// Payment is what an order has done to its caller's account (accounts.md):
// what is still held for it, what its papers were charged when they reached
// Procured, and what its cancel released, as the API writes money.
type Payment struct {
	Held     string `json:"held"`
	Charged  string `json:"charged"`
	Released string `json:"released"`
	// The same in paise, for the ledger's own sums.
	HeldPaise     int64 `json:"-"`
	ChargedPaise  int64 `json:"-"`
	ReleasedPaise int64 `json:"-"`
}

// PaymentNow returns o's payment as its state says it stands: each paper
// that reached Procured (or Printed after it) was charged its amount; a
// cancel released the rest; what is neither is held. It is nil for an order
// made before accounts existed (Held false), which no entry names.
func (o Order) PaymentNow() *Payment {
	if !o.Held {
		return nil
	}
	total := o.StampDuty.TotalAmount * 100
	var charged int64
	for _, f := range o.Fulfillments {
		if StatusRank(f.Status) >= StatusRank(StatusProcured) {
			charged += o.StampDuty.Amount * 100
		}
	}
	var released int64
	if o.CancelledAt != nil {
		released = total - charged
	}
	held := total - charged - released
	return &Payment{Held: paise(held), Charged: paise(charged), Released: paise(released),
		HeldPaise: held, ChargedPaise: charged, ReleasedPaise: released}
}

// paise writes an amount of paise as the API writes money: "1200.00".
func paise(p int64) string {
	sign := ""
	if p < 0 {
		sign, p = "-", -p
	}
	return fmt.Sprintf("%s%d.%02d", sign, p/100, p%100)
}

// orderJSON is an Order's JSON form with its payment.
type orderJSON struct {
	plainOrder
	Payment *Payment `json:"payment"`
}

// plainOrder is Order without its MarshalJSON.
type plainOrder Order

// MarshalJSON writes o with "payment" (PaymentNow): derived from the
// order's state, so that every read, list and event shows what the ledger
// holds for it without reading the ledger.
func (o Order) MarshalJSON() ([]byte, error) {
	return json.Marshal(orderJSON{plainOrder(o), o.PaymentNow()})
}

// MarshalJSON writes o as Order does, with the operators' fields.
func (o OpsOrder) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		orderJSON
		Caller string `json:"owner"`
	}{orderJSON{plainOrder(o.Order), o.Order.PaymentNow()}, o.Caller})
}

// UnmarshalJSON reads o as MarshalJSON writes it: an order with a payment
// is one whose total was held (Held).
func (o *Order) UnmarshalJSON(b []byte) error {
	var v orderJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*o = Order(v.plainOrder)
	o.Held = v.Payment != nil
	return nil
}

// UnmarshalJSON reads o as its MarshalJSON writes it.
func (o *OpsOrder) UnmarshalJSON(b []byte) error {
	var v struct {
		orderJSON
		Caller string `json:"owner"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	o.Order, o.Caller = Order(v.plainOrder), v.Caller
	o.Order.Held = v.Payment != nil
	return nil
}
