package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/localcognito"
)

// checkStaffSignIn: the stack prints each local staff account's email
// and password, and each signs in with them to the local Cognito's
// console client, getting tokens of the pool the local JWT authorizer
// trusts, in the account's group.
func checkStaffSignIn(t *testing.T, s *stack, out *functest.SyncBuffer) {
	banner := out.String()
	if len(s.Cognito.Staff) != 2 {
		t.Fatalf("%d staff accounts, want an admin and an operator", len(s.Cognito.Staff))
	}
	client := localcognito.Client(s.Cognito.Endpoint)
	for _, a := range s.Cognito.Staff {
		t.Run(a.Group, func(t *testing.T) {
			if !strings.Contains(banner, a.Email+"  password "+a.Password) {
				t.Errorf("the output does not show %s's email and password", a.Group)
			}
			tok, err := localcognito.SignIn(context.Background(), client, s.Cognito.ClientID, a.Email, a.Password)
			if err != nil {
				t.Fatal(err)
			}
			_, payload, _ := strings.Cut(tok.ID, ".")
			payload, _, _ = strings.Cut(payload, ".")
			b, err := base64.RawURLEncoding.DecodeString(payload)
			var claims struct {
				Iss    string   `json:"iss"`
				Email  string   `json:"email"`
				Groups []string `json:"cognito:groups"`
			}
			if err == nil {
				err = json.Unmarshal(b, &claims)
			}
			if err != nil {
				t.Fatal(err)
			}
			if claims.Iss != s.Cognito.Issuer || claims.Email != a.Email || len(claims.Groups) != 1 || claims.Groups[0] != a.Group {
				t.Errorf("id token of %s: iss %s, email %s, groups %v; want %s, %s, [%s]", a.Email, claims.Iss, claims.Email, claims.Groups, s.Cognito.Issuer, a.Email, a.Group)
			}
		})
	}
}
