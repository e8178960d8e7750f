// Package config reads a function's settings from its environment, as
// template.yaml sets it, and reports every missing variable at once.
package config

import (
	"errors"
	"fmt"
	"strings"
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
