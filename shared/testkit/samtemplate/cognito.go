package samtemplate

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Authorizer is a JWT authorizer of the template's HttpApi (its
// Auth.Authorizers): where API Gateway reads the token (IdentitySource,
// e.g. "$request.header.Authorization"), the Issuer its tokens must name
// and the Audience, one of which their aud (or client_id) must be.
type Authorizer struct {
	Name           string
	IdentitySource string
	Issuer         Value
	Audience       []Value
}

// UserPool is an AWS::Cognito::UserPool, with the properties the local
// stack creates it with; MfaConfiguration and EnabledMfas are evaluated
// with the template's parameters (nil EnabledMfas: AWS::NoValue).
type UserPool struct {
	LogicalID              string          `yaml:"-"`
	UsernameAttributes     []string        `yaml:"UsernameAttributes"`
	AutoVerifiedAttributes []string        `yaml:"AutoVerifiedAttributes"`
	AdminCreateUserConfig  AdminCreateUser `yaml:"AdminCreateUserConfig"`
	Policies               struct {
		PasswordPolicy PasswordPolicy `yaml:"PasswordPolicy"`
	} `yaml:"Policies"`
	UsernameConfiguration struct {
		CaseSensitive *bool `yaml:"CaseSensitive"`
	} `yaml:"UsernameConfiguration"`
	MfaConfiguration string   `yaml:"-"`
	EnabledMfas      []string `yaml:"-"`
}

// AdminCreateUser is a pool's AdminCreateUserConfig.
type AdminCreateUser struct {
	AllowAdminCreateUserOnly bool `yaml:"AllowAdminCreateUserOnly"`
}

// PasswordPolicy is a pool's password policy.
type PasswordPolicy struct {
	MinimumLength                 int  `yaml:"MinimumLength"`
	RequireLowercase              bool `yaml:"RequireLowercase"`
	RequireUppercase              bool `yaml:"RequireUppercase"`
	RequireNumbers                bool `yaml:"RequireNumbers"`
	RequireSymbols                bool `yaml:"RequireSymbols"`
	TemporaryPasswordValidityDays int  `yaml:"TemporaryPasswordValidityDays"`
}

// UserPoolClient is an AWS::Cognito::UserPoolClient of the pool whose
// logical id is UserPool.
type UserPoolClient struct {
	LogicalID                  string   `yaml:"-"`
	UserPool                   string   `yaml:"-"`
	UserPoolID                 Value    `yaml:"UserPoolId"`
	ClientName                 string   `yaml:"ClientName"`
	GenerateSecret             bool     `yaml:"GenerateSecret"`
	ExplicitAuthFlows          []string `yaml:"ExplicitAuthFlows"`
	PreventUserExistenceErrors string   `yaml:"PreventUserExistenceErrors"`
	EnableTokenRevocation      bool     `yaml:"EnableTokenRevocation"`
	AuthSessionValidity        int      `yaml:"AuthSessionValidity"`
	AccessTokenValidity        int      `yaml:"AccessTokenValidity"`
	IdTokenValidity            int      `yaml:"IdTokenValidity"`
	RefreshTokenValidity       int      `yaml:"RefreshTokenValidity"`
	TokenValidityUnits         struct {
		AccessToken  string `yaml:"AccessToken"`
		IdToken      string `yaml:"IdToken"`
		RefreshToken string `yaml:"RefreshToken"`
	} `yaml:"TokenValidityUnits"`
}

// UserPoolGroup is an AWS::Cognito::UserPoolGroup of the pool whose
// logical id is UserPool.
type UserPoolGroup struct {
	LogicalID   string `yaml:"-"`
	UserPool    string `yaml:"-"`
	UserPoolID  Value  `yaml:"UserPoolId"`
	GroupName   string `yaml:"GroupName"`
	Description string `yaml:"Description"`
	Precedence  int    `yaml:"Precedence"`
}

// httpAPIAuth reads the JWT authorizers of an AWS::Serverless::HttpApi's
// properties.
func (t *Template) httpAPIAuth(props *yaml.Node) error {
	var p struct {
		Auth struct {
			Authorizers map[string]struct {
				IdentitySource   string `yaml:"IdentitySource"`
				JwtConfiguration *struct {
					Issuer   Value   `yaml:"issuer"`
					Audience []Value `yaml:"audience"`
				} `yaml:"JwtConfiguration"`
			} `yaml:"Authorizers"`
		} `yaml:"Auth"`
	}
	if err := props.Decode(&p); err != nil {
		return err
	}
	for name, a := range p.Auth.Authorizers {
		if a.JwtConfiguration == nil {
			return fmt.Errorf("authorizer %s: only JWT authorizers (JwtConfiguration) are read", name)
		}
		t.Authorizers[name] = Authorizer{Name: name, IdentitySource: a.IdentitySource,
			Issuer: a.JwtConfiguration.Issuer, Audience: a.JwtConfiguration.Audience}
	}
	return nil
}

// userPool reads an AWS::Cognito::UserPool's properties.
func (t *Template) userPool(id string, props *yaml.Node) (UserPool, error) {
	var p struct {
		UserPool         `yaml:",inline"`
		MfaConfiguration yaml.Node `yaml:"MfaConfiguration"`
		EnabledMfas      yaml.Node `yaml:"EnabledMfas"`
	}
	if err := props.Decode(&p); err != nil {
		return UserPool{}, err
	}
	pool := p.UserPool
	pool.LogicalID, pool.MfaConfiguration = id, "OFF"
	if p.MfaConfiguration.Kind != 0 {
		v, err := t.eval(&p.MfaConfiguration)
		if err != nil {
			return UserPool{}, fmt.Errorf("property MfaConfiguration: %w", err)
		}
		pool.MfaConfiguration = v
	}
	if p.EnabledMfas.Kind != 0 {
		n, err := t.evalNode(&p.EnabledMfas)
		if err != nil {
			return UserPool{}, fmt.Errorf("property EnabledMfas: %w", err)
		}
		if n != nil {
			if err := n.Decode(&pool.EnabledMfas); err != nil {
				return UserPool{}, fmt.Errorf("property EnabledMfas: %w", err)
			}
		}
	}
	return pool, nil
}

// poolRef returns the logical id of the pool a client or group names by
// !Ref in its UserPoolId.
func poolRef(id string, v Value) (string, error) {
	if v.Ref == "" {
		return "", fmt.Errorf("%s: UserPoolId %s is not a !Ref to a pool of the template", id, v)
	}
	return v.Ref, nil
}

// evalNode resolves the Fn::If conditions of n and returns the node they
// choose, nil for !Ref AWS::NoValue, or n itself when it is no function.
func (t *Template) evalNode(n *yaml.Node) (*yaml.Node, error) {
	name, arg, ok := fn(n)
	switch {
	case !ok:
		return n, nil
	case name == "Ref" && arg.Value == "AWS::NoValue":
		return nil, nil
	case name == "If" && arg.Kind == yaml.SequenceNode && len(arg.Content) == 3:
		yes, err := t.condition(arg.Content[0].Value, nil)
		if err != nil {
			return nil, err
		}
		return t.evalNode(arg.Content[map[bool]int{true: 1, false: 2}[yes]])
	}
	return nil, fmt.Errorf("cannot evaluate %s locally", describe(n))
}
