package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/smithy-go"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
)

// Where stampctl works: on a deployed stack (--stack or STAMPDUTY_STACK,
// whose outputs DescribeStacks reads; an explicit variable wins over an
// output, --api-url over both) with the operator's AWS credentials, or on
// the local stack (DYNAMODB_ENDPOINT, and its operator pair for the API).
// With none of these a command does not guess: it names what to set for
// AWS and, as the local stack prints them, for the local one. (Defaulting
// to the local addresses once sent AWS work to them, and signed API
// requests with the local engine's dummy credentials, which give 403.)

// The local stack's default addresses (cmd/local's LOCAL_ADDR and
// LOCAL_DYNAMODB_ADDR).
const (
	localAPIURL   = "http://127.0.0.1:3000"
	localDynamoDB = "http://127.0.0.1:8000"
)

// tableSpec is one of the service's tables: the variable that names it,
// its logical id (the local stack's name) and the stack output naming it.
type tableSpec struct {
	envVar, logicalID, output string
}

// The tables stampctl reads or writes.
var (
	articlesSpec   = tableSpec{"ARTICLES_TABLE", "ArticlesTable", "ArticlesTableName"}
	tokensSpec     = tableSpec{"TOKENS_TABLE", "TokensTable", "TokensTableName"}
	countersSpec   = tableSpec{"COUNTERS_TABLE", "CountersTable", "CountersTableName"}
	catalogueSpec  = tableSpec{"CATALOGUE_TABLE", "CatalogueTable", "CatalogueTableName"}
	articleLogSpec = tableSpec{"ARTICLE_LOG_TABLE", "ArticleLogTable", "ArticleLogTableName"}
	ordersSpec     = tableSpec{"ORDERS_TABLE", "OrdersTable", "OrdersTableName"}
	webhooksSpec   = tableSpec{"WEBHOOKS_TABLE", "WebhooksTable", "WebhooksTableName"}
	deliveriesSpec = tableSpec{"DELIVERIES_TABLE", "DeliveriesTable", "DeliveriesTableName"}
	numbersSpec    = tableSpec{"NUMBERS_TABLE", "NumbersTable", "NumbersTableName"}
)

// The stack's output giving the API's address, and its parameter naming
// the token key's SSM parameter.
const (
	apiURLOutput = "ApiUrl"
	hashKeyParam = "TokenHashKeyParameter"
)

// table is a table as stampctl resolved it: its name and where the name
// came from, for messages ("TOKENS_TABLE", "stack S's output ...").
type table struct{ name, from string }

// String returns "name (from)", for messages.
func (t table) String() string { return t.name + " (" + t.from + ")" }

// table resolves spec's table: its variable, else the stack's output, else
// the logical id against a local engine; otherwise it says what to set.
func (c *cli) table(spec tableSpec) (table, error) {
	if v := strings.TrimSpace(c.getenv(spec.envVar)); v != "" {
		return table{name: v, from: spec.envVar}, nil
	}
	st, err := c.stack()
	if err != nil {
		return table{}, err
	}
	if st != nil {
		v, err := st.output(spec.output)
		return table{name: v, from: fmt.Sprintf("stack %s's output %s", st.name, spec.output)}, err
	}
	if c.dynamoEndpoint() != "" {
		return table{name: spec.logicalID, from: "the local stack's name; set " + spec.envVar + " for another"}, nil
	}
	return table{}, errors.New("which tables? stampctl has no stack, table name or local engine.\n" +
		"On AWS:    --stack NAME (stampctl reads the table names from its outputs), or " + spec.envVar + " (the stack's " + spec.output + " output),\n" +
		"           with your AWS credentials and region (AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; AWS_REGION).\n" +
		"Locally:   the local stack's DynamoDB, as make local prints it:\n" +
		"  export DYNAMODB_ENDPOINT=" + localDynamoDB)
}

// dynamoEndpoint returns DYNAMODB_ENDPOINT, "" when unset.
func (c *cli) dynamoEndpoint() string { return strings.TrimSpace(c.getenv("DYNAMODB_ENDPOINT")) }

// stackName returns the stack named by --stack, else by STAMPDUTY_STACK.
func (c *cli) stackName() string {
	return cmp.Or(strings.TrimSpace(c.stackFlag), strings.TrimSpace(c.getenv("STAMPDUTY_STACK")))
}

// stackInfo is what DescribeStacks says of the named stack.
type stackInfo struct {
	name, region    string
	outputs, params map[string]string
}

// output returns the stack's output key, or an error when it has none (a
// stack deployed from an older template, say).
func (s *stackInfo) output(key string) (string, error) {
	if v := s.outputs[key]; v != "" {
		return v, nil
	}
	return "", fmt.Errorf("stack %s (%s) has no output %s: deploy the current template.yaml, or set the variable stampctl help names for it",
		s.name, s.region, key)
}

// stack returns the stack --stack (or STAMPDUTY_STACK) names, read once
// per run with CloudFormation DescribeStacks; nil when none is named.
func (c *cli) stack() (*stackInfo, error) {
	name := c.stackName()
	if name == "" {
		return nil, nil
	}
	if c.stackRead {
		return c.stackInfo, c.stackErr
	}
	c.stackRead = true
	c.stackInfo, c.stackErr = c.describeStack(name)
	return c.stackInfo, c.stackErr
}

// describeStack reads stack name's outputs and parameters.
func (c *cli) describeStack(name string) (*stackInfo, error) {
	cfg, err := c.loadAWS(false)
	if err != nil {
		return nil, err
	}
	if err := c.checkAWS(cfg, "read stack "+name+"'s outputs (CloudFormation DescribeStacks)"); err != nil {
		return nil, err
	}
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(c.ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	var ae smithy.APIError
	switch {
	case errors.As(err, &ae) && ae.ErrorCode() == "ValidationError" && strings.Contains(ae.ErrorMessage(), "does not exist"):
		return nil, fmt.Errorf("stack %s does not exist in region %s (the region is AWS_REGION's or your profile's): %w", name, cfg.Region, err)
	case err != nil:
		return nil, fmt.Errorf("read stack %s's outputs in region %s (CloudFormation DescribeStacks): %w", name, cfg.Region, err)
	case len(out.Stacks) != 1:
		return nil, fmt.Errorf("read stack %s's outputs in region %s: CloudFormation described %d stacks", name, cfg.Region, len(out.Stacks))
	}
	st := &stackInfo{name: name, region: cfg.Region, outputs: map[string]string{}, params: map[string]string{}}
	for _, o := range out.Stacks[0].Outputs {
		st.outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	for _, p := range out.Stacks[0].Parameters {
		st.params[aws.ToString(p.ParameterKey)] = aws.ToString(p.ParameterValue)
	}
	return st, nil
}

// loadAWS loads the AWS SDK's default chain. For a local target, instance
// credentials are not looked up: off EC2 that costs seconds, and the local
// stack accepts none of them anyway.
func (c *cli) loadAWS(local bool) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if local {
		opts = append(opts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := config.LoadDefaultConfig(c.ctx, opts...)
	if err != nil {
		return cfg, fmt.Errorf("load AWS configuration: %w", err)
	}
	return cfg, nil
}

// checkAWS checks that cfg has a region and credentials for the AWS call
// what, and otherwise says how to give them.
func (c *cli) checkAWS(cfg aws.Config, what string) error {
	const regionHelp = "set AWS_REGION, or use a profile with a region (AWS_PROFILE)"
	noCreds := cfg.Credentials == nil || !retrievable(c.ctx, cfg.Credentials)
	switch {
	case noCreds && cfg.Region == "":
		return fmt.Errorf("no AWS credentials and no region to %s: %s; %s", what, awsCredentialsHelp, regionHelp)
	case noCreds:
		return fmt.Errorf("no AWS credentials to %s: %s", what, awsCredentialsHelp)
	case cfg.Region == "":
		return fmt.Errorf("no AWS region to %s: %s", what, regionHelp)
	}
	return nil
}

// awsCredentialsHelp says where the AWS SDK finds credentials.
const awsCredentialsHelp = "use a profile (AWS_PROFILE, aws configure or aws sso login), " +
	"or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones)"

// dbConfig returns the AWS configuration and endpoint for DynamoDB: the
// engine at DYNAMODB_ENDPOINT, with localdb's region and dummy credentials
// when none are configured (a local engine accepts any), else AWS.
func (c *cli) dbConfig() (aws.Config, string, error) {
	endpoint := c.dynamoEndpoint()
	if endpoint != "" && c.stackName() != "" {
		return aws.Config{}, "", usagef("--stack (or STAMPDUTY_STACK) reads a deployed stack and DYNAMODB_ENDPOINT names a local engine: use one of them")
	}
	cfg, err := c.loadAWS(endpoint != "")
	if err != nil {
		return cfg, "", err
	}
	if endpoint != "" {
		if cfg.Region == "" {
			cfg.Region = localdb.Region
		}
		if cfg.Credentials == nil || !retrievable(c.ctx, cfg.Credentials) {
			cfg.Credentials = credentials.NewStaticCredentialsProvider(localdb.AccessKeyID, localdb.SecretAccessKey, "")
		}
		return cfg, endpoint, nil
	}
	if err := c.checkAWS(cfg, "reach DynamoDB"); err != nil {
		return cfg, "", fmt.Errorf("%w\nAgainst the local stack instead: export DYNAMODB_ENDPOINT=%s (its DynamoDB, as make local prints it)", err, localDynamoDB)
	}
	return cfg, "", nil
}

// apiURL returns the API's base address: --api-url, else STAMPDUTY_API_URL,
// else the stack's ApiUrl output; otherwise it says what to set.
func (c *cli) apiURL() (string, error) {
	raw := cmp.Or(strings.TrimSpace(c.apiURLFlag), strings.TrimSpace(c.getenv("STAMPDUTY_API_URL")))
	if raw == "" {
		st, err := c.stack()
		if err != nil {
			return "", err
		}
		if st == nil {
			return "", errors.New("which API? stampctl has no stack or API address.\n" +
				"On AWS:    --stack NAME (stampctl reads the API's address from its ApiUrl output), or --api-url URL,\n" +
				"           with your AWS credentials and region (AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; AWS_REGION).\n" +
				"Locally:   the local stack's address and operator pair, as make local prints them:\n" + localAPIExport(localAPIURL))
		}
		if raw, err = st.output(apiURLOutput); err != nil {
			return "", err
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", usagef("the API's address %q is not an http(s) URL, e.g. %s or the stack's ApiUrl output", raw, localAPIURL)
	}
	return strings.TrimRight(raw, "/"), nil
}

// apiConfig returns the AWS configuration to sign requests to the API at
// base with: the SDK's default chain, never the local engine's dummy
// credentials; the region is the configured one, else base's execute-api one.
func (c *cli) apiConfig(base string) (aws.Config, error) {
	local := isLoopback(base)
	cfg, err := c.loadAWS(local)
	if err != nil {
		return cfg, err
	}
	if cfg.Region == "" {
		cfg.Region = executeAPIRegion(base)
	}
	if err := c.checkAWS(cfg, "sign requests to "+base+" with"); err != nil {
		hint := localAPIHint(base)
		if !local {
			hint = "On AWS, the identity needs execute-api:Invoke on the API. " + hint
		}
		return cfg, fmt.Errorf("%w\n%s", err, hint)
	}
	return cfg, nil
}

// localAPIHint says how to sign for the local stack at apiURL.
func localAPIHint(apiURL string) string {
	return "Against the local stack (make local), sign with the operator pair it prints:\n" + localAPIExport(apiURL)
}

// localAPIExport is the local stack's operator line, as it prints it, for
// its API at apiURL (the default address when apiURL is not on loopback).
func localAPIExport(apiURL string) string {
	if !isLoopback(apiURL) {
		apiURL = localAPIURL
	}
	return "  " + localdb.OperatorExports(localdb.OperatorKeyID, localdb.OperatorSecret, localdb.Region, apiURL) + "\n" +
		"(or the AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY make local itself ran with, if it had them)"
}

// isLoopback reports whether the address raw is on this machine.
func isLoopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return u.Hostname() == "localhost" || ip != nil && ip.IsLoopback()
}

// executeAPIRegion returns the region of an API Gateway address
// (https://ID.execute-api.REGION.amazonaws.com), "" for any other.
func executeAPIRegion(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		if parts := strings.Split(u.Hostname(), "."); len(parts) >= 4 && parts[1] == "execute-api" {
			return parts[2]
		}
	}
	return ""
}

// storeCall makes the one store call f of a command on spec's table (f
// gets its name); an error of f is reported with storeErr(what, err, t).
func storeCall[R any](c *cli, spec tableSpec, what string, f func(db *store.DB, name string) (R, error)) (R, error) {
	db, ts, err := c.open(spec)
	if err != nil {
		var r R
		return r, err
	}
	r, err := f(db, ts[0].name)
	if err != nil {
		err = storeErr(what, err, ts[0])
	}
	return r, err
}

// open resolves the tables of specs and returns a store over DynamoDB
// (dbConfig), or over the engine at DYNAMODB_ENDPOINT when it is set.
func (c *cli) open(specs ...tableSpec) (*store.DB, []table, error) {
	ts := make([]table, len(specs))
	for i, spec := range specs {
		var err error
		if ts[i], err = c.table(spec); err != nil {
			return nil, nil, err
		}
	}
	db, err := c.openDB()
	return db, ts, err
}

// openDB returns a store over DynamoDB (dbConfig).
func (c *cli) openDB() (*store.DB, error) {
	cfg, endpoint, err := c.dbConfig()
	if err != nil {
		return nil, err
	}
	client := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	return store.New(client), nil
}

// hasher returns the token hasher the functions use. Its key is
// TOKEN_HASH_KEY; against a local engine, the local stacks' key; otherwise
// the SSM parameter hashKeyParameter names, as the stack resolves it for
// the functions at deploy time.
func (c *cli) hasher() (*auth.Hasher, error) {
	key := c.getenv("TOKEN_HASH_KEY")
	if key == "" && c.dynamoEndpoint() != "" {
		key = localdb.TokenHashKey
	}
	if key == "" {
		name, err := c.hashKeyParameter()
		if err != nil {
			return nil, err
		}
		cfg, _, err := c.dbConfig()
		if err != nil {
			return nil, err
		}
		out, err := ssm.NewFromConfig(cfg).GetParameter(c.ctx, &ssm.GetParameterInput{Name: aws.String(name), WithDecryption: aws.Bool(true)})
		if err != nil {
			return nil, fmt.Errorf("read the token hashing key from SSM parameter %s (create it once with: aws ssm put-parameter "+
				"--name %s --type String --value \"$(openssl rand -base64 48)\"): %w", name, name, err)
		}
		key = aws.ToString(out.Parameter.Value)
	}
	h, err := auth.NewHasher(key)
	if err != nil {
		return nil, fmt.Errorf("token hashing key: %w", err)
	}
	return h, nil
}

// hashKeyParameter returns the SSM parameter that holds the token hashing
// key: TOKEN_HASH_KEY_PARAMETER, else the stack's TokenHashKeyParameter
// parameter (with --stack), else auth.DefaultKeyParameter.
func (c *cli) hashKeyParameter() (string, error) {
	if name := strings.TrimSpace(c.getenv("TOKEN_HASH_KEY_PARAMETER")); name != "" {
		return name, nil
	}
	st, err := c.stack()
	if err != nil {
		return "", err
	}
	if st != nil && st.params[hashKeyParam] != "" {
		return st.params[hashKeyParam], nil
	}
	return auth.DefaultKeyParameter, nil
}

// retrievable reports whether creds yield credentials.
func retrievable(ctx context.Context, creds aws.CredentialsProvider) bool {
	_, err := creds.Retrieve(ctx)
	return err == nil
}

// storeErr wraps an error of the store, from the operation what on tables,
// for the operator: a missing table names the tables and where their names
// came from; a DynamoDB failure shows its cause rather than the caller-safe
// text the store gives API clients.
func storeErr(what string, err error, tables ...table) error {
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		names := make([]string, len(tables))
		for i, t := range tables {
			names[i] = t.String()
		}
		return fmt.Errorf("%s: table not found: %s; on AWS use --stack NAME (or the variables from its outputs), "+
			"locally DYNAMODB_ENDPOINT (see stampctl help): %w", what, strings.Join(names, ", "), nf)
	}
	var e *stampduty.Error
	if errors.As(err, &e) && e.Err != nil && (e.Code == stampduty.EINTERNAL || e.Code == stampduty.EUNAVAILABLE) {
		return fmt.Errorf("%s: %w", what, e.Err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
