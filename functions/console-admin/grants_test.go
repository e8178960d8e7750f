package main

import (
	"maps"
	"slices"
	"testing"

	"stampduty/shared/testkit/functest"
	"stampduty/shared/testkit/storetest"
)

// exercises run each area's routes (callers, catalogue, ...) as an admin,
// keyed by area. An area's test file adds its own in an init, so that a
// new area is checked without editing this file.
var exercises = map[string]func(t *testing.T, s *functest.Stack){}

// TestGrants: the function's grants in template.yaml are exactly the
// DynamoDB actions its routes use, all areas together (one function
// serves them all, so no area's calls alone use every grant): each action
// used is granted, each granted action is used, each variable is read.
func TestGrants(t *testing.T) {
	s := functest.New(t, "ConsoleAdminFunction", wire)
	var calls []storetest.ProxyCall
	for _, area := range slices.Sorted(maps.Keys(exercises)) {
		s.Proxy.Take()
		exercises[area](t, s)
		calls = append(calls, s.Proxy.Take()...)
	}
	s.CheckTemplate(calls)
}
