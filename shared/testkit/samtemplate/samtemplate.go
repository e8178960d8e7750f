// Package samtemplate reads what the tooling uses of the project's AWS SAM
// template (template.yaml): parameters (defaults, or a deploy's values),
// functions (routes, schedules with their input and state, environment, IAM
// statements, Globals applied), DynamoDB tables and buckets, so that
// nothing the template says is restated.
package samtemplate

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Template is the part of a SAM template this project uses.
type Template struct {
	// Parameters maps each parameter to its value: its default, or the
	// value ParseWith was given.
	Parameters map[string]string
	// Allowed maps each parameter that lists AllowedValues to them.
	Allowed   map[string][]string
	Functions []Function
	Tables    []Table
	// Buckets are the logical ids of the AWS::S3::Bucket resources.
	Buckets []string
	// Lifecycle maps each bucket with a LifecycleConfiguration to its rules.
	Lifecycle map[string][]LifecycleRule
	// Authorizers are the HttpApi's JWT authorizers, by name.
	Authorizers map[string]Authorizer
	// UserPools, UserPoolClients and UserPoolGroups are the template's
	// Cognito user pools, their app clients and their groups.
	UserPools       []UserPool
	UserPoolClients []UserPoolClient
	UserPoolGroups  []UserPoolGroup

	conditions map[string]yaml.Node // the Conditions section, by name
}

// Function is an AWS::Serverless::Function, with the template's Globals applied.
type Function struct {
	LogicalID  string
	MemorySize int
	Timeout    int
	// Env is the function's environment: Globals first, then its own variables.
	Env        map[string]Value
	Routes     []Route
	Schedules  []Schedule
	Statements []Statement
}

// Schedule is a Schedule event (an EventBridge rule) of a function;
// Enabled is false when it says Enabled: false or its State is DISABLED,
// and Input is the JSON EventBridge sends as the event instead of its
// Scheduled Event ("" when none). State and Input are evaluated with the
// template's parameter values (a !Sub, an !If on a condition).
type Schedule struct {
	Name, Expression string
	Enabled          bool
	Input            string
}

// DefaultRoute is the Path of the HTTP API's catch-all route: an HttpApi
// event with neither Path nor Method (its Method is "").
const DefaultRoute = "$default"

// Route is an HttpApi event of a function; IAM is set when it is
// authorized with AWS_IAM (SigV4), Authorizer names the JWT authorizer of
// the template's HttpApi that authorizes it ("" when none does).
type Route struct {
	Name, Method, Path string
	IAM                bool
	Authorizer         string
}

// Key is the route's routeKey as API Gateway names it: "GET /api/x", or
// "$default" for the catch-all.
func (r Route) Key() string {
	if r.Path == DefaultRoute {
		return DefaultRoute
	}
	return r.Method + " " + r.Path
}

// Statement is one IAM policy statement of a function.
type Statement struct {
	Effect    string       `yaml:"Effect"`
	Actions   list[string] `yaml:"Action"`
	Resources list[Value]  `yaml:"Resource"`
}

// Table is an AWS::DynamoDB::Table.
type Table struct {
	LogicalID     string      `yaml:"-"`
	BillingMode   string      `yaml:"BillingMode"`
	Attributes    []Attribute `yaml:"AttributeDefinitions"`
	KeySchema     []Key       `yaml:"KeySchema"`
	GlobalIndexes []Index     `yaml:"GlobalSecondaryIndexes"`
	LocalIndexes  []Index     `yaml:"LocalSecondaryIndexes"`
	// TTLAttribute is the TimeToLiveSpecification attribute, "" when none.
	TTLAttribute string `yaml:"-"`
}

// LifecycleRule is one rule of a bucket's LifecycleConfiguration: the
// prefix it applies to ("" for every key; a Filter's Prefix when it has
// one), the days after which a current version expires and a noncurrent
// one is removed (0 when it says none), and whether it removes expired
// delete markers.
type LifecycleRule struct {
	ID                        string `yaml:"Id"`
	Status                    string `yaml:"Status"`
	Prefix                    string `yaml:"Prefix"`
	ExpirationInDays          int    `yaml:"ExpirationInDays"`
	ExpiredObjectDeleteMarker bool   `yaml:"ExpiredObjectDeleteMarker"`
	NoncurrentDays            int    `yaml:"-"`
}

// Attribute is an attribute definition: a name and a type (S, N or B).
type Attribute struct {
	Name string `yaml:"AttributeName"`
	Type string `yaml:"AttributeType"`
}

// Key is one element of a key schema: an attribute and HASH or RANGE.
type Key struct {
	Name string `yaml:"AttributeName"`
	Type string `yaml:"KeyType"`
}

// Index is a secondary index, global or local.
type Index struct {
	Name       string `yaml:"IndexName"`
	KeySchema  []Key  `yaml:"KeySchema"`
	Projection `yaml:"Projection"`
}

// Projection is what an index projects.
type Projection struct {
	ProjectionType   string   `yaml:"ProjectionType"`
	NonKeyAttributes []string `yaml:"NonKeyAttributes"`
}

// Value is a template value: a literal, a Ref, a Fn::GetAtt (logical id
// and attribute), a Fn::Sub (its one-string form), or Other, the name of
// any other intrinsic function.
type Value struct {
	Literal, Ref string
	GetAtt       [2]string
	Sub, Other   string
}

// UnmarshalYAML reads a value in the short (!Ref X) or long ({Ref: X}) form.
func (v *Value) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	fn, custom := strings.CutPrefix(n.Tag, "!")
	switch {
	case custom && !strings.HasPrefix(fn, "!"): // the short form
	case n.Kind == yaml.MappingNode && len(n.Content) > 0:
		fn, n = strings.TrimPrefix(n.Content[0].Value, "Fn::"), n.Content[1]
	default:
		v.Literal = n.Value
		return nil
	}
	switch {
	case fn == "Ref":
		v.Ref = n.Value
	case fn == "Sub" && n.Kind == yaml.ScalarNode:
		v.Sub = n.Value
	case fn == "GetAtt" && n.Kind == yaml.ScalarNode:
		id, attr, _ := strings.Cut(n.Value, ".")
		v.GetAtt = [2]string{id, attr}
	case fn == "GetAtt" && len(n.Content) == 2:
		v.GetAtt = [2]string{n.Content[0].Value, n.Content[1].Value}
	default:
		v.Other = "Fn::" + fn
	}
	return nil
}

// String renders v in the template's short form, for messages.
func (v Value) String() string {
	switch {
	case v.Ref != "":
		return "!Ref " + v.Ref
	case v.GetAtt[0] != "":
		return "!GetAtt " + v.GetAtt[0] + "." + v.GetAtt[1]
	case v.Sub != "":
		return "!Sub " + v.Sub
	case v.Other != "":
		return "!" + strings.TrimPrefix(v.Other, "Fn::") + " ..."
	}
	return v.Literal
}

// list is a YAML value that is one T or a list of them (IAM's Action and
// Resource).
type list[T any] []T

// UnmarshalYAML reads one T or a list.
func (l *list[T]) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.SequenceNode {
		return n.Decode((*[]T)(l))
	}
	*l = make(list[T], 1)
	return n.Decode(&(*l)[0])
}

// Load reads and parses the template at path.
func Load(path string) (*Template, error) { return LoadWith(path, nil) }

// LoadWith reads and parses the template at path with params overriding
// its parameters' defaults (ParseWith).
func LoadWith(path string, params map[string]string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read template: %w", err)
	}
	t, err := ParseWith(data, params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Root returns the module's root: the directory of template.yaml, dir or
// the nearest directory above it.
func Root(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "template.yaml")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no template.yaml in %s or above", dir)
		}
	}
}

// Function returns the function with the given logical id.
func (t *Template) Function(logicalID string) (Function, bool) {
	i := slices.IndexFunc(t.Functions, func(f Function) bool { return f.LogicalID == logicalID })
	if i < 0 {
		return Function{}, false
	}
	return t.Functions[i], true
}

// TableGrants returns the DynamoDB operations (without "dynamodb:") that
// the function's Allow statements grant on each table, by the table's
// logical id. A resource that is not a table's Arn, or an action that is
// not DynamoDB's, is an error: the grant cannot be checked against calls.
func (f Function) TableGrants() (map[string]map[string]bool, error) {
	granted := map[string]map[string]bool{}
	var errs []error
	for _, st := range f.Statements {
		if st.Effect != "Allow" || slices.ContainsFunc(st.Actions, func(a string) bool {
			return strings.HasPrefix(a, "s3:") || strings.HasPrefix(a, cognitoPrefix)
		}) {
			continue
		}
		for _, r := range st.Resources {
			target, ok := r.tableARN()
			if !ok {
				errs = append(errs, fmt.Errorf("%s: policy resource %s is not a table or index ARN", f.LogicalID, r))
				continue
			}
			for _, a := range st.Actions {
				op, ok := strings.CutPrefix(a, "dynamodb:")
				if !ok {
					errs = append(errs, fmt.Errorf("%s: policy grants %s, not a DynamoDB action", f.LogicalID, a))
					continue
				}
				if granted[target] == nil {
					granted[target] = map[string]bool{}
				}
				granted[target][op] = true
			}
		}
	}
	return granted, errors.Join(errs...)
}

// cognitoPrefix is the prefix of Cognito user pools' IAM actions.
const cognitoPrefix = "cognito-idp:"

// CognitoGrants returns the Cognito user pool actions (without their
// "cognito-idp:" prefix) the function's policy allows, by the logical id of
// the pool it allows them on (!GetAtt POOL.Arn); a Cognito action on any
// other resource (a wildcard, another ARN) is an error, as is a statement
// that mixes Cognito's actions with others.
func (f Function) CognitoGrants() (map[string]map[string]bool, error) {
	granted := map[string]map[string]bool{}
	var errs []error
	for _, st := range f.Statements {
		if st.Effect != "Allow" || !slices.ContainsFunc(st.Actions, func(a string) bool { return strings.HasPrefix(a, cognitoPrefix) }) {
			continue
		}
		for _, r := range st.Resources {
			if r.GetAtt[1] != "Arn" || r.GetAtt[0] == "" {
				errs = append(errs, fmt.Errorf("%s: policy resource %s of Cognito actions is not a user pool's ARN (!GetAtt POOL.Arn)", f.LogicalID, r))
				continue
			}
			for _, a := range st.Actions {
				op, ok := strings.CutPrefix(a, cognitoPrefix)
				if !ok || op == "" || strings.Contains(op, "*") {
					errs = append(errs, fmt.Errorf("%s: policy grants %s beside Cognito's actions, or a wildcard", f.LogicalID, a))
					continue
				}
				if granted[r.GetAtt[0]] == nil {
					granted[r.GetAtt[0]] = map[string]bool{}
				}
				granted[r.GetAtt[0]][op] = true
			}
		}
	}
	return granted, errors.Join(errs...)
}

// tableARN reads v as a table's ARN (!GetAtt T.Arn: "T") or one of its
// indexes' (!Sub "${T.Arn}/index/NAME": "T/index/NAME").
func (v Value) tableARN() (string, bool) {
	if v.GetAtt[1] == "Arn" {
		return v.GetAtt[0], true
	}
	table, index, ok := strings.Cut(strings.TrimPrefix(v.Sub, "${"), ".Arn}/index/")
	if !ok || !strings.HasPrefix(v.Sub, "${") || index == "" || strings.ContainsAny(index, "/*${}") {
		return "", false
	}
	return table + "/index/" + index, true
}

// functionProps are the properties of a function this package reads.
type functionProps struct {
	MemorySize  int `yaml:"MemorySize"`
	Timeout     int `yaml:"Timeout"`
	Environment struct {
		Variables map[string]Value `yaml:"Variables"`
	} `yaml:"Environment"`
	Events map[string]struct {
		Type       string `yaml:"Type"`
		Properties struct {
			Method string `yaml:"Method"`
			Path   string `yaml:"Path"`
			Auth   struct {
				Authorizer string `yaml:"Authorizer"`
			} `yaml:"Auth"`
			Schedule string    `yaml:"Schedule"`
			Enabled  *bool     `yaml:"Enabled"`
			State    yaml.Node `yaml:"State"`
			Input    yaml.Node `yaml:"Input"`
		} `yaml:"Properties"`
	} `yaml:"Events"`
	// Policies are read as inline documents: a managed policy's name (a
	// string) is an error, as its grants could not be checked (a SAM
	// policy template, as before, yields no statement).
	Policies []struct {
		Statement []Statement `yaml:"Statement"`
	} `yaml:"Policies"`
}

// Parse parses a SAM template, with its parameters' defaults.
func Parse(data []byte) (*Template, error) { return ParseWith(data, nil) }

// ParseWith parses a SAM template with params overriding its parameters'
// defaults, as `sam deploy --parameter-overrides` does: the schedules'
// State and Input are evaluated with them, and Resolve uses them. A
// parameter the template does not declare, or a value outside its
// AllowedValues, is an error.
func ParseWith(data []byte, params map[string]string) (*Template, error) {
	var doc struct {
		Parameters map[string]struct {
			Default       string   `yaml:"Default"`
			AllowedValues []string `yaml:"AllowedValues"`
		} `yaml:"Parameters"`
		Conditions map[string]yaml.Node `yaml:"Conditions"`
		Globals    struct {
			Function yaml.Node `yaml:"Function"`
		} `yaml:"Globals"`
		Resources map[string]struct {
			Type       string    `yaml:"Type"`
			Properties yaml.Node `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	t := &Template{Parameters: map[string]string{}, Allowed: map[string][]string{}, Authorizers: map[string]Authorizer{}, conditions: doc.Conditions}
	for name, p := range doc.Parameters {
		t.Parameters[name] = p.Default
		if len(p.AllowedValues) > 0 {
			t.Allowed[name] = p.AllowedValues
		}
	}
	if err := t.setParams(params); err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(maps.Keys(doc.Resources)) {
		r := doc.Resources[id]
		switch r.Type {
		case "AWS::Serverless::Function":
			// The function's own properties decoded over the Globals'.
			var p functionProps
			if err := errors.Join(doc.Globals.Function.Decode(&p), r.Properties.Decode(&p)); err != nil {
				return nil, fmt.Errorf("%s: %w", id, err)
			}
			f, err := t.function(p, id)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", id, err)
			}
			t.Functions = append(t.Functions, f)
		case "AWS::DynamoDB::Table":
			var p struct {
				Table `yaml:",inline"`
				TTL   struct {
					AttributeName string `yaml:"AttributeName"`
					Enabled       bool   `yaml:"Enabled"`
				} `yaml:"TimeToLiveSpecification"`
			}
			if err := r.Properties.Decode(&p); err != nil {
				return nil, fmt.Errorf("%s: %w", id, err)
			}
			p.LogicalID = id
			if p.TTL.Enabled {
				p.TTLAttribute = p.TTL.AttributeName
			}
			t.Tables = append(t.Tables, p.Table)
		case "AWS::S3::Bucket":
			t.Buckets = append(t.Buckets, id)
			var p struct {
				Lifecycle struct {
					Rules []struct {
						LifecycleRule `yaml:",inline"`
						Filter        struct {
							Prefix string `yaml:"Prefix"`
						} `yaml:"Filter"`
						Noncurrent struct {
							Days int `yaml:"NoncurrentDays"`
						} `yaml:"NoncurrentVersionExpiration"`
					} `yaml:"Rules"`
				} `yaml:"LifecycleConfiguration"`
			}
			if err := r.Properties.Decode(&p); err != nil {
				return nil, fmt.Errorf("%s: %w", id, err)
			}
			for _, r := range p.Lifecycle.Rules {
				rule := r.LifecycleRule
				if rule.Prefix == "" {
					rule.Prefix = r.Filter.Prefix
				}
				rule.NoncurrentDays = r.Noncurrent.Days
				if t.Lifecycle == nil {
					t.Lifecycle = map[string][]LifecycleRule{}
				}
				t.Lifecycle[id] = append(t.Lifecycle[id], rule)
			}
		case "AWS::Serverless::HttpApi":
			if err := t.httpAPIAuth(&r.Properties); err != nil {
				return nil, fmt.Errorf("%s: %w", id, err)
			}
		case "AWS::Cognito::UserPool":
			p, err := t.userPool(id, &r.Properties)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", id, err)
			}
			t.UserPools = append(t.UserPools, p)
		case "AWS::Cognito::UserPoolClient":
			var c UserPoolClient
			err := r.Properties.Decode(&c)
			if err == nil {
				c.LogicalID = id
				c.UserPool, err = poolRef(id, c.UserPoolID)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", id, err)
			}
			t.UserPoolClients = append(t.UserPoolClients, c)
		case "AWS::Cognito::UserPoolGroup":
			var g UserPoolGroup
			err := r.Properties.Decode(&g)
			if err == nil {
				g.LogicalID = id
				g.UserPool, err = poolRef(id, g.UserPoolID)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", id, err)
			}
			t.UserPoolGroups = append(t.UserPoolGroups, g)
		}
	}
	for _, f := range t.Functions {
		for _, r := range f.Routes {
			if _, ok := t.Authorizers[r.Authorizer]; r.Authorizer != "" && !ok {
				return nil, fmt.Errorf("%s: route %s names authorizer %s, which the HttpApi does not declare", f.LogicalID, r.Key(), r.Authorizer)
			}
		}
	}
	return t, nil
}

// function is the Function of logical id id with properties p.
func (t *Template) function(p functionProps, id string) (Function, error) {
	f := Function{LogicalID: id, MemorySize: p.MemorySize, Timeout: p.Timeout, Env: p.Environment.Variables}
	if f.Env == nil {
		f.Env = map[string]Value{}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Events)) {
		e := p.Events[name]
		switch q := e.Properties; e.Type {
		case "Schedule":
			s, err := t.schedule(name, q.Schedule, q.Enabled, &q.State, &q.Input)
			if err != nil {
				return Function{}, fmt.Errorf("%s: %w", name, err)
			}
			f.Schedules = append(f.Schedules, s)
		case "HttpApi":
			r := Route{Name: name, Method: strings.ToUpper(q.Method), Path: q.Path, IAM: q.Auth.Authorizer == "AWS_IAM"}
			if a := q.Auth.Authorizer; a != "" && a != "AWS_IAM" && a != "NONE" {
				r.Authorizer = a
			}
			if r.Method == "" && r.Path == "" {
				r.Path = DefaultRoute
			}
			f.Routes = append(f.Routes, r)
		}
	}
	for _, pol := range p.Policies {
		f.Statements = append(f.Statements, pol.Statement...)
	}
	return f, nil
}
