package apigw

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// IAM checks the Signature Version 4 of requests to routes authorized with
// AWS_IAM, as API Gateway does before any function runs, against one key
// pair: the local stack's. Requests signed with it act as Principal.
type IAM struct {
	// Credentials are the only key pair the local API accepts.
	Credentials aws.Credentials
	// Region is the region requests must be signed for.
	Region string
	// Account and Principal are the account and the IAM ARN the requests
	// act as: requestContext.authorizer.iam.accountId and userArn.
	Account, Principal string
}

// maxSkew is how far a request's X-Amz-Date may be from the clock, as on AWS.
const maxSkew = 5 * time.Minute

// service is the signing name of API Gateway's execute-api.
const service = "execute-api"

// verify checks r's Authorization header (AWS4-HMAC-SHA256, signed for
// execute-api in the region, by the key pair, within maxSkew of now, over
// the body) and returns the authorizer context API Gateway passes on. The
// signature is recomputed with the AWS SDK's own signer over the headers the
// request says it signed; a mismatch in any part of the request is an error.
func (a *IAM) verify(r *http.Request, body []byte, now time.Time) (*events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription, error) {
	scheme, params, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || scheme != "AWS4-HMAC-SHA256" {
		return nil, errors.New("not signed with AWS4-HMAC-SHA256")
	}
	fields := map[string]string{}
	for _, p := range strings.Split(params, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		fields[k] = v
	}
	cred := strings.Split(fields["Credential"], "/")
	if len(cred) != 5 || cred[4] != "aws4_request" {
		return nil, errors.New("malformed credential scope")
	}
	if cred[0] != a.Credentials.AccessKeyID {
		return nil, errors.New("unknown access key")
	}
	if cred[2] != a.Region || cred[3] != service {
		return nil, fmt.Errorf("signed for %s/%s, not %s/%s", cred[2], cred[3], a.Region, service)
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil || cred[1] != at.Format("20060102") {
		return nil, errors.New("missing or malformed X-Amz-Date")
	}
	if d := now.Sub(at); d > maxSkew || d < -maxSkew {
		return nil, errors.New("signature expired")
	}
	signed := strings.Split(fields["SignedHeaders"], ";")
	if !slices.Contains(signed, "host") {
		return nil, errors.New("host is not signed")
	}

	// The request as the client signed it: its method, path, query and the
	// headers it named, nothing else.
	req, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	if err != nil {
		return nil, err
	}
	for _, h := range signed {
		switch h {
		case "host", "x-amz-date":
		case "content-length":
			// Go keeps it out of Header; the signer reads ContentLength.
			req.ContentLength = int64(len(body))
		default:
			req.Header[textproto.CanonicalMIMEHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != payload {
		return nil, errors.New("body does not match X-Amz-Content-Sha256")
	}
	if err := v4.NewSigner().SignHTTP(context.Background(), a.Credentials, req, payload, service, a.Region, at); err != nil {
		return nil, fmt.Errorf("recompute signature: %w", err)
	}
	_, want, _ := strings.Cut(req.Header.Get("Authorization"), "Signature=")
	if !hmac.Equal([]byte(want), []byte(fields["Signature"])) {
		return nil, errors.New("signature does not match")
	}
	return &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{
		AccessKey: a.Credentials.AccessKeyID,
		AccountID: a.Account,
		CallerID:  a.Credentials.AccessKeyID,
		UserARN:   a.Principal,
		UserID:    a.Credentials.AccessKeyID,
	}, nil
}
