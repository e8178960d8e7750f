package staff

// This file holds the roles: the pool's groups admin and operator, and
// none, nested by their rights.

import (
	"slices"
	"strings"

	"stampduty/shared/stampduty"
)

// Role is what a person may do in the console.
type Role string

// The roles: the pool's two groups, and none.
const (
	Admin    Role = "admin"
	Operator Role = "operator"
	None     Role = "none"
)

// groups are the pool's role groups, the highest rights first.
var groups = []Role{Admin, Operator}

// rank orders roles by their rights.
func (r Role) rank() int {
	switch r {
	case Admin:
		return 2
	case Operator:
		return 1
	}
	return 0
}

// ParseRole returns the role named s (admin, operator or none).
func ParseRole(s string) (Role, error) {
	switch r := Role(strings.ToLower(strings.TrimSpace(s))); r {
	case Admin, Operator, None:
		return r, nil
	}
	return "", stampduty.Invalid([]stampduty.FieldError{{Path: "role", Message: "role must be admin, operator or none"}})
}

// roleOf returns the role the groups give: the highest of them.
func roleOf(gs []Role) Role {
	for _, g := range groups {
		if slices.Contains(gs, g) {
			return g
		}
	}
	return None
}
