// Package config reads a function's settings from its environment, as
// template.yaml sets it, and reports every missing variable at once.
package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Env reads environment variables through a lookup function (os.Getenv in
// main, a recording function in tests).
type Env struct {
	getenv  func(string) string
	missing []string
	errs    []error
}

// New returns an Env over getenv.
func New(getenv func(string) string) *Env {
	return &Env{getenv: getenv}
}

// Get returns the variable's value, "" when it is unset.
func (e *Env) Get(name string) string {
	return e.getenv(name)
}

// Require returns the variable's value and remembers it as missing when empty.
func (e *Env) Require(name string) string {
	v := e.getenv(name)
	if v == "" {
		e.missing = append(e.missing, name)
	}
	return v
}

// Seconds returns the variable's value, a whole number of seconds from 1
// to 3600, as a duration: def when it is unset; an unusable value is
// recorded (Fail).
func (e *Env) Seconds(name string, def time.Duration) time.Duration {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 3600 {
		e.Fail(fmt.Errorf("%s=%q is not a whole number of seconds from 1 to 3600", name, v))
		return def
	}
	return time.Duration(n) * time.Second
}

// LocalSignal is the variable that says a function runs in a local Lambda
// runtime, set to "true": SAM CLI sets it in every function it runs (`sam
// local start-api`, `sam local invoke`), and so do the local stack
// (cmd/local) and the tests. Lambda never sets it, and template.yaml sets
// it for no function (a test checks), so a deployed function never has it,
// whatever the stack's parameters say.
const LocalSignal = "AWS_SAM_LOCAL"

// LocalEndpoints are the variables that point a function at a local engine
// instead of AWS's: template.yaml declares them empty, for `sam local` to
// fill (its --env-vars file sets only variables the template declares;
// COGNITO_ENDPOINT is the staff pool's, which the console's page signs in
// at), and
// no template parameter reaches them (a test checks).
var LocalEndpoints = [...]string{"DYNAMODB_ENDPOINT", "S3_ENDPOINT", "COGNITO_ENDPOINT"}

// Local reports whether the function runs in a local Lambda runtime
// (LocalSignal is "true"): only then may it use local engines, and its
// webhooks reach loopback addresses.
func (e *Env) Local() bool { return e.getenv(LocalSignal) == "true" }

// Endpoint returns the local engine address the variable name (one of
// LocalEndpoints) gives, "" when it is empty. Set outside a local runtime,
// the setting is unusable (Fail): a function whose environment points at a
// local engine but which does not run locally fails its init rather than
// talk to an engine that is not AWS's.
func (e *Env) Endpoint(name string) string {
	v := e.getenv(name)
	if v != "" && !e.Local() {
		e.Fail(fmt.Errorf("%s is set (%s) but this is not a local Lambda runtime (%s is not true): local engines are for sam local and make local only; leave it empty on AWS", name, v, LocalSignal))
		return ""
	}
	return v
}

// Fail records a setting that is present but unusable (a key too short,
// say), to be reported by Err with the missing ones.
func (e *Env) Fail(err error) { e.errs = append(e.errs, err) }

// Err reports the required variables that were empty and the settings
// Fail recorded, nil when there were none.
func (e *Env) Err() error {
	errs := e.errs
	if len(e.missing) > 0 {
		errs = append([]error{fmt.Errorf("missing environment variables: %s", strings.Join(e.missing, ", "))}, errs...)
	}
	return errors.Join(errs...)
}
