package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/samtemplate"
)

// TestBannerPrintsTheOperatorLine checks that the banner prints the
// operator line stampctl names when it has nowhere to go
// (localdb.OperatorExports with the fixed local pair), and that the pair
// is what the operator routes accept when the environment names none.
func TestBannerPrintsTheOperatorLine(t *testing.T) {
	tmpl, err := samtemplate.Load(filepath.Join(moduleRoot(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := &stack{URL: "http://127.0.0.1:3000", Endpoint: "http://127.0.0.1:8000", S3Endpoint: "http://127.0.0.1:9000",
		IAM: operatorKeys(func(string) string { return "" }), tmpl: tmpl, out: &out}
	s.banner()
	want := "  " + localdb.OperatorExports(localdb.OperatorKeyID, localdb.OperatorSecret, localdb.Region, "http://127.0.0.1:3000") + "\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("the banner does not print\n%s\n%s", want, out.String())
	}
	if got := s.IAM.Credentials; got.AccessKeyID != localdb.OperatorKeyID || got.SecretAccessKey != localdb.OperatorSecret || s.IAM.Principal != localdb.OperatorARN {
		t.Errorf("operator routes accept %s as %s, want the local pair", got.AccessKeyID, s.IAM.Principal)
	}
}
