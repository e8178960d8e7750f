//go:build !benchmarks

package functest

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"stampduty/shared/testkit/openapi"
)

// document is the API's OpenAPI description with its validator, parsed once
// for the whole test binary (parsing and compiling it takes a few hundred
// milliseconds; the checker is safe for concurrent use).
var document = sync.OnceValues(openapi.New)

// CheckOpenAPI checks the answer out to ev against shared/testkit/openapi's
// document: the operation the request matches, its documented status,
// Content-Type, headers and body (or, for a path or method the document
// does not have, the $default route's 404/405 envelope).
func CheckOpenAPI(ev events.APIGatewayV2HTTPRequest, out events.APIGatewayV2HTTPResponse) error {
	c, err := document()
	if err != nil {
		return err
	}
	method := ev.RequestContext.HTTP.Method
	if method == "" {
		method, _, _ = strings.Cut(ev.RouteKey, " ")
	}
	target := &url.URL{Scheme: "https", Host: "api.example.com", Path: ev.RawPath, RawQuery: ev.RawQueryString}
	req, err := http.NewRequest(method, target.String(), nil)
	if err != nil {
		return fmt.Errorf("openapi: the request: %w", err)
	}
	for k, v := range ev.Headers {
		req.Header.Set(k, v)
	}
	body := []byte(out.Body)
	if out.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(out.Body); err != nil {
			return fmt.Errorf("openapi: the answer's base64 body: %w", err)
		}
	}
	resp := &http.Response{StatusCode: out.StatusCode, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)), Request: req}
	for k, vs := range out.MultiValueHeaders {
		for _, v := range vs {
			resp.Header.Add(k, v)
		}
	}
	for k, v := range out.Headers {
		resp.Header.Set(k, v)
	}
	return c.CheckResponse(req, resp)
}
