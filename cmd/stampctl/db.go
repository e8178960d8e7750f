package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
	"stampduty/shared/store"
	"stampduty/shared/testkit/localdb"
)

// storeCall resolves the table of spec, opens the store (openDB) and makes
// the one store call of a command, f, on that table (f gets the table's
// name); an error of f is reported with storeErr(what, err, t).
func storeCall[R any](c *cli, spec tableSpec, what string, f func(db *store.DB, name string) (R, error)) (R, error) {
	var r R
	t, err := c.table(spec)
	if err != nil {
		return r, err
	}
	db, err := c.openDB()
	if err != nil {
		return r, err
	}
	if r, err = f(db, t.name); err != nil {
		return r, storeErr(what, err, t)
	}
	return r, nil
}

// openDB returns a store over DynamoDB (see dbConfig), or over the engine
// at DYNAMODB_ENDPOINT when it is set.
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
// TOKEN_HASH_KEY when set; against a local engine (DYNAMODB_ENDPOINT) the
// local stacks' key; otherwise the SSM parameter TOKEN_HASH_KEY_PARAMETER,
// else the stack's TokenHashKeyParameter parameter (with --stack), else
// auth.DefaultKeyParameter: the parameter the stack resolves for the
// functions at deploy time.
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
// for the operator. A missing table names the tables and where their names
// came from; a DynamoDB failure shows its cause rather than the
// caller-safe text ("Internal Server Error") the store gives API clients.
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
