// Package config reads a function's settings from its environment, as
// template.yaml sets it, and reports every missing variable at once.
package config

import (
	"fmt"
	"strings"
)

// Env reads environment variables through a lookup function (os.Getenv in
// main, a recording function in tests).
type Env struct {
	getenv  func(string) string
	missing []string
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

// Err reports the required variables that were empty, nil when none was.
func (e *Env) Err() error {
	if len(e.missing) == 0 {
		return nil
	}
	return fmt.Errorf("missing environment variables: %s", strings.Join(e.missing, ", "))
}
