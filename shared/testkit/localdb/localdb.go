// Package localdb runs the local DynamoDB engine (dynalite, an in-memory
// server of the DynamoDB API, installed by `make dynalite` from the pinned
// package in cmd/local/dynalite) and creates in it the tables template.yaml
// defines, exactly as the template defines them. The local stack and the
// tests use it; Lambda functions never do.
package localdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/auth"
	"stampduty/shared/config"
	"stampduty/shared/testkit/localserver"
	"stampduty/shared/testkit/samtemplate"
)

// DynalitePath is where `make dynalite` installs dynalite's entry point,
// relative to the module root.
const DynalitePath = "cmd/local/dynalite/node_modules/dynalite/cli.js"

// Region and the credentials below are what local clients use: dynalite
// checks that requests are signed, not by whom.
const (
	Region          = "us-east-1"
	AccessKeyID     = "local"
	SecretAccessKey = "local"
)

// Server is a running dynalite process.
type Server = localserver.Server

// ErrAddrInUse is returned by Start when something else listens on the
// address it was given.
var ErrAddrInUse = localserver.ErrAddrInUse

// CheckFree reports whether a TCP listener could be opened on addr now;
// when something listens there already, the error wraps ErrAddrInUse.
func CheckFree(addr string) error { return localserver.CheckFree(addr) }

// ModuleRoot returns the directory of go.mod at or above dir.
func ModuleRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod in %s or above", dir)
		}
	}
}

// Start starts dynalite, in memory, on a free loopback port (or on addr when
// not empty and not port 0) and returns once it answers. root is the module
// root; the server's own output goes to log. The server dies with this
// process.
//
// Start never hands back an engine it did not start: when addr is in use,
// or dynalite could not listen on it, it returns an error wrapping
// ErrAddrInUse, and whatever listens there is left alone.
func Start(ctx context.Context, root, addr string, log io.Writer) (*Server, error) {
	cli := filepath.Join(root, DynalitePath)
	if _, err := os.Stat(cli); err != nil {
		return nil, fmt.Errorf("dynalite is not installed (%s): run `make dynalite`", DynalitePath)
	}
	return localserver.Start(ctx, addr, localserver.Spec{
		Name: "dynalite",
		Command: func(host, port string) *exec.Cmd {
			return exec.Command("node", cli, "--host", host, "--port", port,
				"--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0")
		},
		Listening: "Dynalite listening at",
		Probe: func(ctx context.Context, endpoint string) error {
			_, err := Client(endpoint).ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)},
				func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
			return err
		},
		Log: log,
	})
}

// Client returns a DynamoDB client for a local engine at endpoint.
func Client(endpoint string) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKeyID, SecretAccessKey, ""),
		BaseEndpoint: aws.String(endpoint),
	})
}

// CreateTables creates each table of the template under names[LogicalID]
// (the LogicalID itself when absent, which is what `sam local` resolves a
// !Ref to), with the template's key schema, attributes, indexes and TTL. A
// table that exists already is left as it is.
func CreateTables(ctx context.Context, client *dynamodb.Client, tables []samtemplate.Table, names map[string]string) error {
	for _, t := range tables {
		name := names[t.LogicalID]
		if name == "" {
			name = t.LogicalID
		}
		in := &dynamodb.CreateTableInput{
			TableName:   aws.String(name),
			BillingMode: types.BillingMode(t.BillingMode),
			KeySchema:   keySchema(t.KeySchema),
		}
		for _, a := range t.Attributes {
			in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
				AttributeName: aws.String(a.Name), AttributeType: types.ScalarAttributeType(a.Type)})
		}
		for _, g := range t.GlobalIndexes {
			in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
				IndexName:  aws.String(g.Name),
				KeySchema:  keySchema(g.KeySchema),
				Projection: &types.Projection{ProjectionType: types.ProjectionType(g.ProjectionType), NonKeyAttributes: g.NonKeyAttributes},
			})
		}
		for _, l := range t.LocalIndexes {
			in.LocalSecondaryIndexes = append(in.LocalSecondaryIndexes, types.LocalSecondaryIndex{
				IndexName:  aws.String(l.Name),
				KeySchema:  keySchema(l.KeySchema),
				Projection: &types.Projection{ProjectionType: types.ProjectionType(l.ProjectionType), NonKeyAttributes: l.NonKeyAttributes},
			})
		}
		_, err := client.CreateTable(ctx, in)
		var inUse *types.ResourceInUseException
		if errors.As(err, &inUse) {
			continue
		}
		if err != nil {
			return fmt.Errorf("create table %s (%s): %w", name, t.LogicalID, err)
		}
		if err := dynamodb.NewTableExistsWaiter(client).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 30*time.Second,
			func(o *dynamodb.TableExistsWaiterOptions) {
				o.MinDelay = 20 * time.Millisecond
				o.MaxDelay = 200 * time.Millisecond
			}); err != nil {
			return fmt.Errorf("wait for table %s: %w", name, err)
		}
		if t.TTLAttribute != "" {
			// dynalite does not implement TTL; DynamoDB does. Expired items are
			// filtered by the code that reads them, so both behave the same.
			_, _ = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
				TableName:               aws.String(name),
				TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(t.TTLAttribute), Enabled: aws.Bool(true)},
			})
		}
	}
	return nil
}

func keySchema(ks []samtemplate.Key) []types.KeySchemaElement {
	var out []types.KeySchemaElement
	for _, k := range ks {
		out = append(out, types.KeySchemaElement{AttributeName: aws.String(k.Name), KeyType: types.KeyType(k.Type)})
	}
	return out
}

// DevToken is the token the local stack registers (for owner DevOwner) in
// the local engine it runs, and the one the events/ samples carry. It exists
// only in local engines: no command registers it on AWS.
const DevToken = "sdt_LOCALxDEVxTOKENxNEVERxVALIDxONxAWSx00000000"

// DevOwner is the owner of DevToken.
const DevOwner = "dev"

// TokenHashKey is the token hashing key of local stacks and tests: on AWS
// the key comes from SSM Parameter Store (see template.yaml), here it is
// this published, worthless value.
const TokenHashKey = "local-only-token-hash-key-not-a-secret-0001"

// The key pair the local stack's operator API (the AWS_IAM routes, under
// /api/ops/) accepts when its environment names none, and who requests
// signed with it act as: fixed, printed by the stack (OperatorExports) and
// named by stampctl when it has nowhere to go, valid nowhere but there.
const (
	OperatorKeyID  = "AKIALOCALOPERATOR000"
	OperatorSecret = "local-operator-secret-not-valid-on-aws"
	OperatorARN    = "arn:aws:iam::000000000000:user/local-operator"
)

// OperatorExports is the shell line that points stampctl (and any AWS
// tool) at a local operator API at apiURL which accepts the key pair
// keyID, secret signed for region: the line the local stack prints and
// stampctl repeats, so that the two never differ.
func OperatorExports(keyID, secret, region, apiURL string) string {
	return fmt.Sprintf("export AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s AWS_REGION=%s STAMPDUTY_API_URL=%s",
		keyID, secret, region, apiURL)
}

// Params are the template parameters of a local stack: the local values of
// the SSM parameters the template resolves (as "ssm:NAME"), for
// samtemplate.Template.Resolve. No parameter points a function at a local
// engine (LocalRuntime does).
func Params() map[string]string {
	return map[string]string{"ssm:" + auth.DefaultKeyParameter: TokenHashKey}
}

// LocalRuntime completes env, a function's environment as template.yaml
// resolves it, as a local Lambda runtime does (`sam local` with its
// --env-vars file, the local stack, the tests): config.LocalSignal is
// "true", and each local-engine variable the template declares empty for
// it (config.LocalEndpoints) is given the engine's address,
// DYNAMODB_ENDPOINT dynamodb's and S3_ENDPOINT s3's.
func LocalRuntime(env map[string]string, dynamodb, s3 string) {
	env[config.LocalSignal] = "true"
	for name, addr := range map[string]string{"DYNAMODB_ENDPOINT": dynamodb, "S3_ENDPOINT": s3} {
		if _, declared := env[name]; declared {
			env[name] = addr
		}
	}
}

// Hasher returns the token hasher of local stacks and tests (TokenHashKey).
func Hasher() *auth.Hasher {
	h, err := auth.NewHasher(TokenHashKey)
	if err != nil {
		panic(err) // TokenHashKey is a constant of the right length
	}
	return h
}
