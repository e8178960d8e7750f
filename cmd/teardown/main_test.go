package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stampduty/cmd/internal/teardown"
)

// TestFindGoneStack: find of a stack CloudFormation no longer has is
// errGone (status 3: make destroy skips sam delete and deletes what the
// file of an earlier run names) when that file exists, and a failure
// naming the stack when it does not. CloudFormation is a local stand-in
// answering as it does for a stack that does not exist.
func TestFindGoneStack(t *testing.T) {
	cfn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type>` +
			`<Code>ValidationError</Code><Message>Stack with id old-dev does not exist</Message></Error><RequestId>1</RequestId></ErrorResponse>`))
	}))
	defer cfn.Close()
	for k, v := range map[string]string{"AWS_ENDPOINT_URL_CLOUDFORMATION": cfn.URL, "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_REGION": "us-east-1", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull, "AWS_PROFILE": ""} {
		t.Setenv(k, v)
	}
	file := filepath.Join(t.TempDir(), "old-dev.json")
	var out bytes.Buffer

	err := run(context.Background(), []string{"find", "--stack", "old-dev", "--out", file}, &out)
	if err == nil || errors.Is(err, errGone) || !strings.Contains(err.Error(), "old-dev") {
		t.Errorf("find without a file from before = %v, want a failure naming the stack", err)
	}
	if err := teardown.Save(file, teardown.Data{Stack: "old-dev", Resources: []teardown.Resource{{LogicalID: "OrdersTable", Type: teardown.TableType, PhysicalID: "t"}}}); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"find", "--stack", "old-dev", "--out", file}, &out); !errors.Is(err, errGone) {
		t.Errorf("find with a file from before = %v, want errGone", err)
	}
	if d, err := teardown.Load(file); err != nil || len(d.Resources) != 1 {
		t.Errorf("the file from before is now %+v, %v: want it kept", d, err)
	}
}
