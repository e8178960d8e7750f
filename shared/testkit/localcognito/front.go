package localcognito

// This file is the front the local Cognito's clients talk to: a reverse
// proxy on the address Start was given, before cognito-local on a port
// of its own, which answers as Cognito does where cognito-local does
// not. One case so far: SignUp on an app client of a pool whose
// AdminCreateUserConfig.AllowAdminCreateUserOnly is true (the staff
// pool's, in template.yaml). Cognito refuses it with HTTP 400
// {"__type":"NotAuthorizedException","message":"SignUp is not permitted
// for this user pool"}, as clients of deployed pools quote it
// (github.com/pmill/aws-cognito issue 37: the body as AWS sent it;
// aws-amplify/amplify-js issue 6415, awslabs/media-analysis-solution
// issue 8); cognito-local 5.3.0 never reads the setting and creates the
// account (TestLocalCognitoGaps in shared/staff pins that). The front
// reads the setting from the pool itself (DescribeUserPool), which
// CreatePools made from the template's UserPool: nothing is written
// down twice. Every other request, and a SignUp the pool allows, goes
// through unchanged.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"
)

// signUpTarget is the X-Amz-Target of Cognito's SignUp, as the SDKs
// send it.
const signUpTarget = "AWSCognitoIdentityProviderService.SignUp"

// maxSignUpBody bounds the SignUp body the front reads to find its
// client: Cognito's own requests are a few kilobytes.
const maxSignUpBody = 1 << 20

// front is the handler in front of cognito-local at engine.
type front struct {
	proxy  *httputil.ReverseProxy
	engine *cip.Client
}

// newFront returns the front of the cognito-local at engine.
func newFront(engine string) (*front, error) {
	target, err := url.Parse(engine)
	if err != nil {
		return nil, fmt.Errorf("cognito-local's address %q: %w", engine, err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:  func(r *httputil.ProxyRequest) { r.SetURL(target) },
		ErrorLog: log.New(io.Discard, "", 0), // cognito-local stopping: the client sees a 502
	}
	return &front{proxy: proxy, engine: Client(engine)}, nil
}

// ServeHTTP refuses a SignUp the pool does not allow, as Cognito does,
// and hands everything else to cognito-local.
func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/" && operation(r.Header.Get("X-Amz-Target")) == "SignUp" {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxSignUpBody))
		if err != nil {
			http.Error(w, "read the request", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		// An unknown client, or a pool cognito-local cannot describe, is
		// cognito-local's to answer.
		for _, client := range clientIDs(r.Header.Get("Content-Type"), body) {
			if only, err := f.adminCreateUserOnly(r.Context(), client); err == nil && only {
				writeError(w, http.StatusBadRequest, "NotAuthorizedException", "SignUp is not permitted for this user pool")
				return
			}
		}
	}
	f.proxy.ServeHTTP(w, r)
}

// operation returns the operation an X-Amz-Target names as cognito-local
// reads it: what follows the first dot, up to the next one. So a SignUp
// under any service prefix is one.
func operation(target string) string {
	_, op, _ := strings.Cut(target, ".")
	op, _, _ = strings.Cut(op, ".")
	return op
}

// clientIDs returns the ClientId of a request body as cognito-local
// reads it: the JSON member named exactly so (the last, when repeated)
// when sent as application/x-amz-json-1.1, every value of the form field
// when sent as application/x-www-form-urlencoded; none for any other
// body, which it does not read.
func clientIDs(contentType string, body []byte) []string {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/x-amz-json-1.1":
		var in map[string]json.RawMessage // case-sensitive, as JavaScript reads it
		var id string
		if json.Unmarshal(body, &in) == nil && json.Unmarshal(in["ClientId"], &id) == nil && id != "" {
			return []string{id}
		}
	case "application/x-www-form-urlencoded":
		form, _ := url.ParseQuery(string(body))
		return form["ClientId"]
	}
	return nil
}

// errNoClient reports an app client no pool of the server has.
var errNoClient = errors.New("no such app client")

// adminCreateUserOnly reports whether the pool of the app client
// clientID allows only administrators to create users.
func (f *front) adminCreateUserOnly(ctx context.Context, clientID string) (bool, error) {
	pools := cip.NewListUserPoolsPaginator(f.engine, &cip.ListUserPoolsInput{MaxResults: aws.Int32(60)})
	for pools.HasMorePages() {
		page, err := pools.NextPage(ctx)
		if err != nil {
			return false, fmt.Errorf("list the user pools: %w", err)
		}
		for _, p := range page.UserPools {
			_, err := f.engine.DescribeUserPoolClient(ctx, &cip.DescribeUserPoolClientInput{UserPoolId: p.Id, ClientId: aws.String(clientID)})
			if _, ok := errors.AsType[*types.ResourceNotFoundException](err); ok {
				continue
			} else if err != nil {
				return false, fmt.Errorf("describe app client %s: %w", clientID, err)
			}
			out, err := f.engine.DescribeUserPool(ctx, &cip.DescribeUserPoolInput{UserPoolId: p.Id})
			if err != nil {
				return false, fmt.Errorf("describe user pool %s: %w", aws.ToString(p.Id), err)
			}
			c := out.UserPool.AdminCreateUserConfig
			return c != nil && c.AllowAdminCreateUserOnly, nil
		}
	}
	return false, errNoClient
}

// writeError answers as Cognito's JSON protocol does an error: the
// status, the error's type in x-amzn-ErrorType and in the body's
// __type, and its message; with the CORS header cognito-local sends on
// every answer, so that a browser (the console) reads it.
func writeError(w http.ResponseWriter, status int, errType, message string) {
	body, _ := json.Marshal(map[string]string{"__type": errType, "message": message})
	h := w.Header()
	h.Set("Content-Type", "application/x-amz-json-1.1")
	h.Set("X-Amzn-Errortype", errType)
	h.Set("X-Amzn-Requestid", requestID())
	h.Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// requestID returns a random UUID, as Cognito's request ids are.
func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (Go 1.24+)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
