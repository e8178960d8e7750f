package testkit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// SignForAPI signs req, whose body is body, as an AWS SDK client signs a
// call of API Gateway's AWS_IAM routes: Signature Version 4 for
// execute-api in region, by creds, at the time at.
func SignForAPI(t testing.TB, req *http.Request, body []byte, creds aws.Credentials, region string, at time.Time) {
	t.Helper()
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "execute-api", region, at); err != nil {
		t.Fatal(err)
	}
}
