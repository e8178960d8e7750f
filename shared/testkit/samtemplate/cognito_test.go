package samtemplate

import (
	"fmt"
	"slices"
	"testing"
)

// TestStaffPool checks the staff's sign-in as console.md decides it, read
// the way the local stack reads it: a pool signed in by email, created by
// admins only, with a password policy and TOTP required by default (off
// with ConsoleMfa=OFF), a secretless client whose flows cognito-local
// serves, the groups admin and operator, and a JWT authorizer whose
// audience is that client and whose issuer is that pool.
func TestStaffPool(t *testing.T) {
	data := templateText(t)
	tmpl, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(tmpl.UserPools), 1; got != want {
		t.Fatalf("%d user pools, want %d", got, want)
	}
	pool := tmpl.UserPools[0]
	t.Run("sign-in by email, admins create accounts", func(t *testing.T) {
		if !slices.Equal(pool.UsernameAttributes, []string{"email"}) || !pool.AdminCreateUserConfig.AllowAdminCreateUserOnly {
			t.Errorf("UsernameAttributes %v, AllowAdminCreateUserOnly %v; want [email], true", pool.UsernameAttributes, pool.AdminCreateUserConfig.AllowAdminCreateUserOnly)
		}
		p := pool.Policies.PasswordPolicy
		if p.MinimumLength < 12 || !p.RequireLowercase || !p.RequireUppercase || !p.RequireNumbers || !p.RequireSymbols {
			t.Errorf("password policy %+v: want 12 characters or more of all four kinds", p)
		}
	})
	t.Run("TOTP required by default", func(t *testing.T) {
		if pool.MfaConfiguration != "ON" || !slices.Equal(pool.EnabledMfas, []string{"SOFTWARE_TOKEN_MFA"}) {
			t.Errorf("MfaConfiguration %q, EnabledMfas %v; want ON, [SOFTWARE_TOKEN_MFA]", pool.MfaConfiguration, pool.EnabledMfas)
		}
		off, err := ParseWith(data, map[string]string{"ConsoleMfa": "OFF"})
		if err != nil {
			t.Fatal(err)
		}
		if p := off.UserPools[0]; p.MfaConfiguration != "OFF" || p.EnabledMfas != nil {
			t.Errorf("with ConsoleMfa=OFF: MfaConfiguration %q, EnabledMfas %v; want OFF and none", p.MfaConfiguration, p.EnabledMfas)
		}
	})
	t.Run("a browser client with the flows cognito-local serves", func(t *testing.T) {
		if got, want := len(tmpl.UserPoolClients), 1; got != want {
			t.Fatalf("%d clients, want %d", got, want)
		}
		c := tmpl.UserPoolClients[0]
		if c.UserPool != pool.LogicalID || c.GenerateSecret {
			t.Errorf("client of %s with a secret %v; want of %s, no secret", c.UserPool, c.GenerateSecret, pool.LogicalID)
		}
		if want := []string{"ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"}; !slices.Equal(c.ExplicitAuthFlows, want) {
			t.Errorf("ExplicitAuthFlows %v, want %v", c.ExplicitAuthFlows, want)
		}
		if c.IdTokenValidity > 60 || c.AccessTokenValidity > 60 || c.TokenValidityUnits.IdToken != "minutes" || c.TokenValidityUnits.AccessToken != "minutes" {
			t.Errorf("tokens valid %d %s (id), %d %s (access): want an hour at most", c.IdTokenValidity, c.TokenValidityUnits.IdToken, c.AccessTokenValidity, c.TokenValidityUnits.AccessToken)
		}
	})
	t.Run("groups admin and operator", func(t *testing.T) {
		var names []string
		for _, g := range tmpl.UserPoolGroups {
			if g.UserPool != pool.LogicalID {
				t.Errorf("group %s of %s, want of %s", g.GroupName, g.UserPool, pool.LogicalID)
			}
			names = append(names, g.GroupName)
		}
		slices.Sort(names)
		if want := []string{"admin", "operator"}; !slices.Equal(names, want) {
			t.Errorf("groups %v, want %v", names, want)
		}
	})
	t.Run("the JWT authorizer trusts that pool and client", func(t *testing.T) {
		a, ok := tmpl.Authorizers["ConsoleAuthorizer"]
		if !ok {
			t.Fatalf("no ConsoleAuthorizer in %v", tmpl.Authorizers)
		}
		if want := "https://cognito-idp.${AWS::Region}.amazonaws.com/${" + pool.LogicalID + "}"; a.Issuer.Sub != want {
			t.Errorf("issuer %s, want !Sub %s", a.Issuer, want)
		}
		if len(a.Audience) != 1 || a.Audience[0].Ref != tmpl.UserPoolClients[0].LogicalID {
			t.Errorf("audience %v, want [!Ref %s]", a.Audience, tmpl.UserPoolClients[0].LogicalID)
		}
		if got, want := a.IdentitySource, "$request.header.Authorization"; got != want {
			t.Errorf("identity source %q, want %q", got, want)
		}
	})
}

// TestRouteAuthorizer checks that a route naming a JWT authorizer says
// which, and that one naming an authorizer the HttpApi lacks is refused.
func TestRouteAuthorizer(t *testing.T) {
	const doc = `
Resources:
  Api:
    Type: AWS::Serverless::HttpApi
    Properties:
      Auth:
        Authorizers:
          Staff:
            IdentitySource: $request.header.Authorization
            JwtConfiguration: {issuer: https://example.test/pool, audience: [client]}
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Me:
          Type: HttpApi
          Properties: {Method: GET, Path: /me, Auth: {Authorizer: %s}}
        Open:
          Type: HttpApi
          Properties: {Method: GET, Path: /open}
`
	tmpl, err := Parse([]byte(fmt.Sprintf(doc, "Staff")))
	if err != nil {
		t.Fatal(err)
	}
	routes := tmpl.Functions[0].Routes
	if got, want := routes[0].Authorizer, "Staff"; got != want {
		t.Errorf("route %s: authorizer %q, want %q", routes[0].Key(), got, want)
	}
	if got := routes[1].Authorizer; got != "" {
		t.Errorf("route %s: authorizer %q, want none", routes[1].Key(), got)
	}
	if _, err := Parse([]byte(fmt.Sprintf(doc, "Other"))); err == nil {
		t.Error("a route naming an undeclared authorizer parsed")
	}
}
