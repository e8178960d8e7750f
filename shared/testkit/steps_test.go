package testkit

import (
	"slices"
	"testing"
)

// stepsFixture records the steps run on it.
type stepsFixture struct{ ran []string }

func (f *stepsFixture) firstStep(t *testing.T)        { f.ran = append(f.ran, t.Name()) }
func (f *stepsFixture) ADoneJobIsNotDue(t *testing.T) { f.ran = append(f.ran, t.Name()) }
func (f *stepsFixture) errLast(t *testing.T)          { f.ran = append(f.ran, t.Name()) }

func namedStep(*testing.T) {}

// TestSteps: each step runs once, in the order given, as a subtest named
// after its method or function with the first letter upper-cased.
func TestSteps(t *testing.T) {
	f := &stepsFixture{}
	Steps(t, f.firstStep, f.ADoneJobIsNotDue, f.errLast)
	if got, want := f.ran, []string{"TestSteps/FirstStep", "TestSteps/ADoneJobIsNotDue", "TestSteps/ErrLast"}; !slices.Equal(got, want) {
		t.Errorf("ran %q, want %q", got, want)
	}
	if got, want := stepName(namedStep), "NamedStep"; got != want {
		t.Errorf("stepName(namedStep) = %q, want %q", got, want)
	}
}
