package main

import (
	"testing"

	"stampduty/shared/testkit/functest"
)

// TestMain runs the tests against the local engines (dynalite), which
// functest needs.
func TestMain(m *testing.M) { functest.Main(m) }
