package openapi

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/schema_validation"

	"stampduty/shared/testkit/samtemplate"
)

func checker(t *testing.T) *Checker {
	t.Helper()
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Version is the document's openapi field.
func (c *Checker) Version() string { return c.model.Version }

// ValidateDocument checks the document against the OpenAPI 3.1 schema,
// then compiles the schema of each response as JSON Schema 2020-12 (the
// OpenAPI schema lets a broken schema object through, e.g. a property
// that is a string).
func (c *Checker) ValidateDocument() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok, errs := c.validator.ValidateDocument(); !ok {
		return joined("openapi.yaml is not a valid OpenAPI document", errs)
	}
	var broken []string
	opts := config.NewValidationOptions()
	for path, item := range c.model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			for code, resp := range op.Responses.Codes.FromOldest() {
				for mediaType, content := range resp.Content.FromOldest() {
					if content.Schema == nil {
						continue
					}
					if _, err := schema_validation.CompileSchemaForValidation(content.Schema.Schema(), schema_validation.SchemaValidationPurposeResponseBody, opts, 3.1); err != nil {
						broken = append(broken, fmt.Sprintf("%s %s %s %s: %v", method, path, code, mediaType, err))
					}
				}
			}
		}
	}
	if len(broken) > 0 {
		return fmt.Errorf("openapi.yaml has response schemas that do not compile:\n  - %s", strings.Join(broken, "\n  - "))
	}
	return nil
}

// root is the module's top, from this package's folder (where go test
// runs its tests).
const root = "../../.."

func TestDocumentIsValidOpenAPI31(t *testing.T) {
	c := checker(t)
	if got := c.Version(); !strings.HasPrefix(got, "3.1.") {
		t.Errorf("openapi = %q, want 3.1.x", got)
	}
	if err := c.ValidateDocument(); err != nil {
		t.Error(err)
	}
}

// TestDocumentHasEveryRouteOfTheTemplate is the drift test: each route of
// template.yaml is an operation of the document with the same
// authorization (SigV4 for AWS_IAM routes), and each operation is a route
// of the template. The $default route (404/405 for everything else) is the
// document's x-default-route, not an operation.
func TestDocumentHasEveryRouteOfTheTemplate(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]Operation{}
	for _, o := range checker(t).Operations() {
		ops[o.Method+" "+o.Path] = o
	}
	routes := map[string]bool{}
	for _, f := range tmpl.Functions {
		for _, r := range f.Routes {
			if r.Path == "$default" {
				continue
			}
			key := r.Method + " " + r.Path
			routes[key] = true
			o, ok := ops[key]
			switch {
			case !ok:
				t.Errorf("template.yaml routes %s (%s), which openapi.yaml does not describe", key, f.LogicalID)
			case o.SigV4 != r.IAM:
				t.Errorf("%s: openapi.yaml says SigV4 %v, template.yaml says AWS_IAM %v", key, o.SigV4, r.IAM)
			}
		}
	}
	for key := range ops {
		if !routes[key] {
			t.Errorf("openapi.yaml describes %s, which template.yaml does not route", key)
		}
	}
}

func answer(status int, contentType, body string, headers ...string) *http.Response {
	rec := httptest.NewRecorder()
	if contentType != "" {
		rec.Header().Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		rec.Header().Set(headers[i], headers[i+1])
	}
	rec.WriteHeader(status)
	io.WriteString(rec, body)
	return rec.Result()
}

const (
	jsonType = "application/json; charset=utf-8"
	order    = `{"id":7,"documentId":"k3v9xq2m7p4r8t1w5y6z0abc","createdAt":"2026-11-21T04:09:00.123Z","updatedAt":"2026-11-21T04:09:00.123Z",` +
		`"live_order_fulfillments":[{"id":8,"documentId":"a3v9xq2m7p4r8t1w5y6z0abc","order_status":"Pending","unique_doc_ref":"","certificate_number":"","certificate_file":null,` +
		`"status_history":[{"order_status":"Pending","at":"2026-11-21T04:09:00.123Z"}]}],` +
		`"stamp_duty":{"id":9,"amount":20,"description":"N/A","first_party_name":"Asha Rao","first_party_address":"","first_party_PAN":"","second_party_name":"Vikram Shah",` +
		`"second_party_address":"","second_party_PAN":"","paid_by":"First Party","purchased_by":"","quantity":1,"total_amount":20,"state":"Karnataka","consideration_price":0,` +
		`"mobile_number":"9876543210","uploaded_document":null,"state_purpose":{"id":3,"documentId":"b3v9xq2m7p4r8t1w5y6z0abc","purpose_name":"Affidavit"},"duty":null},"cancelledAt":null,"cancellation":null,"livemode":true,"payment":{"held":"20.00","charged":"0.00","released":"0.00"}}`
	envelope404 = `{"data":null,"error":{"status":404,"name":"NotFoundError","message":"Not Found","details":{}}}`
)

// TestCheckResponse shows the checker refusing what the document does not
// allow, so that the handler tests' checks can fail.
func TestCheckResponse(t *testing.T) {
	c := checker(t)
	for _, tc := range []struct {
		name, method, target string
		resp                 *http.Response
		wantErr              string // "" when the answer conforms
	}{
		{"an order conforms", "GET", "/api/live-orders/k3v9xq2m7p4r8t1w5y6z0abc",
			answer(200, jsonType, `{"data":`+order+`,"meta":{}}`), ""},
		{"a field the document lacks fails", "GET", "/api/live-orders/k3v9xq2m7p4r8t1w5y6z0abc",
			answer(200, jsonType, `{"data":`+strings.Replace(order, `"id":7,`, `"id":7,"secret":1,`, 1)+`,"meta":{}}`), "secret"},
		{"a missing field fails", "GET", "/api/live-orders/k3v9xq2m7p4r8t1w5y6z0abc",
			answer(200, jsonType, `{"data":`+strings.Replace(order, `"updatedAt":"2026-11-21T04:09:00.123Z",`, "", 1)+`,"meta":{}}`), "updatedAt"},
		{"an undocumented status fails", "GET", "/api/stamp-duty-datas",
			answer(409, jsonType, `{"data":null,"error":{"status":409,"name":"ConflictError","message":"x","details":{}}}`), "409"},
		{"another Content-Type fails", "GET", "/api/live-orders/k3v9xq2m7p4r8t1w5y6z0abc",
			answer(404, "text/plain", envelope404), "text/plain"},
		{"an error name that is not the status's fails", "GET", "/api/live-orders/k3v9xq2m7p4r8t1w5y6z0abc",
			answer(404, jsonType, strings.Replace(envelope404, "NotFoundError", "ValidationError", 1)), "NotFoundError"},
		{"a 409 without Retry-After fails", "PUT", "/api/live-orders/k3v9xq2m7p4r8t1w5y6z0abc/document",
			answer(409, jsonType, `{"data":null,"error":{"status":409,"name":"ConflictError","message":"x","details":{}}}`), "Retry-After"},
		{"a 409 with Retry-After conforms", "PUT", "/api/live-orders/k3v9xq2m7p4r8t1w5y6z0abc/document",
			answer(409, jsonType, `{"data":null,"error":{"status":409,"name":"ConflictError","message":"x","details":{}}}`, "Retry-After", "1"), ""},
		{"offset pagination conforms", "GET", "/api/stamp-duty-datas?pagination[start]=0&pagination[limit]=1",
			answer(200, jsonType, `{"data":[{"id":1,"documentId":"x"}],"meta":{"pagination":{"start":0,"limit":1,"total":3}}}`), ""},
		{"mixed pagination blocks fail", "GET", "/api/stamp-duty-datas",
			answer(200, jsonType, `{"data":[],"meta":{"pagination":{"page":1,"limit":1,"total":3}}}`), "pagination"},
		{"an unknown path answering the envelope 404 conforms", "GET", "/api/nothing-here",
			answer(404, jsonType, envelope404), ""},
		{"an unknown path answering API Gateway's bare 404 fails", "GET", "/api/nothing-here",
			answer(404, jsonType, `{"message":"Not Found"}`), "Error404"},
		{"an unknown path answering 200 fails", "GET", "/api/nothing-here",
			answer(200, jsonType, `{}`), "want 404"},
		{"another method on a known path answers 405", "DELETE", "/api/live-orders",
			answer(405, jsonType, `{"data":null,"error":{"status":405,"name":"MethodNotAllowedError","message":"Method DELETE is not allowed here","details":{}}}`), ""},
		{"another method on a known path answering 404 fails", "DELETE", "/api/live-orders",
			answer(404, jsonType, envelope404), "want 405"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CheckResponse(httptest.NewRequest(tc.method, tc.target, nil), tc.resp)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("want no error, got %v", err)
			case tc.wantErr != "" && err == nil:
				t.Errorf("want an error mentioning %q, got none", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("error does not mention %q: %v", tc.wantErr, err)
			}
		})
	}
}
