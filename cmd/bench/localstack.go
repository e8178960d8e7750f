package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/cmd/internal/localstack"
	"stampduty/cmd/internal/runtimeapi"
	"stampduty/shared/functest"
	"stampduty/shared/samtemplate"
	"stampduty/shared/store"
	"stampduty/shared/store/localdb"
)

// database is a local DynamoDB (dynalite) with the template's tables named
// by their logical ids, the sample catalogue and the dev token, as the local
// stack seeds it.
type database struct {
	srv      *localdb.Server
	Endpoint string
	DB       *store.DB
}

// startDatabase starts dynalite, creates the tables and seeds them as
// cmd/local does: the catalogue cmd/local/articles.json and the dev token.
func startDatabase(ctx context.Context, root string, tmpl *samtemplate.Template) (*database, error) {
	srv, err := localdb.Start(ctx, root, "", nil)
	if err != nil {
		return nil, err
	}
	d := &database{srv: srv, Endpoint: srv.Endpoint}
	client := localdb.Client(srv.Endpoint)
	if err := localdb.CreateTables(ctx, client, tmpl.Tables, nil); err != nil {
		srv.Stop()
		return nil, err
	}
	d.DB = store.New(client)
	if _, err := localdb.Seed(ctx, d.DB, localdb.LogicalNames, filepath.Join(root, localdb.SampleCatalogue), true); err != nil {
		srv.Stop()
		return nil, err
	}
	return d, nil
}

// stop kills dynalite.
func (d *database) stop() { d.srv.Stop() }

// lambdaFunction describes the function logicalID (or the hello-world
// Lambda) built at path, for runtimeapi, talking to DynamoDB at endpoint.
func lambdaFunction(tmpl *samtemplate.Template, logicalID, path, endpoint string, log *tailWriter) (runtimeapi.Function, error) {
	fn := runtimeapi.Function{Name: logicalID, Path: path, Log: log, MemoryMB: 128, Timeout: 10 * time.Second}
	if logicalID == helloID {
		fn.Env = []string{"AWS_REGION=" + localdb.Region}
		return fn, nil
	}
	f, ok := tmpl.Function(logicalID)
	if !ok {
		return fn, fmt.Errorf("template.yaml has no function %s", logicalID)
	}
	return localstack.Function(tmpl, f, path, endpoint, log)
}

// The requests of the report: typical requests of each function.
var (
	devHeaders = map[string]string{"authorization": "Bearer " + localdb.DevToken, "content-type": "application/json"}
	// createBody is a valid order for the fixed-amount article Affidavit/Karnataka.
	createBody = `{"amount": 20, "considerationPrice": 0, "description": "Affidavit for address proof", "purpose": "Affidavit", ` +
		`"state": "Karnataka", "paidBy": "First Party", "purchasedBy": "Asha Rao", "firstPartyMobileNumber": "9876543210", ` +
		`"firstPartyName": "Asha Rao", "secondPartyName": "Notary Public", "firstPartyAddress": "12, MG Road, Bengaluru - 560001", ` +
		`"secondPartyAddress": "", "firstPartyPan": "ABCDE1234F", "secondPartyPan": ""}`
)

// createEvent is POST /api/live-orders with createBody and the dev token.
func createEvent() []byte {
	return mustJSON(functest.Request("POST", "/api/live-orders", "", devHeaders, createBody))
}

// listOrdersEvent is GET /api/live-orders for page of size with the dev token.
func listOrdersEvent(page, size int) []byte {
	return mustJSON(functest.Request("GET", "/api/live-orders", fmt.Sprintf("page=%d&pageSize=%d", page, size), devHeaders, ""))
}

// listArticlesEvent is GET /api/stamp-duty-datas, page 1 of 25 by purpose name.
func listArticlesEvent() []byte {
	return mustJSON(functest.Request("GET", "/api/stamp-duty-datas",
		"pagination%5Bpage%5D=1&pagination%5BpageSize%5D=25&sort%5B0%5D=purpose_name%3Aasc", nil, ""))
}

// helloEvent is any request: the hello-world Lambda answers them all.
func helloEvent() []byte {
	return mustJSON(functest.Request("GET", "/", "", nil, ""))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// checkOK fails unless out is an API Gateway response with status 200.
func checkOK(name string, out []byte) error {
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return fmt.Errorf("%s: response %.200q: %w", name, out, err)
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: status %d: %.300s", name, resp.StatusCode, resp.Body)
	}
	return nil
}

// tailWriter keeps the last lines a function wrote, for error messages.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

// Write keeps the last 4 KiB written.
func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > 4096 {
		w.buf = append([]byte(nil), w.buf[len(w.buf)-4096:]...)
	}
	return len(p), nil
}

// String returns what was kept, indented.
func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := string(bytes.TrimSpace(w.buf))
	if s == "" {
		return ""
	}
	return "\n  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// withLog adds what the function logged to err.
func withLog(err error, log *tailWriter) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	if s := log.String(); s != "" {
		return fmt.Errorf("%w; function output:%s", err, s)
	}
	return err
}
