package store

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"io"

	"stampduty/shared/duty"
)

// An order's duty (duty-rules.md §8) is stored compressed: its JSON is
// 400 bytes for a one-line legacy rule and 1–3 KB for a state schedule,
// which as text would cost a create 1–3 WCU more, in the item and in each
// index entry and delivery job that copies it. DEFLATE with a preset
// dictionary of the names and words every duty repeats brings a one-line
// duty to about 200 bytes and a five-line one to about 400 (measured in
// dutycodec_test.go), within the 1 WCU the issue allows.
//
// The first byte names the dictionary: a dictionary is never changed,
// only a new one added, so every stored duty stays readable.

// dutyDict1 is dictionary 1: a duty's JSON as it is written, its most
// common words last (DEFLATE reaches the end of a dictionary best).
var dutyDict1 = []byte(`"kind":"perUnit","unit":"units":"kind":"slabs","band":{"index":"upTo":null},` +
	`"limit":"min""limit":"max""kind":"cap","id":"minimum","label":"Minimum duty ₹","id":"maximum","label":"Maximum duty ₹` +
	`"kind":"declared","label":"Amount declared by the caller","kind":"fixed","label":"Fixed amount",` +
	`"marketValue":"partyCategory":"female","male","locationClass":"urban","rural","termMonths":"monthlyRent":` +
	`{"id":"rounding","label":"Total rounded up to ₹1","kind":"rounding","amount":"0.` +
	`"kind":"percentOf","of":["duty"],"rounding":"up to ₹0.01",` +
	`"citation":{"text":"migrated: ","url":"shared/spec/decisions.md (Amounts)"}},` +
	`"label":"Stamp duty ","kind":"percent","base":"considerationPrice","baseAmount":"","rate":"0.0","exact":"` +
	`{"rule":{"article":"","articleVersion":1,"effectiveFrom":null,"effectiveTo":null,"hash":"sha256:",` +
	`"instrumentDate":"20","inputs":{"amount":,"considerationPrice":},"ignoredInputs":[],"bases":[{"name":"value","amount":".00"}],` +
	`"lines":[{"id":"duty","label":"","kind":"fixed","exact":"","amount":".00"}],"total":".00"}`)

// dutyDicts are the dictionaries by the byte that names them.
var dutyDicts = map[byte][]byte{1: dutyDict1}

// encodeDuty returns d as an order's item stores it; nil for none.
func encodeDuty(d *duty.Duty) ([]byte, error) {
	if d == nil {
		return nil, nil
	}
	j, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode duty: %w", err)
	}
	var b bytes.Buffer
	b.WriteByte(1)
	w, err := flate.NewWriterDict(&b, flate.BestCompression, dutyDict1)
	if err != nil {
		return nil, fmt.Errorf("encode duty: %w", err)
	}
	w.Write(j) // a bytes.Buffer does not fail
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encode duty: %w", err)
	}
	return b.Bytes(), nil
}

// decodeDuty reads what encodeDuty wrote.
func decodeDuty(b []byte) (*duty.Duty, error) {
	if len(b) == 0 {
		return nil, nil
	}
	dict, ok := dutyDicts[b[0]]
	if !ok {
		return nil, fmt.Errorf("decode duty: no dictionary %d", b[0])
	}
	r := flate.NewReaderDict(bytes.NewReader(b[1:]), dict)
	defer r.Close()
	j, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("decode duty: %w", err)
	}
	d := new(duty.Duty)
	if err := json.Unmarshal(j, d); err != nil {
		return nil, fmt.Errorf("decode duty: %w", err)
	}
	return d, nil
}
