// Package openapi checks HTTP answers against the API's OpenAPI 3.1
// description (shared/apidoc/openapi.yaml) with pb33f's
// libopenapi-validator, for functest, which checks every answer the
// handler tests get; no Lambda binary links the validator.
package openapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"stampduty/shared/apidoc"
	"stampduty/shared/apipath"
)

// Operation is one method and path of the document, with whether it is
// signed with SigV4 (the operators' routes) or needs no credentials.
type Operation struct {
	Method string
	Path   string
	SigV4  bool
	Public bool
}

// Checker checks answers against the document. It is safe for concurrent
// use.
type Checker struct {
	mu        sync.Mutex
	model     *v3.Document
	validator validator.Validator
	schemas   schema_validation.SchemaValidator
}

// New parses the document and builds its validator.
func New() (*Checker, error) {
	doc, err := libopenapi.NewDocument(apidoc.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml: building the model: %w", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return nil, fmt.Errorf("openapi.yaml: building the validator: %w", errors.Join(errs...))
	}
	return &Checker{model: &model.Model, validator: v, schemas: schema_validation.NewSchemaValidator()}, nil
}

// Operations lists the document's operations, sorted by path then method.
func (c *Checker) Operations() []Operation {
	var out []Operation
	for path, item := range c.model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			o := Operation{Method: strings.ToUpper(method), Path: path}
			if op.Security != nil {
				o.Public = len(op.Security) == 0
				for _, req := range op.Security {
					for name := range req.Requirements.KeysFromOldest() {
						o.SigV4 = o.SigV4 || name == "sigv4"
					}
				}
			}
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b Operation) int {
		return strings.Compare(a.Path+" "+a.Method, b.Path+" "+b.Method)
	})
	return out
}

// CheckResponse checks resp, the answer to req, against the document: a
// documented status, its Content-Type, headers and body. An answer to a
// path or method the document does not have must be the $default route's:
// 308 for a GET or HEAD of a GET operation's path with a trailing slash,
// 404 NotFoundError for an unknown path, 405 MethodNotAllowedError for a
// known path with another method.
func (c *Checker) CheckResponse(req *http.Request, resp *http.Response) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Which operation takes the request is API Gateway's decision, made as
	// apipath makes it (the validator's own router is more lenient: it
	// takes a trailing slash or an empty segment as the route's path).
	knownPath, knownMethod := false, false
	for _, op := range c.Operations() {
		if _, ok := apipath.Parse(op.Path).Match(req.URL.Path); ok {
			knownPath = true
			knownMethod = knownMethod || op.Method == req.Method
		}
	}
	if !knownMethod {
		return c.checkDefaultRoute(req, resp, knownPath)
	}
	ok, errs := c.validator.ValidateHttpResponse(req, resp)
	if ok {
		return nil
	}
	return joined(fmt.Sprintf("%s %s answered %d against openapi.yaml", req.Method, req.URL.Path, resp.StatusCode), errs)
}

// checkDefaultRoute checks the answer to a request no operation of the
// document matches.
func (c *Checker) checkDefaultRoute(req *http.Request, resp *http.Response, knownPath bool) error {
	want := http.StatusNotFound
	if knownPath {
		want = http.StatusMethodNotAllowed
	}
	what := fmt.Sprintf("%s %s (no operation in openapi.yaml: the $default route)", req.Method, req.URL.Path)
	// A GET or HEAD of a GET operation's path with one trailing slash more
	// is sent there (x-default-route's 308), with no body.
	if trimmed, ok := strings.CutSuffix(req.URL.Path, "/"); ok && trimmed != "" && (req.Method == http.MethodGet || req.Method == http.MethodHead) {
		for _, op := range c.Operations() {
			if _, match := apipath.Parse(op.Path).Match(trimmed); match && op.Method == http.MethodGet {
				if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") == "" {
					return fmt.Errorf("%s answered %d, Location %q; want 308 to the path without its slash", what, resp.StatusCode, resp.Header.Get("Location"))
				}
				return nil
			}
		}
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s answered %d, want %d", what, resp.StatusCode, want)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("%s answered Content-Type %q, want application/json", what, ct)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s: reading the body: %w", what, err)
	}
	if req.Method == http.MethodHead {
		if len(body) > 0 {
			return fmt.Errorf("%s: a HEAD answer has a body (%d bytes)", what, len(body))
		}
		return nil
	}
	name := "Error" + strconv.Itoa(want)
	proxy, found := c.model.Components.Schemas.Get(name)
	if !found {
		return fmt.Errorf("openapi.yaml has no components.schemas.%s", name)
	}
	if ok, errs := c.schemas.ValidateSchemaBytes(proxy.Schema(), body); !ok {
		return joined(fmt.Sprintf("%s: body is not %s", what, name), errs)
	}
	return nil
}

func joined(what string, errs []*verrors.ValidationError) error {
	var b strings.Builder
	b.WriteString(what)
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  - %s: %s", e.Message, e.Reason)
		for _, s := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n      %s at %s (%s)", s.Reason, s.FieldPath, s.KeywordLocation)
		}
	}
	return errors.New(b.String())
}

// CheckSchema checks body against components.schemas.name: a body the API
// sends that is not an answer (a webhook delivery's).
func (c *Checker) CheckSchema(name string, body []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	proxy, found := c.model.Components.Schemas.Get(name)
	if !found {
		return fmt.Errorf("openapi.yaml has no components.schemas.%s", name)
	}
	if ok, errs := c.schemas.ValidateSchemaBytes(proxy.Schema(), body); !ok {
		return joined("body is not "+name, errs)
	}
	return nil
}
