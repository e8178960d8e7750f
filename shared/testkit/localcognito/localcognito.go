// Package localcognito runs the local Amazon Cognito user pool server
// (cognito-local, installed by `make cognito`), creates in it the user
// pools, app clients and groups template.yaml defines, and creates and
// signs in users, with the AWS SDK's own Cognito client pointed at it.
//
// cognito-local serves the admin API the local stack needs (CreateUserPool,
// CreateUserPoolClient, CreateGroup, AdminCreateUser, AdminSetUserPassword,
// AdminAddUserToGroup) and the staff workflows' (ListUsers,
// ListUsersInGroup, AdminGetUser, AdminListGroupsForUser,
// AdminRemoveUserFromGroup, AdminDisableUser, AdminEnableUser; not
// AdminUserGlobalSignOut, and a disabled user still signs in: shared/staff's
// TestLocalCognitoGaps), InitiateAuth with USER_PASSWORD_AUTH and
// REFRESH_TOKEN_AUTH (not USER_SRP_AUTH, nor MFA_SETUP at sign-in), and
// each pool's keys at /<pool id>/.well-known/jwks.json. It signs RS256
// tokens with one key of its own, the same for every pool, and names as
// their issuer http://HOST:PORT/<pool id>, HOST:PORT being the address of
// the front the clients talk to (front.go; Start writes it into
// cognito-local's config): the local counterpart of AWS's
// https://cognito-idp.<region>.amazonaws.com/<pool id> (Issuer). The
// front refuses a SignUp the pool's AdminCreateUserConfig does not
// allow, as Cognito does and cognito-local does not. Id tokens
// carry aud (the client id), access tokens client_id; both carry
// cognito:groups when the user is in a group, and token_use.
package localcognito

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"

	"stampduty/shared/testkit/localserver"
	"stampduty/shared/testkit/samtemplate"
)

// StartPath is where `make cognito` installs cognito-local's entry point,
// relative to the module root.
const StartPath = "cmd/local/cognito/node_modules/cognito-local/lib/bin/start.js"

// The region and credentials of local clients: cognito-local checks
// neither.
const (
	Region          = "us-east-1"
	AccessKeyID     = "local"
	SecretAccessKey = "local"
)

// Installed returns cognito-local's entry point under the module root, or a
// *localserver.NotInstalledError when `make cognito` has not run.
func Installed(root string) (string, error) {
	return localserver.Find(root, StartPath, "cognito-local", "cognito")
}

// Server is a running cognito-local behind its front (front.go): the
// front serves at Endpoint, the address every client uses, and makes
// the server refuse what Cognito refuses and cognito-local does not.
// Its working folder (.cognito/ holds its config and data) goes when it
// stops.
type Server struct {
	// Endpoint is the front's address (http://127.0.0.1:PORT), which
	// the tokens name as their issuer's.
	Endpoint string
	// Engine is cognito-local's own address, behind the front: only a
	// test of what cognito-local does by itself has a use for it.
	Engine string
	engine *localserver.Server
	front  *http.Server
}

// Start starts cognito-local, and its front on addr (a free loopback
// port when "" or port 0), keeping its pools and users in a new
// temporary folder that Stop removes; cognito-local's output goes to
// log. When addr is in use the error wraps localserver.ErrAddrInUse;
// without cognito-local, it is a *localserver.NotInstalledError.
func Start(ctx context.Context, root, addr string, log io.Writer) (*Server, error) {
	start, err := Installed(root)
	if err != nil {
		return nil, err
	}
	// The front listens first: cognito-local names its tokens' issuer
	// from its config, which must name the front's address.
	ln, err := net.Listen("tcp", cmp.Or(addr, "127.0.0.1:0"))
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("start cognito: %s: %w", addr, localserver.ErrAddrInUse)
	} else if err != nil {
		return nil, fmt.Errorf("start cognito: %w", err)
	}
	endpoint := "http://" + ln.Addr().String()
	dir, err := os.MkdirTemp("", "stampduty-cognito-")
	if err == nil {
		err = writeConfig(dir, endpoint)
	}
	if err != nil {
		ln.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start cognito: %w", err)
	}
	engine, err := localserver.Start(ctx, "", localserver.Spec{
		Name: "cognito",
		Command: func(host, port string) *exec.Cmd {
			cmd := exec.Command("node", start)
			// It reads where to listen from HOST and PORT; it keeps its
			// config and data in .cognito/ of its working folder.
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HOST="+host, "PORT="+port,
				"AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE=1")
			return cmd
		},
		// Its line "[<time>] INFO: NONE NONE Cognito Local running on http://HOST:PORT".
		Listening:         "Cognito Local running on http",
		ListeningAnywhere: true,
		Probe: func(ctx context.Context, endpoint string) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/health", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("GET /health: %s", resp.Status)
			}
			return nil
		},
		Log: log,
		Dir: dir,
	})
	if err != nil {
		ln.Close()
		return nil, err
	}
	f, err := newFront(engine.Endpoint)
	if err != nil {
		ln.Close()
		engine.Stop()
		return nil, err
	}
	s := &Server{Endpoint: endpoint, Engine: engine.Endpoint, engine: engine,
		front: &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.front.Serve(ln) }()
	return s, nil
}

// writeConfig writes cognito-local's config into dir/.cognito: the
// issuer its tokens name is the front's endpoint, <endpoint>/<pool id>.
func writeConfig(dir, endpoint string) error {
	b, err := json.Marshal(map[string]any{"TokenConfig": map[string]string{"IssuerDomain": endpoint}})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, ".cognito"), 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ".cognito", "config.json"), b, 0o600)
}

// Stop stops the front and cognito-local, and removes its folder.
func (s *Server) Stop() {
	_ = s.front.Close()
	s.engine.Stop()
}

// Pid returns cognito-local's process id.
func (s *Server) Pid() int { return s.engine.Pid() }

// Client returns a Cognito client for the local server at endpoint.
func Client(endpoint string) *cip.Client {
	return cip.New(cip.Options{
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKeyID, SecretAccessKey, ""),
		BaseEndpoint: aws.String(endpoint),
	})
}

// awsIssuerPrefix is how a Cognito user pool's issuer starts on AWS,
// before the region: https://cognito-idp.<region>.amazonaws.com/<pool id>.
const awsIssuerPrefix = "https://cognito-idp."

// Issuer maps a pool's issuer on AWS
// (https://cognito-idp.<region>.amazonaws.com/<pool id>) to the one the
// local server at endpoint puts in the pool's tokens
// (<endpoint>/<pool id>); any other issuer is an error.
func Issuer(awsIssuer, endpoint string) (string, error) {
	rest, ok := strings.CutPrefix(awsIssuer, awsIssuerPrefix)
	_, pool, found := strings.Cut(rest, ".amazonaws.com/")
	if !ok || !found || pool == "" || strings.Contains(pool, "/") {
		return "", fmt.Errorf("issuer %q is not a Cognito user pool's (%s<region>.amazonaws.com/<pool id>)", awsIssuer, awsIssuerPrefix)
	}
	return strings.TrimSuffix(endpoint, "/") + "/" + pool, nil
}

// JWKS returns the address of the keys of the pool whose issuer is
// issuer, as Cognito serves them on AWS and locally: <issuer>/.well-known/jwks.json.
func JWKS(issuer string) string { return issuer + "/.well-known/jwks.json" }

// Pools are the template's user pools, app clients and groups as created
// locally: the ids the local server gave them, by logical id. Names maps
// every logical id to its id, as CloudFormation resolves a !Ref to them.
type Pools struct {
	Names map[string]string
	// Groups maps each group's logical id to its name.
	Groups map[string]string
}

// CreatePools creates in the server at client's endpoint every user pool
// of tmpl, with its app clients and groups, as the template defines them
// (its parameters' values resolved: MfaConfiguration, EnabledMfas).
func CreatePools(ctx context.Context, client *cip.Client, tmpl *samtemplate.Template) (Pools, error) {
	p := Pools{Names: map[string]string{}, Groups: map[string]string{}}
	for _, pool := range tmpl.UserPools {
		pp := pool.Policies.PasswordPolicy
		in := &cip.CreateUserPoolInput{
			PoolName:               aws.String(pool.LogicalID),
			UsernameAttributes:     usernameAttributes(pool.UsernameAttributes),
			AutoVerifiedAttributes: verifiedAttributes(pool.AutoVerifiedAttributes),
			AdminCreateUserConfig: &types.AdminCreateUserConfigType{
				AllowAdminCreateUserOnly: pool.AdminCreateUserConfig.AllowAdminCreateUserOnly},
			Policies: &types.UserPoolPolicyType{PasswordPolicy: &types.PasswordPolicyType{
				MinimumLength:                 aws.Int32(int32(pp.MinimumLength)),
				RequireLowercase:              pp.RequireLowercase,
				RequireUppercase:              pp.RequireUppercase,
				RequireNumbers:                pp.RequireNumbers,
				RequireSymbols:                pp.RequireSymbols,
				TemporaryPasswordValidityDays: int32(pp.TemporaryPasswordValidityDays),
			}},
			MfaConfiguration: types.UserPoolMfaType(pool.MfaConfiguration),
		}
		if cs := pool.UsernameConfiguration.CaseSensitive; cs != nil {
			in.UsernameConfiguration = &types.UsernameConfigurationType{CaseSensitive: cs}
		}
		out, err := client.CreateUserPool(ctx, in)
		if err != nil {
			return p, fmt.Errorf("create user pool %s: %w", pool.LogicalID, err)
		}
		id := aws.ToString(out.UserPool.Id)
		p.Names[pool.LogicalID] = id
		if len(pool.EnabledMfas) > 0 {
			mfa := &cip.SetUserPoolMfaConfigInput{UserPoolId: aws.String(id), MfaConfiguration: types.UserPoolMfaType(pool.MfaConfiguration)}
			for _, m := range pool.EnabledMfas {
				if m != "SOFTWARE_TOKEN_MFA" {
					return p, fmt.Errorf("user pool %s: EnabledMfas %s is not created locally (only SOFTWARE_TOKEN_MFA)", pool.LogicalID, m)
				}
				mfa.SoftwareTokenMfaConfiguration = &types.SoftwareTokenMfaConfigType{Enabled: true}
			}
			if _, err := client.SetUserPoolMfaConfig(ctx, mfa); err != nil {
				return p, fmt.Errorf("user pool %s: MFA: %w", pool.LogicalID, err)
			}
		}
	}
	for _, c := range tmpl.UserPoolClients {
		pool, ok := p.Names[c.UserPool]
		if !ok {
			return p, fmt.Errorf("app client %s: no user pool %s in the template", c.LogicalID, c.UserPool)
		}
		in := &cip.CreateUserPoolClientInput{
			UserPoolId:                 aws.String(pool),
			ClientName:                 aws.String(c.ClientName),
			GenerateSecret:             c.GenerateSecret,
			PreventUserExistenceErrors: types.PreventUserExistenceErrorTypes(c.PreventUserExistenceErrors),
			EnableTokenRevocation:      aws.Bool(c.EnableTokenRevocation),
			TokenValidityUnits: &types.TokenValidityUnitsType{
				AccessToken:  types.TimeUnitsType(c.TokenValidityUnits.AccessToken),
				IdToken:      types.TimeUnitsType(c.TokenValidityUnits.IdToken),
				RefreshToken: types.TimeUnitsType(c.TokenValidityUnits.RefreshToken),
			},
		}
		for _, f := range c.ExplicitAuthFlows {
			in.ExplicitAuthFlows = append(in.ExplicitAuthFlows, types.ExplicitAuthFlowsType(f))
		}
		if c.AuthSessionValidity > 0 {
			in.AuthSessionValidity = aws.Int32(int32(c.AuthSessionValidity))
		}
		if c.AccessTokenValidity > 0 {
			in.AccessTokenValidity = aws.Int32(int32(c.AccessTokenValidity))
		}
		if c.IdTokenValidity > 0 {
			in.IdTokenValidity = aws.Int32(int32(c.IdTokenValidity))
		}
		if c.RefreshTokenValidity > 0 {
			in.RefreshTokenValidity = int32(c.RefreshTokenValidity)
		}
		out, err := client.CreateUserPoolClient(ctx, in)
		if err != nil {
			return p, fmt.Errorf("create app client %s: %w", c.LogicalID, err)
		}
		p.Names[c.LogicalID] = aws.ToString(out.UserPoolClient.ClientId)
	}
	for _, g := range tmpl.UserPoolGroups {
		pool, ok := p.Names[g.UserPool]
		if !ok {
			return p, fmt.Errorf("group %s: no user pool %s in the template", g.LogicalID, g.UserPool)
		}
		in := &cip.CreateGroupInput{UserPoolId: aws.String(pool), GroupName: aws.String(g.GroupName),
			Description: aws.String(g.Description), Precedence: aws.Int32(int32(g.Precedence))}
		if _, err := client.CreateGroup(ctx, in); err != nil {
			return p, fmt.Errorf("create group %s: %w", g.LogicalID, err)
		}
		p.Names[g.LogicalID], p.Groups[g.LogicalID] = g.GroupName, g.GroupName
	}
	return p, nil
}

func usernameAttributes(names []string) []types.UsernameAttributeType {
	var out []types.UsernameAttributeType
	for _, n := range names {
		out = append(out, types.UsernameAttributeType(n))
	}
	return out
}

func verifiedAttributes(names []string) []types.VerifiedAttributeType {
	var out []types.VerifiedAttributeType
	for _, n := range names {
		out = append(out, types.VerifiedAttributeType(n))
	}
	return out
}

// CreateUser creates a confirmed user of pool signed in by email with a
// permanent password, its email verified, in the given groups: what an
// admin's invitation and the person's first sign-in leave on AWS. No
// message is sent.
func CreateUser(ctx context.Context, client *cip.Client, pool, email, password string, groups ...string) error {
	_, err := client.AdminCreateUser(ctx, &cip.AdminCreateUserInput{
		UserPoolId: aws.String(pool), Username: aws.String(email), MessageAction: types.MessageActionTypeSuppress,
		UserAttributes: []types.AttributeType{
			{Name: aws.String("email"), Value: aws.String(email)},
			{Name: aws.String("email_verified"), Value: aws.String("true")},
		},
	})
	if err != nil {
		return fmt.Errorf("create user %s: %w", email, err)
	}
	if _, err := client.AdminSetUserPassword(ctx, &cip.AdminSetUserPasswordInput{
		UserPoolId: aws.String(pool), Username: aws.String(email), Password: aws.String(password), Permanent: true,
	}); err != nil {
		return fmt.Errorf("set the password of %s: %w", email, err)
	}
	for _, g := range groups {
		if _, err := client.AdminAddUserToGroup(ctx, &cip.AdminAddUserToGroupInput{
			UserPoolId: aws.String(pool), Username: aws.String(email), GroupName: aws.String(g),
		}); err != nil {
			return fmt.Errorf("add %s to group %s: %w", email, g, err)
		}
	}
	return nil
}

// Tokens are what a sign-in returns.
type Tokens struct {
	ID, Access, Refresh string
}

// ErrChallenge is returned by SignIn when the pool asks for more than the
// password (a new password, a TOTP code).
var ErrChallenge = errors.New("sign-in challenge")

// SignIn signs a user in to the app client with USER_PASSWORD_AUTH, the
// console's flow, and returns the tokens.
func SignIn(ctx context.Context, client *cip.Client, clientID, email, password string) (Tokens, error) {
	out, err := client.InitiateAuth(ctx, &cip.InitiateAuthInput{
		ClientId: aws.String(clientID), AuthFlow: types.AuthFlowTypeUserPasswordAuth,
		AuthParameters: map[string]string{"USERNAME": email, "PASSWORD": password},
	})
	if err != nil {
		return Tokens{}, fmt.Errorf("sign in %s: %w", email, err)
	}
	r := out.AuthenticationResult
	if r == nil {
		return Tokens{}, fmt.Errorf("sign in %s: %w %s", email, ErrChallenge, out.ChallengeName)
	}
	return Tokens{ID: aws.ToString(r.IdToken), Access: aws.ToString(r.AccessToken), Refresh: aws.ToString(r.RefreshToken)}, nil
}
