package samtemplate

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Values of the template resolved as CloudFormation does at deploy time,
// with the parameters' values (defaults, or those a deploy overrides:
// ParseWith): environment variables (Resolve), and the properties the
// tooling reads by value, a Schedule event's Input and State, with the
// template's conditions.

// Resolve turns v into a string: a literal as it is, a Ref to a parameter as
// the parameter's value (params overriding the defaults), a Ref to a
// resource as names[logical id], and a Sub with its ${...} replaced the same
// way. A value that is then a dynamic reference to an SSM parameter,
// {{resolve:ssm:NAME}}, which CloudFormation resolves at deploy time, is
// resolved locally to params["ssm:NAME"]. Anything else is an error.
func (t *Template) Resolve(v Value, params, names map[string]string) (string, error) {
	ref := func(name string) (string, error) {
		for _, m := range []map[string]string{params, t.Parameters, names} {
			if s, ok := m[name]; ok {
				return s, nil
			}
		}
		return "", fmt.Errorf("unresolved reference %s", name)
	}
	var out string
	switch {
	case v.Ref != "":
		return ref(v.Ref)
	case v.Sub != "":
		for rest := v.Sub; ; {
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
			out, rest = out+val, tail
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

// setParams sets t's parameters to their defaults overridden by params,
// refusing a parameter the template does not declare and a value its
// AllowedValues do not list, as CloudFormation does.
func (t *Template) setParams(params map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(params)) {
		v := params[name]
		if _, ok := t.Parameters[name]; !ok {
			return fmt.Errorf("parameter %s: the template declares no such parameter", name)
		}
		if allowed := t.Allowed[name]; len(allowed) > 0 && !slices.Contains(allowed, v) {
			return fmt.Errorf("parameter %s: %q is not one of %s", name, v, strings.Join(allowed, ", "))
		}
		t.Parameters[name] = v
	}
	return nil
}

// schedule is the Schedule event name of expression expr, with its
// Enabled, State and Input properties as written (a node of Kind 0 when
// absent).
func (t *Template) schedule(name, expr string, enabled *bool, state, input *yaml.Node) (Schedule, error) {
	s := Schedule{Name: name, Expression: expr, Enabled: enabled == nil || *enabled}
	if state.Kind != 0 {
		v, err := t.eval(state)
		if err != nil {
			return Schedule{}, fmt.Errorf("property State: %w", err)
		}
		s.Enabled = s.Enabled && v != "DISABLED"
	}
	if input.Kind != 0 {
		v, err := t.eval(input)
		if err != nil {
			return Schedule{}, fmt.Errorf("property Input: %w", err)
		}
		s.Input = v
	}
	return s, nil
}

// fn returns the intrinsic function of n, in the short (!If [...]) or the
// long ({Fn::If: [...]}, or {Condition: X}) form, and its argument.
func fn(n *yaml.Node) (name string, arg *yaml.Node, ok bool) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if short, ok := strings.CutPrefix(n.Tag, "!"); ok && !strings.HasPrefix(short, "!") {
		return short, n, true
	}
	if n.Kind == yaml.MappingNode && len(n.Content) == 2 {
		key := n.Content[0].Value
		if long, ok := strings.CutPrefix(key, "Fn::"); ok || key == "Ref" || key == "Condition" {
			return cmp.Or(long, key), n.Content[1], true
		}
	}
	return "", nil, false
}

// eval resolves n to a string: a scalar as it is, a Ref to a parameter, a
// Sub (its one-string form) over the parameters, an If on a condition.
func (t *Template) eval(n *yaml.Node) (string, error) {
	name, arg, ok := fn(n)
	switch {
	case !ok && n.Kind == yaml.ScalarNode:
		return n.Value, nil
	case name == "If" && arg.Kind == yaml.SequenceNode && len(arg.Content) == 3:
		yes, err := t.condition(arg.Content[0].Value, nil)
		if err != nil {
			return "", err
		}
		return t.eval(arg.Content[map[bool]int{true: 1, false: 2}[yes]])
	case (name == "Ref" || name == "Sub") && arg.Kind == yaml.ScalarNode:
		v := Value{Ref: arg.Value}
		if name == "Sub" {
			v = Value{Sub: arg.Value}
		}
		return t.Resolve(v, nil, nil)
	}
	return "", fmt.Errorf("cannot evaluate %s locally", describe(n))
}

// condition evaluates the template's condition name; seen are the
// conditions being evaluated, which name may not refer back to.
func (t *Template) condition(name string, seen []string) (bool, error) {
	n, ok := t.conditions[name]
	if !ok {
		return false, fmt.Errorf("no condition %s", name)
	}
	if slices.Contains(seen, name) {
		return false, fmt.Errorf("condition %s refers to itself", name)
	}
	v, err := t.truth(&n, append(seen, name))
	if err != nil {
		return false, fmt.Errorf("condition %s: %w", name, err)
	}
	return v, nil
}

// truth evaluates a condition function: Equals, Not, And, Or, or a
// reference to another condition.
func (t *Template) truth(n *yaml.Node, seen []string) (bool, error) {
	name, arg, ok := fn(n)
	if !ok {
		return false, fmt.Errorf("%s is not a condition function", describe(n))
	}
	if name == "Condition" && arg.Kind == yaml.ScalarNode {
		return t.condition(arg.Value, seen)
	}
	if arg.Kind != yaml.SequenceNode {
		return false, fmt.Errorf("function Fn::%s takes a list", name)
	}
	args := arg.Content
	switch {
	case name == "Equals" && len(args) == 2:
		a, err := t.eval(args[0])
		if err != nil {
			return false, err
		}
		b, err := t.eval(args[1])
		return a == b, err
	case name == "Not" && len(args) == 1:
		v, err := t.truth(args[0], seen)
		return !v, err
	case name == "And" || name == "Or":
		for _, a := range args {
			v, err := t.truth(a, seen)
			if err != nil || v == (name == "Or") {
				return v, err
			}
		}
		return name == "And", nil
	}
	return false, fmt.Errorf("cannot evaluate Fn::%s with %d arguments", name, len(args))
}

// describe names n for messages: its tag or first key, or its value.
func describe(n *yaml.Node) string {
	if name, _, ok := fn(n); ok {
		return "!" + name
	}
	if n.Value != "" {
		return fmt.Sprintf("%q", n.Value)
	}
	return "a " + map[yaml.Kind]string{yaml.MappingNode: "mapping", yaml.SequenceNode: "list"}[n.Kind]
}
