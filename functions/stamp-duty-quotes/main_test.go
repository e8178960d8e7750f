package main

import (
	"testing"

	"stampduty/shared/testkit/storetest"
)

// TestMain runs the tests against the local engines (dynalite).
func TestMain(m *testing.M) { storetest.Main(m) }
