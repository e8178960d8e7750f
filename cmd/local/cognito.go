package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"stampduty/cmd/internal/apigw"
	"stampduty/shared/testkit/localcognito"
	"stampduty/shared/testkit/localserver"
)

// Cognito is the staff's sign-in as the local stack runs it.
type Cognito struct {
	// Endpoint is the local Cognito's address: the AWS SDK's and the
	// console's Cognito endpoint locally.
	Endpoint string
	// PoolID and ClientID are the staff pool's and the console client's
	// ids there.
	PoolID, ClientID string
	// Issuer is the issuer of the pool's tokens, which the local JWT
	// authorizer trusts (on AWS https://cognito-idp.REGION.amazonaws.com/POOL).
	Issuer string
	Staff  []localcognito.Account
}

// startCognito starts cognito-local, creates the template's user pools,
// app clients and groups and the staff accounts in it, and the local JWT
// authorizers that trust them.
func (s *stack) startCognito(ctx context.Context) error {
	fmt.Fprintf(s.out, "local: starting Cognito (cognito-local) on %s…\n", s.cognitoAddr)
	srv, err := localcognito.Start(ctx, s.root, s.cognitoAddr, nil)
	if errors.Is(err, localserver.ErrAddrInUse) {
		return s.inUse(s.cognitoBusy())
	} else if err != nil {
		return err
	}
	s.cognito = srv
	fmt.Fprintf(s.out, "local: creating the staff's user pool, its client and groups, and %d staff accounts…\n", len(localcognito.Staff))
	client := localcognito.Client(srv.Endpoint)
	pools, err := localcognito.CreatePools(ctx, client, s.tmpl)
	if err != nil {
		return fmt.Errorf("the local Cognito: %w", err)
	}
	if err := localcognito.CreateStaff(ctx, client, s.tmpl, pools); err != nil {
		return fmt.Errorf("the local Cognito: %w", err)
	}
	auths, err := localcognito.Authorizers(s.tmpl, pools, srv.Endpoint)
	if err != nil {
		return err
	}
	jwtCtx, stop := context.WithCancel(context.Background())
	s.stopJWTs, s.jwts = stop, map[string]*apigw.JWT{}
	for _, name := range slices.Sorted(maps.Keys(auths)) {
		a := auths[name]
		if s.jwts[name], err = apigw.NewJWT(jwtCtx, a.IdentitySource, a.Issuer, a.Audience, a.JWKS); err != nil {
			return fmt.Errorf("JWT authorizer %s: %w", name, err)
		}
		s.Cognito.Issuer = a.Issuer
	}
	s.Cognito.Endpoint, s.Cognito.Staff, s.cognitoNames = srv.Endpoint, localcognito.Staff, pools.Names
	if len(s.tmpl.UserPools) > 0 {
		s.Cognito.PoolID = pools.Names[s.tmpl.UserPools[0].LogicalID]
	}
	if len(s.tmpl.UserPoolClients) > 0 {
		s.Cognito.ClientID = pools.Names[s.tmpl.UserPoolClients[0].LogicalID]
	}
	return nil
}

// banner prints the staff's sign-in: where, and the accounts.
func (c Cognito) banner(w io.Writer) {
	if c.Endpoint == "" {
		return
	}
	fmt.Fprintf(w, "Staff sign-in (local Cognito): %s — user pool %s, console client %s, no MFA locally\n", c.Endpoint, c.PoolID, c.ClientID)
	for _, a := range c.Staff {
		fmt.Fprintf(w, "  %-8s %s  password %s\n", a.Group, a.Email, a.Password)
	}
	fmt.Fprintf(w, "  the console examples of shared/apidoc/api.md read: export COGNITO=%s CONSOLE_CLIENT=%s\n", c.Endpoint, c.ClientID)
}
