package main

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"
	"github.com/pquerna/otp/totp"

	"stampduty/shared/testkit/browser"
	"stampduty/shared/testkit/localcognito"
)

// checkFirstSignIn: a person an admin invited signs in for the first time
// with the temporary password and is asked for a password of their own
// (Cognito's NEW_PASSWORD_REQUIRED); once it is set they are signed in,
// and the next sign-in takes the new password.
func checkFirstSignIn(t *testing.T, s *stack, b *browser.Browser) {
	ctx := context.Background()
	client := localcognito.Client(s.Cognito.Endpoint)
	const email, temporary, chosen = "invited@console.local", "Temporary-password-1", "Chosen-password-of-mine-1"
	if _, err := client.AdminCreateUser(ctx, &cip.AdminCreateUserInput{UserPoolId: aws.String(s.Cognito.PoolID), Username: aws.String(email),
		TemporaryPassword: aws.String(temporary), MessageAction: types.MessageActionTypeSuppress,
		UserAttributes: []types.AttributeType{{Name: aws.String("email"), Value: aws.String(email)}, {Name: aws.String("email_verified"), Value: aws.String("true")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AdminAddUserToGroup(ctx, &cip.AdminAddUserToGroupInput{UserPoolId: aws.String(s.Cognito.PoolID), Username: aws.String(email), GroupName: aws.String("operator")}); err != nil {
		t.Fatal(err)
	}
	p := b.NewPage(t, browser.Phone)
	signIn(p, s.URL, email, temporary)
	p.Find(browser.TextBox("New password"))
	p.Check("new-password")
	p.Fill(browser.TextBox("New password"), chosen)
	p.Press(browser.Button("Set password"))
	p.Find(browser.Heading("Queue"))
	p.Press(browser.Button("Sign out"))
	p.Find(browser.Heading("Sign in"))
	signIn(p, s.URL, email, chosen)
	p.Find(browser.Heading("Queue"))
}

// checkAuthenticatorCode: a person who enrolled an authenticator app
// (TOTP) is asked for its code after their password (Cognito's
// SOFTWARE_TOKEN_MFA); a wrong code is said beside the field, the right
// one signs them in. The local pool runs with MFA off (the ConsoleMfa
// parameter) and cognito-local cannot enrol at sign-in (MFA_SETUP), so
// the test turns the pool's MFA to optional and enrols the person with
// their access token, as the AWS console's "add MFA" does; on AWS the
// pool requires it, and the first sign-in enrols (MFA_SETUP, untested).
func checkAuthenticatorCode(t *testing.T, s *stack, b *browser.Browser) {
	ctx := context.Background()
	client := localcognito.Client(s.Cognito.Endpoint)
	pool := aws.String(s.Cognito.PoolID)
	if _, err := client.SetUserPoolMfaConfig(ctx, &cip.SetUserPoolMfaConfigInput{UserPoolId: pool, MfaConfiguration: types.UserPoolMfaTypeOptional,
		SoftwareTokenMfaConfiguration: &types.SoftwareTokenMfaConfigType{Enabled: true}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := client.SetUserPoolMfaConfig(ctx, &cip.SetUserPoolMfaConfigInput{UserPoolId: pool, MfaConfiguration: types.UserPoolMfaTypeOff}); err != nil {
			t.Error(err)
		}
	})
	const email, password = "totp@console.local", "Local-totp-password-1"
	if err := localcognito.CreateUser(ctx, client, s.Cognito.PoolID, email, password, "operator"); err != nil {
		t.Fatal(err)
	}
	tokens, err := localcognito.SignIn(ctx, client, s.Cognito.ClientID, email, password)
	if err != nil {
		t.Fatal(err)
	}
	assoc, err := client.AssociateSoftwareToken(ctx, &cip.AssociateSoftwareTokenInput{AccessToken: aws.String(tokens.Access)})
	if err != nil {
		t.Fatal(err)
	}
	secret := aws.ToString(assoc.SecretCode)
	code := func() string {
		t.Helper()
		c, err := totp.GenerateCode(secret, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if _, err := client.VerifySoftwareToken(ctx, &cip.VerifySoftwareTokenInput{AccessToken: aws.String(tokens.Access), UserCode: aws.String(code())}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.SetUserMFAPreference(ctx, &cip.SetUserMFAPreferenceInput{AccessToken: aws.String(tokens.Access),
		SoftwareTokenMfaSettings: &types.SoftwareTokenMfaSettingsType{Enabled: true, PreferredMfa: true}}); err != nil {
		t.Fatal(err)
	}

	p := b.NewPage(t, browser.Desktop)
	signIn(p, s.URL, email, password)
	p.Find(browser.TextBox("Authenticator code"))
	p.Check("authenticator-code")
	wrong := "000000"
	if code() == wrong {
		wrong = "000001"
	}
	p.Fill(browser.TextBox("Authenticator code"), wrong)
	p.Press(browser.Button("Verify code"))
	p.Find(browser.Role("alert", ""))
	if got := p.Text(browser.Role("alert", "")); got == "" {
		t.Errorf("a wrong code is said beside the field: the alert is empty")
	}
	checkRefused(t, p, "authenticator-code-wrong", "400 (Bad Request) ("+s.Cognito.Endpoint)
	p.Fill(browser.TextBox("Authenticator code"), code())
	p.Press(browser.Button("Verify code"))
	p.Find(browser.Heading("Queue"))
}
