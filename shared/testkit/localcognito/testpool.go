package localcognito

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"

	"stampduty/shared/testkit/localserver"
	"stampduty/shared/testkit/samtemplate"
)

// TestPool is a cognito-local of one test with the template's staff pool,
// its app client and groups (MFA off, as the local stack runs it), and no
// user yet.
type TestPool struct {
	Endpoint, PoolID, ClientID string
	// Engine is cognito-local's own address, behind the front at
	// Endpoint (Server.Engine).
	Engine string
	Client *cip.Client
	// Log is what the server printed: cognito-local prints the messages
	// it would send (an invitation's temporary password) there.
	Log *SyncBuffer
}

// NewTestPool starts cognito-local for t, stopped when t ends, and creates
// the template's staff pool in it.
func NewTestPool(t testing.TB) *TestPool {
	t.Helper()
	root, tmpl := LocalTemplate(t)
	log := &SyncBuffer{}
	srv, client, pools := startWithPools(t, root, tmpl, log)
	if len(tmpl.UserPools) != 1 || len(tmpl.UserPoolClients) != 1 {
		t.Fatalf("the template has %d user pools and %d clients, not one of each", len(tmpl.UserPools), len(tmpl.UserPoolClients))
	}
	return &TestPool{Endpoint: srv.Endpoint, Engine: srv.Engine, PoolID: pools.Names[tmpl.UserPools[0].LogicalID],
		ClientID: pools.Names[tmpl.UserPoolClients[0].LogicalID], Client: client, Log: log}
}

// LocalTemplate loads the module's template.yaml as the local stack runs
// it (ConsoleMfa OFF: cognito-local cannot enrol an authenticator app),
// and returns the module root with it.
func LocalTemplate(t testing.TB) (string, *samtemplate.Template) {
	t.Helper()
	root, err := samtemplate.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := samtemplate.LoadWith(filepath.Join(root, "template.yaml"), map[string]string{"ConsoleMfa": "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	return root, tmpl
}

// startWithPools starts cognito-local for t (Start, its output to log),
// stopped when t ends, and creates tmpl's pools, clients and groups in it.
func startWithPools(t testing.TB, root string, tmpl *samtemplate.Template, log io.Writer) (*Server, *cip.Client, Pools) {
	t.Helper()
	ctx := context.Background()
	srv, err := Start(ctx, root, "", log)
	localserver.Require(t, err) // skipped without cognito-local, but in CI
	t.Cleanup(srv.Stop)
	client := Client(srv.Endpoint)
	pools, err := CreatePools(ctx, client, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	return srv, client, pools
}

// Claims decodes a token's payload, unverified: what the server put in
// it, for a test to read.
func Claims(t testing.TB, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("a token of %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	var c map[string]any
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Config returns an AWS configuration for the local server at endpoint:
// its region, dummy credentials, and endpoint as the base endpoint.
func Config(endpoint string) aws.Config {
	return aws.Config{Region: Region, BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(AccessKeyID, SecretAccessKey, "")}
}

// PoolID returns the id of the user pool named name (the local stack
// names each pool by its logical id) in the server at client's endpoint.
func PoolID(ctx context.Context, client *cip.Client, name string) (string, error) {
	p := cip.NewListUserPoolsPaginator(client, &cip.ListUserPoolsInput{MaxResults: aws.Int32(60)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return "", fmt.Errorf("list the user pools: %w", err)
		}
		for _, up := range out.UserPools {
			if aws.ToString(up.Name) == name {
				return aws.ToString(up.Id), nil
			}
		}
	}
	return "", fmt.Errorf("no user pool named %s", name)
}

// SyncBuffer is a bytes.Buffer safe for a server's output and a test's reads.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// SignUpRefusal is Cognito's answer to a SignUp on a pool that allows
// only administrators to create users, as AWS sends it (front.go).
const SignUpRefusal = `{"__type":"NotAuthorizedException","message":"SignUp is not permitted for this user pool"}`

// SignUp sends Cognito's SignUp for email on the app client clientID to
// endpoint as a browser does (no credentials: SignUp is public), and
// returns the answer's status, Content-Type and body.
func SignUp(t testing.TB, endpoint, clientID, email, password string) (int, string, string) {
	t.Helper()
	in, err := json.Marshal(map[string]any{"ClientId": clientID, "Username": email, "Password": password,
		"UserAttributes": []map[string]string{{"Name": "email", "Value": email}}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint+"/", bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", signUpTarget)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("SignUp at %s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("SignUp at %s: read the answer: %v", endpoint, err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
}

// WantSignUpRefused fails t unless a SignUp on clientID at endpoint is
// refused as Cognito refuses it on a pool that allows only
// administrators to create users: HTTP 400, SignUpRefusal in Cognito's
// JSON, the AWS SDK's NotAuthorizedException, and no account made.
func WantSignUpRefused(t testing.TB, endpoint, poolID, clientID string) {
	t.Helper()
	const email, password = "self-signed@example.com", "Self-signed-password-1"
	status, contentType, body := SignUp(t, endpoint, clientID, email, password)
	if status != http.StatusBadRequest || contentType != "application/x-amz-json-1.1" || body != SignUpRefusal {
		t.Errorf("SignUp: %d %s %s, want 400 application/x-amz-json-1.1 %s", status, contentType, body, SignUpRefusal)
	}
	client := Client(endpoint)
	_, err := client.SignUp(t.Context(), &cip.SignUpInput{ClientId: aws.String(clientID), Username: aws.String(email), Password: aws.String(password)})
	var nae *types.NotAuthorizedException
	if !errors.As(err, &nae) || aws.ToString(nae.Message) != "SignUp is not permitted for this user pool" {
		t.Errorf("SignUp through the AWS SDK: %v, want NotAuthorizedException: SignUp is not permitted for this user pool", err)
	}
	users, err := client.ListUsers(t.Context(), &cip.ListUsersInput{UserPoolId: aws.String(poolID), Filter: aws.String(`email = "` + email + `"`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(users.Users) != 0 {
		t.Errorf("SignUp made an account: %+v", users.Users)
	}
}
