// Package localdb runs the local DynamoDB engine (dynalite, installed by
// `make dynalite`), creates in it the tables template.yaml defines, seeds
// them, and holds the local stack's fixed settings (region, keys, tokens).
package localdb

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/auth"
	"stampduty/shared/config"
	"stampduty/shared/links"
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

// ModuleRoot returns the module's root at or above dir: where template.yaml is.
func ModuleRoot(dir string) (string, error) { return samtemplate.Root(dir) }

// Installed returns dynalite's entry point under the module root, or a
// *localserver.NotInstalledError when `make dynalite` has not run.
func Installed(root string) (string, error) {
	return localserver.Find(root, DynalitePath, "dynalite", "dynalite")
}

// Start starts dynalite, in memory, as localserver.Start does (on addr, or
// a free loopback port), from the module root; its output goes to log.
// Without dynalite, its error is a *localserver.NotInstalledError.
func Start(ctx context.Context, root, addr string, log io.Writer) (*localserver.Server, error) {
	cli, err := Installed(root)
	if err != nil {
		return nil, err
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

// CreateTables creates each table as the template defines it, under
// names[LogicalID] (the LogicalID itself when absent, as `sam local`
// resolves a !Ref), leaving a table that exists as it is.
func CreateTables(ctx context.Context, client *dynamodb.Client, tables []samtemplate.Table, names map[string]string) error {
	for _, t := range tables {
		name := cmp.Or(names[t.LogicalID], t.LogicalID)
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
				IndexName: aws.String(g.Name), KeySchema: keySchema(g.KeySchema), Projection: projection(g)})
		}
		for _, l := range t.LocalIndexes {
			in.LocalSecondaryIndexes = append(in.LocalSecondaryIndexes, types.LocalSecondaryIndex{
				IndexName: aws.String(l.Name), KeySchema: keySchema(l.KeySchema), Projection: projection(l)})
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

func projection(ix samtemplate.Index) *types.Projection {
	return &types.Projection{ProjectionType: types.ProjectionType(ix.ProjectionType), NonKeyAttributes: ix.NonKeyAttributes}
}

func keySchema(ks []samtemplate.Key) []types.KeySchemaElement {
	var out []types.KeySchemaElement
	for _, k := range ks {
		out = append(out, types.KeySchemaElement{AttributeName: aws.String(k.Name), KeyType: types.KeyType(k.Type)})
	}
	return out
}

// DevToken is the token of DevOwner the local stack registers and the
// events/ samples carry; no command registers it on AWS. TokenHashKey is
// the published, worthless token hashing key of local stacks and tests
// (on AWS the key is in SSM Parameter Store).
const (
	DevToken     = "sdt_LOCALxDEVxTOKENxNEVERxVALIDxONxAWSx00000000"
	DevOwner     = "dev"
	TokenHashKey = "local-only-token-hash-key-not-a-secret-0001"
	// LinkKey signs the local stack's download links.
	LinkKey = "local-only-files-link-key-not-a-secret-0001"
)

// The key pair the local stack's operator API (/api/ops/) accepts when its
// environment names none, and who requests signed with it act as: printed
// by the stack and named by stampctl, valid nowhere but there.
const (
	OperatorKeyID  = "AKIALOCALOPERATOR000"
	OperatorSecret = "local-operator-secret-not-valid-on-aws"
	OperatorARN    = "arn:aws:iam::000000000000:user/local-operator"
)

// OperatorExports is the shell line pointing stampctl (and any AWS tool)
// at a local operator API at apiURL taking keyID, secret for region: the
// line the local stack prints and stampctl repeats, so they never differ.
func OperatorExports(keyID, secret, region, apiURL string) string {
	return fmt.Sprintf("export AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s AWS_REGION=%s STAMPDUTY_API_URL=%s",
		keyID, secret, region, apiURL)
}

// StackName is the local stack's name, as a template's ${AWS::StackName}.
const StackName = "stampduty-local"

// Params are the template parameters of a local stack: the local values of
// the SSM parameters the template resolves ("ssm:NAME"), and the stack's
// name (AWS::StackName), for Resolve.
func Params() map[string]string {
	return map[string]string{"ssm:" + auth.DefaultKeyParameter: TokenHashKey, "ssm:" + links.DefaultKeyParameter: LinkKey,
		"AWS::StackName": StackName}
}

// LocalRuntime completes env, a function's environment as template.yaml
// resolves it, as a local runtime does (`sam local --env-vars`, the local
// stack, the tests): config.LocalSignal "true", and the engines' addresses
// in DYNAMODB_ENDPOINT, S3_ENDPOINT and COGNITO_ENDPOINT (the local
// Cognito's, "" where there is none) where the template declares them.
func LocalRuntime(env map[string]string, dynamodb, s3, cognito string) {
	env[config.LocalSignal] = "true"
	for name, addr := range map[string]string{"DYNAMODB_ENDPOINT": dynamodb, "S3_ENDPOINT": s3, "COGNITO_ENDPOINT": cognito} {
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
