package main

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"stampduty/shared/orders"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
)

// The orders commands are thin clients of the operator API (/api/ops/):
// every rule is the API's, and stampctl prints what it answers. Requests
// are signed with Signature Version 4 for execute-api, as API Gateway's
// AWS_IAM authorization requires.

// apiError is an error answer of the API: its status and Strapi envelope,
// and what stampctl can say about it.
type apiError struct {
	Status              int
	Name, Message, Hint string
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("%d %s: %s", e.Status, e.Name, e.Message)
	if e.Hint != "" {
		msg += "\n" + e.Hint
	}
	return msg
}

// call sends a signed request to the operator API and decodes a 200
// answer's body into out (unless nil); any other answer is an *apiError.
func (c *cli) call(method, path string, query url.Values, contentType string, body []byte, out any) error {
	base, err := c.apiURL()
	if err != nil {
		return err
	}
	cfg, err := c.apiConfig(base)
	if err != nil {
		return err
	}
	u := base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(c.ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	creds, err := cfg.Credentials.Retrieve(c.ctx)
	if err != nil {
		return fmt.Errorf("AWS credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(c.ctx, creds, req, hex.EncodeToString(sum[:]), "execute-api", cfg.Region, c.now()); err != nil {
		return fmt.Errorf("sign the request: %w", err)
	}
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var env struct {
			Error   struct{ Name, Message string }
			Message string // API Gateway's own answers: {"message": "Forbidden"}
		}
		json.Unmarshal(raw, &env)
		e := &apiError{Status: resp.StatusCode, Name: cmp.Or(env.Error.Name, http.StatusText(resp.StatusCode)),
			Message: cmp.Or(env.Error.Message, env.Message, strings.TrimSpace(string(raw)))}
		if resp.StatusCode == http.StatusForbidden && env.Error.Name == "" {
			// API Gateway refused the signature before any function ran.
			e.Hint = fmt.Sprintf("The API refused the request's signature (key %s, region %s). On AWS, sign as an identity that may "+
				"execute-api:Invoke the API, in the API's region. %s", creds.AccessKeyID, cfg.Region, localAPIHint(base))
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not what stampctl expects: %w", method, path, err)
	}
	return nil
}

// opsOrder is an operator answer about one order.
type opsOrder struct {
	Data stampduty.OpsOrder `json:"data"`
}

// printJSON writes v indented, as the commands print what the API answers.
func (c *cli) printJSON(v any) error {
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ordersQueue prints a page of the work queue: one line per order. The
// live orders, or with --mode test the test orders only: the API's mode
// parameter, which decides what a mode may be (live or test).
func (c *cli) ordersQueue(fs *flag.FlagSet, args []string) error {
	status := fs.String("status", stampduty.StatusPending, "the queue: Pending, Created, Procured or Printed")
	mode := fs.String("mode", "live", "live, or test: the test orders (made with a caller's test token) only")
	size := fs.Int("page-size", 25, "orders per page (at most 100)")
	cursor := fs.String("cursor", "", "the cursor the previous page printed")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	q := url.Values{"status": {*status}, "pagination[pageSize]": {fmt.Sprint(*size)}}
	again := "--status " + *status
	if *mode != "live" {
		q.Set("mode", *mode)
		again += " --mode " + *mode
	}
	if *cursor != "" {
		q.Set("pagination[cursor]", *cursor)
	}
	var page struct {
		Data []stampduty.OpsOrder `json:"data"`
		Meta struct {
			Pagination struct {
				Next *string `json:"next"`
			} `json:"pagination"`
		} `json:"meta"`
	}
	if err := c.call(http.MethodGet, "/api/ops/live-orders", q, "", nil, &page); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%-24s  %-24s  %-24s  %-8s  %s\n", "DOCUMENT ID", "CREATED", "OWNER", "STATUS", "FULFILLMENT")
	for _, o := range page.Data {
		for _, f := range o.Fulfillments {
			fmt.Fprintf(c.stdout, "%-24s  %-24s  %-24s  %-8s  %s\n", o.DocumentID, o.CreatedAt, ownerOf(o), f.Status, f.DocumentID)
		}
	}
	if next := page.Meta.Pagination.Next; next != nil {
		fmt.Fprintf(c.stdout, "next page: stampctl orders queue %s --cursor %s\n", again, *next)
	}
	return nil
}

// ownerOf is how an order's caller is shown in a list: its name, and
// " (test)" after it for a test order (livemode false), never the owner key.
func ownerOf(o stampduty.OpsOrder) string {
	if o.Livemode {
		return o.Caller
	}
	return o.Caller + " (test)"
}

// ordersShow prints one order as operators see it.
func (c *cli) ordersShow(fs *flag.FlagSet, args []string) error {
	rest, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	o, err := c.order(rest[0])
	if err != nil {
		return err
	}
	return c.printJSON(o)
}

// order returns order doc as operators see it.
func (c *cli) order(doc string) (stampduty.OpsOrder, error) {
	var o opsOrder
	err := c.call(http.MethodGet, "/api/ops/live-orders/"+url.PathEscape(doc), nil, "", nil, &o)
	return o.Data, err
}

// pick returns fulfillment ff of order o, or its only one when ff is "".
func pick(o stampduty.OpsOrder, ff string) (stampduty.Fulfillment, error) {
	for _, f := range o.Fulfillments {
		if f.DocumentID == ff || ff == "" && len(o.Fulfillments) == 1 {
			return f, nil
		}
	}
	if ff == "" {
		return stampduty.Fulfillment{}, fmt.Errorf("order %s has %d fulfillments: name one with --fulfillment", o.DocumentID, len(o.Fulfillments))
	}
	return stampduty.Fulfillment{}, fmt.Errorf("order %s has no fulfillment %s", o.DocumentID, ff)
}

// fulfillmentFlag defines --fulfillment, for the commands on one fulfillment.
func fulfillmentFlag(fs *flag.FlagSet) *string {
	return fs.String("fulfillment", "", "the fulfillment's documentId (default: the order's only one)")
}

// fulfillment returns fulfillment ff of order doc (its only one when ff is
// ""), read from the API.
func (c *cli) fulfillment(doc, ff string) (stampduty.Fulfillment, error) {
	o, err := c.order(doc)
	if err != nil {
		return stampduty.Fulfillment{}, err
	}
	return pick(o, ff)
}

// fulfillmentPath returns the address of order doc's fulfillment ff (its
// only one, read from the API, when ff is "") and its documentId.
func (c *cli) fulfillmentPath(doc, ff string) (string, string, error) {
	if ff == "" {
		f, err := c.fulfillment(doc, ff)
		if err != nil {
			return "", "", err
		}
		ff = f.DocumentID
	}
	return "/api/ops/live-orders/" + url.PathEscape(doc) + "/fulfillments/" + url.PathEscape(ff), ff, nil
}

// changeFulfillment sends a change (method, the address under the
// fulfillment, query, body) to order doc's fulfillment ff and returns it
// as changed (the API answers with the whole order).
func (c *cli) changeFulfillment(method, doc, ff, under string, query url.Values, contentType string, body []byte) (stampduty.Fulfillment, error) {
	path, ff, err := c.fulfillmentPath(doc, ff)
	if err != nil {
		return stampduty.Fulfillment{}, err
	}
	var o opsOrder
	if err := c.call(method, path+under, query, contentType, body, &o); err != nil {
		return stampduty.Fulfillment{}, err
	}
	return pick(o.Data, ff)
}

// ordersAdvance moves a fulfillment to the status --to names.
func (c *cli) ordersAdvance(fs *flag.FlagSet, args []string) error {
	to := fs.String("to", "", "the status to move to: Created, Procured or Printed")
	ref := fs.String("ref", "", "the unique_doc_ref (needed to move to Created)")
	cn := fs.String("certificate-number", "", "the certificate_number (needed to move to Procured)")
	ffFlag := fulfillmentFlag(fs)
	rest, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *to == "" {
		return usagef("orders advance: --to is required")
	}
	body := map[string]string{"order_status": *to}
	if *ref != "" {
		body["unique_doc_ref"] = *ref
	}
	if *cn != "" {
		body["certificate_number"] = *cn
	}
	b, _ := json.Marshal(body)
	f, err := c.changeFulfillment(http.MethodPatch, rest[0], *ffFlag, "", nil, "application/json", b)
	if err == nil {
		fmt.Fprintf(c.stdout, "order %s fulfillment %s is %s\n", rest[0], f.DocumentID, f.Status)
	}
	return err
}

// ordersAttachCertificate uploads a certificate PDF to a Procured fulfillment.
func (c *cli) ordersAttachCertificate(fs *flag.FlagSet, args []string) error {
	ffFlag := fulfillmentFlag(fs)
	name := fs.String("name", "", "the file's name (default: the file's base name)")
	rest, err := parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	pdf, err := os.ReadFile(rest[1])
	if err != nil {
		return err
	}
	fileName := cmp.Or(*name, filepath.Base(rest[1]))
	var f stampduty.Fulfillment
	if len(pdf) > stampduty.MaxFileSize {
		// Too large for a request's body: straight to the bucket.
		f, err = c.attachStaged(rest[0], *ffFlag, fileName, pdf)
	} else {
		f, err = c.changeFulfillment(http.MethodPut, rest[0], *ffFlag, "/certificate", url.Values{"name": {fileName}}, "application/pdf", pdf)
	}
	if err == nil && f.CertificateFile != nil {
		fmt.Fprintf(c.stdout, "attached %s (%d bytes, sha256 %s) to order %s fulfillment %s\n",
			f.CertificateFile.Name, f.CertificateFile.Size, f.CertificateFile.SHA256, rest[0], f.DocumentID)
	}
	return err
}

// attachStaged attaches pdf, a certificate over the 4 MiB a body carries,
// through the pre-signed path (lifecycle.md "Large files: straight to
// S3"): it asks for an upload, sends the file to the bucket as the answer
// says, then attaches the upload by its id.
func (c *cli) attachStaged(doc, ff, name string, pdf []byte) (stampduty.Fulfillment, error) {
	path, ff, err := c.fulfillmentPath(doc, ff)
	if err != nil {
		return stampduty.Fulfillment{}, err
	}
	declared, _ := json.Marshal(map[string]any{"name": name, "mime": stampduty.MimePDF, "size": len(pdf)})
	var up struct {
		Data struct {
			Upload, Method, URL string
			Headers             map[string]string
		}
	}
	if err := c.call(http.MethodPost, path+"/certificate/upload", nil, "application/json", declared, &up); err != nil {
		return stampduty.Fulfillment{}, err
	}
	req, err := http.NewRequestWithContext(c.ctx, up.Data.Method, up.Data.URL, bytes.NewReader(pdf))
	if err != nil {
		return stampduty.Fulfillment{}, fmt.Errorf("the upload's request: %w", err)
	}
	for k, v := range up.Data.Headers {
		if !strings.EqualFold(k, "Content-Length") { // set from the body
			req.Header.Set(k, v)
		}
	}
	resp, err := (&http.Client{Timeout: 5 * time.Minute}).Do(req)
	if err != nil {
		return stampduty.Fulfillment{}, fmt.Errorf("send the file to the bucket: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return stampduty.Fulfillment{}, fmt.Errorf("send the file to the bucket: it answered %s", resp.Status)
	}
	attach, _ := json.Marshal(map[string]string{"upload": up.Data.Upload})
	return c.changeFulfillment(http.MethodPut, doc, ff, "/certificate", nil, "application/json", attach)
}

// ordersCancel cancels an order for the reason --reason gives, and says
// who cancelled it, when and why: this cancel, or the one before it when
// the order was cancelled already (the API answers it as it stands).
func (c *cli) ordersCancel(fs *flag.FlagSet, args []string) error {
	reason := fs.String("reason", "", "why the order is cancelled: 1 to 200 printable characters (required)")
	rest, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *reason == "" {
		return usagef("orders cancel: --reason is required")
	}
	body, _ := json.Marshal(map[string]string{"reason": *reason})
	var o opsOrder
	if err := c.call(http.MethodPost, "/api/ops/live-orders/"+url.PathEscape(rest[0])+"/cancel", nil, "application/json", body, &o); err != nil {
		return err
	}
	x, at := o.Data.Cancellation, o.Data.CancelledAt
	if x == nil || at == nil {
		return fmt.Errorf("orders cancel: the API answered order %s without its cancellation", rest[0])
	}
	msg := fmt.Sprintf("order %s is cancelled, at %s by the %s", rest[0], *at, x.By)
	if x.Reason != nil {
		msg += ": " + *x.Reason
	}
	fmt.Fprintln(c.stdout, msg)
	return nil
}

// ordersDownload saves the certificate of an order's fulfillment, fetched
// with the pre-signed address the API gives, and checks its SHA-256.
func (c *cli) ordersDownload(fs *flag.FlagSet, args []string) error {
	ffFlag := fulfillmentFlag(fs)
	out := fs.String("out", "", "the file to write (default: the certificate's name, in this directory)")
	rest, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	ff, err := c.fulfillment(rest[0], *ffFlag)
	if err != nil {
		return err
	}
	f := ff.CertificateFile
	if f == nil {
		return fmt.Errorf("order %s fulfillment %s has no certificate file (yet)", rest[0], ff.DocumentID)
	}
	b, err := download(f)
	if err != nil {
		return err
	}
	path := cmp.Or(*out, filepath.Base(f.Name))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "wrote %s (%d bytes, sha256 %s)\n", path, len(b), f.SHA256)
	return nil
}

// download fetches file from its pre-signed address and checks its SHA-256.
func download(file *stampduty.File) ([]byte, error) {
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Get(file.URL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the file store answered %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, stampduty.MaxDirectCertificateSize+1))
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != file.SHA256 {
		return nil, errors.New("the file's SHA-256 is not the one the order records")
	}
	return b, nil
}

// ordersBackfill queues the orders stored before the work queue existed,
// and moves those stored before its shards into their shard.
func (c *cli) ordersBackfill(fs *flag.FlagSet, args []string) error {
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	n, err := storeCall(c, ordersSpec, "backfill the work queue", func(db *store.DB, name string) (int, error) {
		return db.Orders(name).Backfill(c.ctx)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "queued %d orders stored before the work queue or its shards (or test orders' entries stored in the live queue)\n", n)
	return nil
}

// ordersClaimNumbers claims the numbers of the papers stored before the
// numbers table (orders.ClaimStored) and prints what it did, and each
// number two stored papers share.
func (c *cli) ordersClaimNumbers(fs *flag.FlagSet, args []string) error {
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	db, ts, err := c.open(ordersSpec, numbersSpec)
	if err != nil {
		return err
	}
	r, err := orders.ClaimStored(c.ctx, db.Numbers(ts[1].name), db.Orders(ts[0].name).Each, c.now())
	if err != nil {
		return storeErr("claim the stored papers' numbers", err, ts...)
	}
	fmt.Fprintf(c.stdout, "claimed %d numbers of %d papers; %d numbers shared by two papers\n", r.Claimed, r.Papers, len(r.Shared))
	for _, sh := range r.Shared {
		fmt.Fprintf(c.stdout, "shared %s %s: paper %s of order %s (claimed) and paper %s of order %s\n",
			sh.Other.Field, sh.Other.Number, sh.Held.Paper, sh.Held.Order, sh.Other.Paper, sh.Other.Order)
	}
	return nil
}
