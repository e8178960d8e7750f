package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"stampduty/shared/duty"
	"stampduty/shared/function"
	"stampduty/shared/jsonobj"
	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
)

// maxBatchBody is the largest batch body accepted: 1 MiB (papers.md), 100
// create bodies of up to about 10 KiB each.
const maxBatchBody = 1 << 20

// batchResponse is the answer to a batch: one row per order sent, in order.
type batchResponse struct {
	Data []any     `json:"data"`
	Meta batchMeta `json:"meta"`
}

// batchMeta sums a batch up. Created counts the rows answered 200 (in a
// dry run: those that would have been created, nothing being stored),
// Failed the others; TotalAmount is the sum of the 200 rows' total_amount.
type batchMeta struct {
	Created     int   `json:"created"`
	Failed      int   `json:"failed"`
	DryRun      bool  `json:"dryRun"`
	TotalAmount int64 `json:"total_amount"`
	// Livemode is the mode of every order of the batch: the token's.
	Livemode bool `json:"livemode"`
	// Needed and Available are a dry run's (accounts.md): the sum of the
	// total_amount of the rows that pass their checks, and what the
	// account has available now (null when unlimited); absent otherwise.
	Needed    *string         `json:"needed,omitempty"`
	Available json.RawMessage `json:"available,omitempty"`
}

// createdRow is a row whose order was created: orderId is its documentId,
// null in a dry run (no order, so no documentId: a dry run never shows an
// id that could be mistaken for a stored order's).
type createdRow struct {
	Index       int     `json:"index"`
	Status      int     `json:"status"`
	OrderID     *string `json:"orderId"`
	Amount      int64   `json:"amount"`
	Quantity    int64   `json:"quantity"`
	TotalAmount int64   `json:"total_amount"`
	// Livemode is the order's mode (test-mode.md): false when a test token
	// created it (or would have, in a dry run).
	Livemode bool `json:"livemode"`
	// Duty is the explained duty of one paper (duty-rules.md §15).
	Duty *duty.Duty `json:"duty"`
	// Fits is a dry run's: the row's total fits what the account has
	// available, the rows before it held (accounts.md); absent otherwise.
	Fits *bool `json:"fits,omitempty"`
}

// failedRow is a row refused: status and error are exactly what a create
// with the row's body would have answered (its status, and the error
// object of its envelope).
type failedRow struct {
	Index  int                `json:"index"`
	Status int                `json:"status"`
	Error  function.ErrorInfo `json:"error"`
	// Fits is a dry run's, for a row that passed its checks: false for
	// its 402 (accounts.md); absent otherwise.
	Fits *bool `json:"fits,omitempty"`
}

// createBatch serves POST /api/live-orders/batch: dryRun, the
// Idempotency-Key, then the body, read as a create's are, are handed to
// the batch workflow, whose rows it answers.
func (h *handler) createBatch(r *http.Request, owner string) (any, error) {
	dryRun, err := dryRunParam(r)
	if err != nil {
		return nil, err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return nil, err
	}
	body, err := readBatchBody(r)
	if err != nil {
		return nil, err
	}
	rows, err := decodeBatch(body)
	if err != nil {
		return nil, err
	}
	if key != nil {
		sum := sha256.Sum256(body)
		key.Fingerprint = hex.EncodeToString(sum[:])
	}
	checked, err := h.batch.Check(r.Context(), rows)
	if err != nil {
		return nil, err
	}
	results := checked.Results()
	if err := errorsFit(results); err != nil {
		return nil, err
	}
	_, live := stampduty.CallerOf(owner)
	resp := batchResponse{Meta: batchMeta{DryRun: dryRun, Livemode: live}}
	if dryRun {
		needed, available, err := h.dryRun(r, owner, checked, &results)
		if err != nil {
			return nil, err
		}
		resp.Meta.Needed, resp.Meta.Available = &needed, available
	} else if results, err = h.batch.Store(r.Context(), owner, checked, key); err != nil {
		return nil, err
	}
	resp.Data = make([]any, len(results))
	for i, res := range results {
		if res.Err != nil {
			e := function.NewErrorBody(res.Err).Error
			resp.Data[i] = failedRow{Index: i, Status: e.Status, Error: e, Fits: res.Fits}
			resp.Meta.Failed++
			continue
		}
		row := createdRow{Index: i, Status: http.StatusOK, Amount: res.Amount, Quantity: res.Quantity, TotalAmount: res.TotalAmount,
			Livemode: live, Duty: res.Duty, Fits: res.Fits}
		if !dryRun {
			id := res.OrderID
			row.OrderID = &id
		}
		resp.Data[i] = row
		resp.Meta.Created++
		resp.Meta.TotalAmount += res.TotalAmount
	}
	return resp, nil
}

// dryRun answers a dry run's rows from the account as it stands
// (orders.Batcher.DryRun): it sets each row's fits (and 402) in results,
// and returns meta's needed and available as the API writes them
// (available null when the account is unlimited).
func (h *handler) dryRun(r *http.Request, owner string, checked *orders.CheckedBatch, results *[]orders.RowResult) (string, json.RawMessage, error) {
	res, needed, available, err := h.batch.DryRun(r.Context(), owner, checked)
	if err != nil {
		return "", nil, err
	}
	*results = res
	if available == nil {
		return needed.String(), json.RawMessage("null"), nil
	}
	return needed.String(), json.RawMessage(`"` + available.String() + `"`), nil
}

// maxRowErrors bounds the JSON of the refused rows' error objects in one
// answer. A Lambda answer holds at most 6 MB, and a row naming thousands of
// unknown fields gets an error of about 10 times its own bytes, so a 1 MiB
// batch of such rows would have an answer Lambda cannot send (API Gateway
// would answer 500 after the valid rows were created). Such a batch is
// refused whole, before anything is stored: no real batch comes near it
// (100 rows refused on every field of the contract are about 300 KB).
const maxRowErrors = 4 << 20

// errorsFit refuses a batch whose rows' errors would make too large an
// answer (maxRowErrors).
func errorsFit(results []orders.RowResult) error {
	n := 0
	for _, res := range results {
		if res.Err == nil {
			continue
		}
		b, err := json.Marshal(function.NewErrorBody(res.Err).Error)
		if err != nil {
			return stampduty.Internal(fmt.Errorf("encode a row's error: %w", err))
		}
		if n += len(b); n > maxRowErrors {
			return invalidBatch("The errors of these rows would make an answer of more than 4 MiB: send fewer of them at once")
		}
	}
	return nil
}

// dryRunParam reads the dryRun query parameter: absent or "false" is a
// batch that creates, "true" a dry run. Any other value (a repeated one,
// "1", "yes", "TRUE", empty) is 400 naming dryRun: a caller who meant a
// dry run must never get orders created by a spelling we guessed wrong.
func dryRunParam(r *http.Request) (bool, error) {
	vals, ok := r.URL.Query()["dryRun"]
	if !ok {
		return false, nil
	}
	if len(vals) == 1 && (vals[0] == "true" || vals[0] == "false") {
		return vals[0] == "true", nil
	}
	msg := `dryRun must be "true" or "false", given once`
	return false, &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: []stampduty.FieldError{{Path: "dryRun", Message: msg}}}
}

// readBatchBody reads a batch's JSON body, of at most maxBatchBody bytes,
// as function.ReadJSONBody reads a create's: a non-JSON Content-Type is
// 415, a longer body 413, refused before any of it is parsed.
func readBatchBody(r *http.Request) ([]byte, error) {
	if r.Header.Get("Content-Type") != "" && !function.IsJSON(r) {
		return nil, stampduty.Errorf(stampduty.EUNSUPPORTED, "Content-Type must be application/json")
	}
	tooLarge := stampduty.Errorf(stampduty.ETOOLARGE, "The request body is larger than 1 MiB")
	if r.ContentLength > maxBatchBody {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBatchBody+1))
	if err != nil {
		return nil, stampduty.Errorf(stampduty.EINVALID, "Invalid data. The body could not be read")
	}
	if len(b) > maxBatchBody {
		return nil, tooLarge
	}
	return b, nil
}

// batchShape is the message of a body that is not {"data": [...]}.
const batchShape = `The body must be {"data": [<order>, …]}: an object whose only member, data, is an array of 1 to 100 orders`

// invalidBatch is a 400 for the whole batch, on data.
func invalidBatch(msg string) error {
	return &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: []stampduty.FieldError{{Path: "data", Message: msg}}}
}

// maxBatchDepth is the deepest a batch body may nest, the body itself
// being level 1: 10,000 levels, as deep as encoding/json reads any JSON
// (its scanner's limit, which json.Valid and json.Unmarshal apply). It is
// the body's limit, not a row's. A row is measured from itself, as a
// create measures from its body (function.MaxDepth, in decodeRow): a row
// nested 33 to 9,998 levels deep (the body 35 to 10,000) is answered in
// its row with the create's 400 "The body is nested too deeply", and the
// other rows go on. A body nested deeper is one 400 for the whole request,
// "The body is not valid JSON", as a create's body nested past 10,000
// levels is: encoding/json cannot read it, so nothing can say where its
// rows end. Only a row of 9,999 or 10,000 levels gets another answer
// than its create (which says "nested too deeply").
//
// The limit bounds the cost of a hostile body too. jsonobj keeps one int
// per open level (80 KB at 10,000) and stops at the first level past the
// limit: 1 MiB of "[" or of {"": opened and never closed is refused after
// 10,000 of them. A body nested within the limit is read token by token,
// in time linear in its size as any batch: 100 rows of 2,000 nested
// objects cost less than 1 MiB of rows of flat numbers, which no depth
// limit ever touched (BenchmarkDecodeBatch, on 2 shared cores: 0.8–1.6 ms
// and 0.7 MB for the open "[", 17–22 ms and 1.8 MB for the open {"":,
// 0.25–0.27 s and 25 MB allocated for the deep objects, 0.7–2.3 s and
// 129 MB for the flat numbers). It must not pass encoding/json's 10,000:
// json.Unmarshal below would then refuse what jsonobj passed
// (TestBatchNestedRows sends the deepest row allowed).
const maxBatchDepth = 10000

// decodeBatch reads a batch body: {"data": [<create body>, …]}, 1 to
// orders.MaxBatchRows objects, and nothing else; anything else, or a body
// nested deeper than maxBatchDepth, is one 400 for the whole request. Each
// row's bytes are then read exactly as a create's body is (decodeRow: 64
// KiB, nesting, repeated keys, {"data": {...}} unwrapped...), and a row
// that fails it gets that error as its answer.
func decodeBatch(body []byte) ([]orders.BatchRow, error) {
	members, err := jsonobj.Members(body, maxBatchDepth)
	if err != nil {
		return nil, function.InvalidJSON(err, batchShape)
	}
	if len(members) != 1 || members[0].Key != "data" {
		return nil, invalidBatch(batchShape)
	}
	if members[0].Value.Kind != jsonobj.Array {
		return nil, invalidBatch("data must be an array of 1 to 100 orders")
	}
	var wrapped struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &wrapped); err != nil {
		return nil, stampduty.Internal(fmt.Errorf("decode batch: %w", err))
	}
	if n := len(wrapped.Data); n < 1 || n > orders.MaxBatchRows {
		return nil, invalidBatch(fmt.Sprintf("data must be an array of 1 to %d orders, not %d", orders.MaxBatchRows, n))
	}
	rows := make([]orders.BatchRow, len(wrapped.Data))
	for i, raw := range wrapped.Data {
		if !bytes.HasPrefix(bytes.TrimLeft(raw, " \t\r\n"), []byte("{")) {
			return nil, invalidBatch(fmt.Sprintf("data[%d] must be an object (an order, as a create's body)", i))
		}
		body, err := decodeRow(raw)
		rows[i] = orders.BatchRow{Body: body, Err: err}
	}
	return rows, nil
}

// decodeRow reads a row's bytes with the very functions that read a
// create's body — function.ReadJSONBody (so a row above 64 KiB is the
// create's 413) and function.DecodeData (so a row nested deeper than
// function.MaxDepth, counted from the row, is the create's 400) — and
// sorts its fields.
func decodeRow(raw []byte) (*stampduty.OrderBody, error) {
	r, err := http.NewRequest(http.MethodPost, "/api/live-orders", bytes.NewReader(raw))
	if err != nil {
		return nil, stampduty.Internal(fmt.Errorf("decode row: %w", err))
	}
	b, err := function.ReadJSONBody(r)
	if err != nil {
		return nil, err
	}
	members, err := function.DecodeData(b)
	if err != nil {
		return nil, err
	}
	return stampduty.NewOrderBody(stampjson.Fields(members)), nil
}
