package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"stampduty/shared/auth"
	"stampduty/shared/rules"
	"stampduty/shared/store"
	"stampduty/shared/store/localdb"
)

// table is one of the service's tables as stampctl finds it: the variable
// that names it and the name it resolved to.
type table struct {
	envVar string
	name   string
}

// String returns "VAR=name", for messages.
func (t table) String() string { return t.envVar + "=" + t.name }

// table returns the table named by the variable envVar, or def (the
// template's logical id, which is the local stack's name for it) when the
// variable is unset.
func (c *cli) table(envVar, def string) table {
	return table{envVar: envVar, name: cmp.Or(strings.TrimSpace(c.getenv(envVar)), def)}
}

// articlesTable returns the articles table.
func (c *cli) articlesTable() table { return c.table("ARTICLES_TABLE", "ArticlesTable") }

// tokensTable returns the tokens table.
func (c *cli) tokensTable() table { return c.table("TOKENS_TABLE", "TokensTable") }

// countersTable returns the counters table.
func (c *cli) countersTable() table { return c.table("COUNTERS_TABLE", "CountersTable") }

// ordersTable returns the orders table.
func (c *cli) ordersTable() table { return c.table("ORDERS_TABLE", "OrdersTable") }

// awsConfig loads the AWS SDK's default chain (profiles, SSO, environment,
// container and instance roles). When DYNAMODB_ENDPOINT is set instance
// credentials are not looked up (off EC2 that lookup costs seconds), and
// when no region or no usable credentials are configured it uses localdb's
// region and dummy credentials, which a local engine accepts.
func (c *cli) awsConfig() (aws.Config, string, error) {
	endpoint := strings.TrimSpace(c.getenv("DYNAMODB_ENDPOINT"))
	var opts []func(*config.LoadOptions) error
	if endpoint != "" {
		opts = append(opts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := config.LoadDefaultConfig(c.ctx, opts...)
	if err != nil {
		return cfg, "", fmt.Errorf("load AWS configuration: %w", err)
	}
	if endpoint != "" {
		if cfg.Region == "" {
			cfg.Region = localdb.Region
		}
		if cfg.Credentials == nil || !retrievable(c.ctx, cfg.Credentials) {
			cfg.Credentials = credentials.NewStaticCredentialsProvider(localdb.AccessKeyID, localdb.SecretAccessKey, "")
		}
	} else if cfg.Region == "" {
		return cfg, "", errors.New("no AWS region configured: set AWS_REGION, or a profile with a region (AWS_PROFILE), " +
			"or DYNAMODB_ENDPOINT for a local engine")
	}
	return cfg, endpoint, nil
}

// storeCall opens the store (openDB) and makes the one store call of a
// command, f, on table t (f gets the table's name); an error of f is
// reported with storeErr(what, err, t).
func storeCall[R any](c *cli, t table, what string, f func(db *store.DB, name string) (R, error)) (R, error) {
	var r R
	db, err := c.openDB()
	if err != nil {
		return r, err
	}
	if r, err = f(db, t.name); err != nil {
		return r, storeErr(what, err, t)
	}
	return r, nil
}

// openDB returns a store over DynamoDB (see awsConfig), or over the engine
// at DYNAMODB_ENDPOINT when it is set.
func (c *cli) openDB() (*store.DB, error) {
	cfg, endpoint, err := c.awsConfig()
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
// TOKEN_HASH_KEY when set; against a local engine (DYNAMODB_ENDPOINT) the
// local stacks' key; otherwise the SSM parameter TOKEN_HASH_KEY_PARAMETER
// (default auth.DefaultKeyParameter), which the stack resolves for the
// functions at deploy time.
func (c *cli) hasher() (*auth.Hasher, error) {
	key := c.getenv("TOKEN_HASH_KEY")
	if key == "" && strings.TrimSpace(c.getenv("DYNAMODB_ENDPOINT")) != "" {
		key = localdb.TokenHashKey
	}
	if key == "" {
		name := cmp.Or(strings.TrimSpace(c.getenv("TOKEN_HASH_KEY_PARAMETER")), auth.DefaultKeyParameter)
		cfg, _, err := c.awsConfig()
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

// retrievable reports whether creds yield credentials.
func retrievable(ctx context.Context, creds aws.CredentialsProvider) bool {
	_, err := creds.Retrieve(ctx)
	return err == nil
}

// storeErr wraps an error of the store, from the operation what on tables,
// for the operator. A missing table names the variables that chose the
// tables; a DynamoDB failure shows its cause rather than the caller-safe
// text ("Internal Server Error") the store gives API clients.
func storeErr(what string, err error, tables ...table) error {
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		names := make([]string, len(tables))
		for i, t := range tables {
			names[i] = t.String()
		}
		return fmt.Errorf("%s: table not found (%s; on AWS set the variables from the stack outputs, see stampctl help): %w",
			what, strings.Join(names, ", "), nf)
	}
	var e *rules.Error
	if errors.As(err, &e) && e.Err != nil && (e.Code == rules.EINTERNAL || e.Code == rules.EUNAVAILABLE) {
		return fmt.Errorf("%s: %w", what, e.Err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
