// Package samtemplate reads the project's AWS SAM template (template.yaml):
// its parameters' defaults, its functions with their routes, environment and
// IAM statements, and its DynamoDB tables. The local runner, the test
// harness and the template tests read the template through it, so nothing
// the template says is restated elsewhere. Lambda functions never import it.
package samtemplate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Template is the part of a SAM template this project uses.
type Template struct {
	// Parameters maps each parameter to its default value.
	Parameters map[string]string
	Functions  []Function
	Tables     []Table
	// Buckets are the logical ids of the AWS::S3::Bucket resources.
	Buckets []string
}

// Function is an AWS::Serverless::Function, with the template's Globals applied.
type Function struct {
	LogicalID  string
	MemorySize int
	Timeout    int
	// Env is the function's environment: Globals first, then its own variables.
	Env    map[string]Value
	Routes []Route
	// Schedules are its Schedule events (EventBridge rules), enabled or not.
	Schedules  []Schedule
	Statements []Statement
}

// Schedule is a Schedule event of a function: an EventBridge rule that
// invokes it on a schedule.
type Schedule struct {
	Name string
	// Expression is the rule's schedule: "rate(1 minute)", "cron(...)".
	Expression string
	// Enabled is false when the event says Enabled: false (or State: DISABLED).
	Enabled bool
}

// DefaultRoute is the Path of the HTTP API's catch-all route, which takes
// every request no other route takes: an HttpApi event with neither Path
// nor Method. Its Method is "".
const DefaultRoute = "$default"

// Route is an HttpApi event of a function.
type Route struct {
	Name   string
	Method string
	Path   string
	// IAM is set when the route is authorized with AWS_IAM (SigV4).
	IAM bool
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
	Effect    string
	Actions   []string
	Resources []Value
}

// Table is an AWS::DynamoDB::Table.
type Table struct {
	LogicalID     string
	BillingMode   string
	Attributes    []Attribute
	KeySchema     []Key
	GlobalIndexes []Index
	// LocalIndexes are the LocalSecondaryIndexes.
	LocalIndexes []Index
	// TTLAttribute is the TimeToLiveSpecification attribute, "" when none.
	TTLAttribute string
}

// Attribute is an attribute definition: a name and a type (S, N or B).
type Attribute struct{ Name, Type string }

// Key is one element of a key schema: an attribute and HASH or RANGE.
type Key struct{ Name, Type string }

// Index is a global secondary index.
type Index struct {
	Name             string
	KeySchema        []Key
	ProjectionType   string
	NonKeyAttributes []string
}

// Value is a template value: a literal, a Ref, or a Fn::GetAtt.
type Value struct {
	Literal string
	Ref     string
	// GetAtt holds the logical id and attribute of a Fn::GetAtt.
	GetAtt [2]string
	// Sub holds the string of a Fn::Sub (its short form, one string).
	Sub string
	// Other is the name of any other intrinsic function (e.g. Fn::Sub).
	Other string
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

// Load reads and parses the template at path.
func Load(path string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read template: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Find returns the path of template.yaml in dir or the nearest directory above it.
func Find(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "template.yaml")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no template.yaml in %s or above", dir)
		}
	}
}

// Function returns the function with the given logical id.
func (t *Template) Function(logicalID string) (Function, bool) {
	for _, f := range t.Functions {
		if f.LogicalID == logicalID {
			return f, true
		}
	}
	return Function{}, false
}

// TableGrants returns the DynamoDB operations (without "dynamodb:") that
// the function's Allow statements grant on each table, by the table's
// logical id. A resource that is not a table's Arn, or an action that is
// not DynamoDB's, is an error: the grant cannot be checked against calls.
func (f Function) TableGrants() (map[string]map[string]bool, error) {
	granted := map[string]map[string]bool{}
	var errs []error
	for _, st := range f.Statements {
		if st.Effect != "Allow" || slices.ContainsFunc(st.Actions, func(a string) bool { return strings.HasPrefix(a, "s3:") }) {
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

// S3Grants returns the S3 actions the function's policy allows, by the
// key prefix they are allowed on (!Sub "${Bucket.Arn}/PREFIX*": "PREFIX").
func (f Function) S3Grants() map[string][]string {
	out := map[string][]string{}
	for _, st := range f.Statements {
		for _, r := range st.Resources {
			if st.Effect != "Allow" || !strings.HasPrefix(st.Actions[0], "s3:") {
				continue
			}
			_, prefix, _ := strings.Cut(r.Sub, ".Arn}/")
			prefix = strings.TrimSuffix(prefix, "*")
			out[prefix] = append(out[prefix], st.Actions...)
		}
	}
	return out
}

// Resolve turns v into a string: a literal as it is, a Ref to a parameter as
// the parameter's value (params overriding the defaults), a Ref to a
// resource as names[logical id], and a Sub with its ${...} replaced the same
// way. A value that is then a dynamic reference to an SSM parameter,
// {{resolve:ssm:NAME}}, which CloudFormation resolves at deploy time, is
// resolved locally to params["ssm:NAME"]. Anything else is an error.
func (t *Template) Resolve(v Value, params, names map[string]string) (string, error) {
	ref := func(name string) (string, error) {
		if p, ok := params[name]; ok {
			return p, nil
		}
		if p, ok := t.Parameters[name]; ok {
			return p, nil
		}
		if n, ok := names[name]; ok {
			return n, nil
		}
		return "", fmt.Errorf("unresolved reference %s", name)
	}
	var out string
	switch {
	case v.Ref != "":
		return ref(v.Ref)
	case v.Sub != "":
		rest := v.Sub
		for {
			before, after, found := strings.Cut(rest, "${")
			out += before
			if !found {
				break
			}
			name, tail, ok := strings.Cut(after, "}")
			if !ok {
				return "", fmt.Errorf("unterminated ${ in !Sub %q", v.Sub)
			}
			val, err := ref(name)
			if err != nil {
				return "", fmt.Errorf("!Sub %q: %w", v.Sub, err)
			}
			out += val
			rest = tail
		}
	case v.GetAtt[0] != "" || v.Other != "":
		return "", fmt.Errorf("cannot resolve %s locally", v)
	default:
		out = v.Literal
	}
	if inner, ok := strings.CutPrefix(out, "{{resolve:ssm:"); ok && strings.HasSuffix(inner, "}}") {
		name := strings.TrimSuffix(inner, "}}")
		if i := strings.LastIndex(name, ":"); i > 0 && !strings.Contains(name[i:], "/") {
			name = name[:i] // a version suffix
		}
		val, ok := params["ssm:"+name]
		if !ok {
			return "", fmt.Errorf("SSM parameter %s has no local value", name)
		}
		return val, nil
	}
	return out, nil
}

// Parse parses a SAM template.
func Parse(data []byte) (*Template, error) {
	top, err := document(data)
	if err != nil {
		return nil, err
	}
	t := &Template{Parameters: map[string]string{}}
	for name, p := range asMap(top["Parameters"]) {
		t.Parameters[name] = str(asMap(p)["Default"])
	}
	globals := asMap(asMap(top["Globals"])["Function"])
	err = eachResource(top, func(id, typ string, _, props map[string]any) error {
		switch typ {
		case "AWS::Serverless::Function":
			f, err := parseFunction(id, globals, props)
			t.Functions = append(t.Functions, f)
			return err
		case "AWS::DynamoDB::Table":
			t.Tables = append(t.Tables, parseTable(id, props))
		case "AWS::S3::Bucket":
			t.Buckets = append(t.Buckets, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// eachResource calls f with each resource of a document in logical id
// order: its id, its type, the resource and its Properties.
func eachResource(top map[string]any, f func(id, typ string, r, props map[string]any) error) error {
	resources := asMap(top["Resources"])
	for _, id := range sortedKeys(resources) {
		r := asMap(resources[id])
		if err := f(id, str(r["Type"]), r, asMap(r["Properties"])); err != nil {
			return err
		}
	}
	return nil
}

// document parses YAML data into maps, lists and strings (convert).
func document(data []byte) (map[string]any, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	if len(root.Content) != 1 {
		return nil, fmt.Errorf("parse template: empty document")
	}
	doc, err := convert(root.Content[0])
	if err != nil {
		return nil, err
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("parse template: top level is not a mapping")
	}
	return top, nil
}

// pick returns a function's property key: its own, else the Globals'.
func pick(globals, props map[string]any, key string) any {
	if v, ok := props[key]; ok {
		return v
	}
	return globals[key]
}

func parseFunction(id string, globals, props map[string]any) (Function, error) {
	f := Function{LogicalID: id, Env: map[string]Value{}}
	var err error
	if f.MemorySize, err = atoi(pick(globals, props, "MemorySize")); err != nil {
		return f, fmt.Errorf("%s MemorySize: %w", id, err)
	}
	if f.Timeout, err = atoi(pick(globals, props, "Timeout")); err != nil {
		return f, fmt.Errorf("%s Timeout: %w", id, err)
	}
	for _, src := range []map[string]any{globals, props} {
		for k, v := range asMap(asMap(src["Environment"])["Variables"]) {
			f.Env[k] = value(v)
		}
	}
	events := asMap(props["Events"])
	for _, name := range sortedKeys(events) {
		e := asMap(events[name])
		p := asMap(e["Properties"])
		if str(e["Type"]) == "Schedule" {
			f.Schedules = append(f.Schedules, Schedule{Name: name, Expression: str(p["Schedule"]),
				Enabled: str(p["Enabled"]) != "false" && str(p["State"]) != "DISABLED"})
			continue
		}
		if str(e["Type"]) != "HttpApi" {
			continue
		}
		r := Route{Name: name, Method: strings.ToUpper(str(p["Method"])), Path: str(p["Path"]),
			IAM: str(asMap(p["Auth"])["Authorizer"]) == "AWS_IAM"}
		if r.Method == "" && r.Path == "" {
			r.Path = DefaultRoute
		}
		f.Routes = append(f.Routes, r)
	}
	for _, pol := range asList(props["Policies"]) {
		for _, s := range asList(asMap(pol)["Statement"]) {
			sm := asMap(s)
			st := Statement{Effect: str(sm["Effect"])}
			for _, a := range listOrOne(sm["Action"]) {
				st.Actions = append(st.Actions, str(a))
			}
			for _, r := range listOrOne(sm["Resource"]) {
				st.Resources = append(st.Resources, value(r))
			}
			f.Statements = append(f.Statements, st)
		}
	}
	return f, nil
}

func parseTable(id string, props map[string]any) Table {
	tb := Table{LogicalID: id, BillingMode: str(props["BillingMode"])}
	if ttl := asMap(props["TimeToLiveSpecification"]); str(ttl["Enabled"]) == "true" {
		tb.TTLAttribute = str(ttl["AttributeName"])
	}
	for _, a := range asList(props["AttributeDefinitions"]) {
		am := asMap(a)
		tb.Attributes = append(tb.Attributes, Attribute{Name: str(am["AttributeName"]), Type: str(am["AttributeType"])})
	}
	tb.KeySchema = keys(props["KeySchema"])
	tb.GlobalIndexes = indexes(props["GlobalSecondaryIndexes"])
	tb.LocalIndexes = indexes(props["LocalSecondaryIndexes"])
	return tb
}

// indexes reads a list of index definitions.
func indexes(v any) []Index {
	var ixs []Index
	for _, g := range asList(v) {
		gm := asMap(g)
		pm := asMap(gm["Projection"])
		ix := Index{Name: str(gm["IndexName"]), KeySchema: keys(gm["KeySchema"]), ProjectionType: str(pm["ProjectionType"])}
		for _, n := range asList(pm["NonKeyAttributes"]) {
			ix.NonKeyAttributes = append(ix.NonKeyAttributes, str(n))
		}
		ixs = append(ixs, ix)
	}
	return ixs
}

func keys(v any) []Key {
	var ks []Key
	for _, k := range asList(v) {
		km := asMap(k)
		ks = append(ks, Key{Name: str(km["AttributeName"]), Type: str(km["KeyType"])})
	}
	return ks
}

// convert turns a YAML node into maps, lists and strings, with the short
// forms of intrinsic functions (!Ref, !GetAtt, !Sub, ...) turned into their
// long forms ({"Ref": ...}, {"Fn::GetAtt": [...]}, ...).
func convert(n *yaml.Node) (any, error) {
	var v any
	switch n.Kind {
	case yaml.AliasNode:
		return convert(n.Alias)
	case yaml.ScalarNode:
		v = n.Value
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			cv, err := convert(c)
			if err != nil {
				return nil, err
			}
			list = append(list, cv)
		}
		v = list
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			cv, err := convert(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = cv
		}
		v = m
	default:
		return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
	}
	if !strings.HasPrefix(n.Tag, "!") || strings.HasPrefix(n.Tag, "!!") {
		return v, nil
	}
	fn := strings.TrimPrefix(n.Tag, "!")
	switch fn {
	case "Ref", "Condition":
		return map[string]any{fn: v}, nil
	case "GetAtt":
		if s, ok := v.(string); ok {
			id, attr, _ := strings.Cut(s, ".")
			v = []any{id, attr}
		}
		return map[string]any{"Fn::GetAtt": v}, nil
	}
	return map[string]any{"Fn::" + fn: v}, nil
}

func value(v any) Value {
	switch x := v.(type) {
	case string:
		return Value{Literal: x}
	case map[string]any:
		if r, ok := x["Ref"]; ok {
			return Value{Ref: str(r)}
		}
		if sub, ok := x["Fn::Sub"].(string); ok {
			return Value{Sub: sub}
		}
		if g, ok := x["Fn::GetAtt"]; ok {
			l := asList(g)
			if len(l) == 2 {
				return Value{GetAtt: [2]string{str(l[0]), str(l[1])}}
			}
		}
		for k := range x {
			return Value{Other: k}
		}
	}
	return Value{}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func listOrOne(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func atoi(v any) (int, error) {
	if v == nil {
		return 0, nil
	}
	return strconv.Atoi(str(v))
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
