package localcognito

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"

	"stampduty/shared/testkit/samtemplate"
)

// Account is a staff account of the local stack.
type Account struct {
	Email, Password, Group string
}

// Staff are the accounts the local stack creates in the staff pool: one
// admin and one operator. Their passwords are fixed, like the dev token,
// so that a developer signs in with the same ones after every restart;
// they exist only in a cognito-local on this machine, and
// CheckPassword holds them to the template's password policy.
var Staff = []Account{
	{Email: "admin@console.local", Password: "Local-admin-password-1", Group: "admin"},
	{Email: "operator@console.local", Password: "Local-operator-password-1", Group: "operator"},
}

// CheckPassword returns why password breaks policy, nil when it does not.
// Cognito's symbols are the ASCII punctuation and the space.
func CheckPassword(policy samtemplate.PasswordPolicy, password string) error {
	var errs []error
	if n := len([]rune(password)); n < policy.MinimumLength {
		errs = append(errs, fmt.Errorf("%d characters, fewer than %d", n, policy.MinimumLength))
	}
	for _, c := range []struct {
		required bool
		what     string
		is       func(rune) bool
	}{
		{policy.RequireLowercase, "a lower-case letter", unicode.IsLower},
		{policy.RequireUppercase, "an upper-case letter", unicode.IsUpper},
		{policy.RequireNumbers, "a number", unicode.IsDigit},
		{policy.RequireSymbols, "a symbol", func(r rune) bool { return r == ' ' || r < 128 && unicode.IsPunct(r) || r < 128 && unicode.IsSymbol(r) }},
	} {
		if c.required && !strings.ContainsFunc(password, c.is) {
			errs = append(errs, fmt.Errorf("no %s", c.what))
		}
	}
	return errors.Join(errs...)
}

// CreateStaff creates the Staff accounts in the template's staff pool
// (its one user pool), each in its group, after checking their passwords
// against the pool's policy.
func CreateStaff(ctx context.Context, client *cip.Client, tmpl *samtemplate.Template, pools Pools) error {
	if len(tmpl.UserPools) != 1 {
		return fmt.Errorf("the template has %d user pools: the staff's must be the only one", len(tmpl.UserPools))
	}
	pool := tmpl.UserPools[0]
	groups := slices.Collect(maps.Values(pools.Groups))
	for _, a := range Staff {
		if err := CheckPassword(pool.Policies.PasswordPolicy, a.Password); err != nil {
			return fmt.Errorf("the local password of %s breaks %s's password policy: %w", a.Email, pool.LogicalID, err)
		}
		if !slices.Contains(groups, a.Group) {
			return fmt.Errorf("%s's group %s is not a group of %s (%v)", a.Email, a.Group, pool.LogicalID, groups)
		}
		if err := CreateUser(ctx, client, pools.Names[pool.LogicalID], a.Email, a.Password, a.Group); err != nil {
			return err
		}
	}
	return nil
}

// Authorizer is a JWT authorizer of the template as it runs locally: the
// header its identity source names, the issuer of the local pool's tokens
// (Issuer), the local client ids of its audience, and where the local
// pool's keys are.
type Authorizer struct {
	IdentitySource, Issuer string
	Audience               []string
	JWKS                   string
}

// Authorizers resolves the template's JWT authorizers against the pools
// created locally at endpoint: the issuer's !Sub with the local pool's
// id, mapped to the local server's issuer, and the audience's !Ref to
// the local client ids.
func Authorizers(tmpl *samtemplate.Template, pools Pools, endpoint string) (map[string]Authorizer, error) {
	out := map[string]Authorizer{}
	params := map[string]string{"AWS::Region": Region}
	for name, a := range tmpl.Authorizers {
		awsIssuer, err := tmpl.Resolve(a.Issuer, params, pools.Names)
		if err != nil {
			return nil, fmt.Errorf("authorizer %s: issuer: %w", name, err)
		}
		issuer, err := Issuer(awsIssuer, endpoint)
		if err != nil {
			return nil, fmt.Errorf("authorizer %s: %w", name, err)
		}
		local := Authorizer{IdentitySource: a.IdentitySource, Issuer: issuer, JWKS: JWKS(issuer)}
		for _, v := range a.Audience {
			aud, err := tmpl.Resolve(v, params, pools.Names)
			if err != nil {
				return nil, fmt.Errorf("authorizer %s: audience: %w", name, err)
			}
			local.Audience = append(local.Audience, aud)
		}
		out[name] = local
	}
	return out, nil
}
