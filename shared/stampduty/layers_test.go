package stampduty_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// domainLinks are the packages outside the standard library the domain
// may link: the duty rules engine, itself domain (duty-rules.md), and the
// RFC 8785 library it hashes a rule version's canonical JSON with.
var domainLinks = map[string]bool{
	"stampduty/shared/duty":   true,
	"github.com/gowebpki/jcs": true,
}

// TestDomainLinksOnlyTheStandardLibrary keeps the domain pure: the package
// and everything it links come from the standard library, but for
// domainLinks. So it reads no JSON token kinds (package jsonobj: the edge
// decodes requests into its values), calls no AWS and depends on no other
// package of the project.
func TestDomainLinksOnlyTheStandardLibrary(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var self bool
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "stampduty/shared/stampduty" {
			self = true
			continue
		}
		if domainLinks[pkg] {
			continue
		}
		t.Errorf("the domain links %s, which is not in the standard library", pkg)
	}
	if !self {
		t.Errorf("go list -deps did not list the domain itself:\n%s", out)
	}
}
