package testkit

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Steps runs each step, a method value or a named function, as a subtest
// of t in the order given, named after it with the first letter
// upper-cased: f.dueFromItsNext runs as t.Run("DueFromItsNext",
// f.dueFromItsNext). It is for a test whose steps share one fixture, each
// leaving it as the next expects; as with t.Run, a failed step does not
// stop the next.
func Steps(t *testing.T, steps ...func(*testing.T)) {
	t.Helper()
	for _, step := range steps {
		t.Run(stepName(step), step)
	}
}

// stepName returns the subtest name Steps gives step.
func stepName(step func(*testing.T)) string {
	name := runtime.FuncForPC(reflect.ValueOf(step).Pointer()).Name()
	name = strings.TrimSuffix(name[strings.LastIndexByte(name, '.')+1:], "-fm") // a method value's wrapper
	r, n := utf8.DecodeRuneInString(name)
	return string(unicode.ToUpper(r)) + name[n:]
}
