package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stampduty/shared/testkit/localdb"
)

// TestStopsEverything: when the stack stops, no function instance or
// database process is left.
func TestStopsEverything(t *testing.T) {
	s, _, stop := startStack(t, nil)
	resp, err := http.Get(s.URL + "/api/stamp-duty-datas")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tmp, dbPid, cognitoPid := s.tmp, s.db.Pid(), s.cognito.Pid()
	stop()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("build directory %s left behind", tmp)
	}
	if alive(dbPid) {
		t.Errorf("dynalite (pid %d) still running", dbPid)
	}
	if alive(cognitoPid) {
		t.Errorf("cognito-local (pid %d) still running", cognitoPid)
	}
	if _, err := http.Get(s.URL + "/api/stamp-duty-datas"); err == nil {
		t.Error("API still answering")
	}
	if got := s.pools["ListArticlesFunction"].Live(); got != 0 {
		t.Errorf("%d function instances still live", got)
	}
}

// TestGivenEngineAndCatalogue: with DYNAMODB_ENDPOINT the stack uses that
// engine and starts none; with ARTICLES it seeds that file instead of the sample.
func TestGivenEngineAndCatalogue(t *testing.T) {
	db, err := localdb.Start(context.Background(), moduleRoot(t), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Stop()
	file := filepath.Join(t.TempDir(), "one.json")
	os.WriteFile(file, []byte(`[{"purpose_name":"Will","state":"Goa","min":5,"max":5,"fixed":5,"toFollowConsiderationPrice":false,"amountPercentConsideration":null}]`), 0o600)
	s, _, stop := startStack(t, map[string]string{"LOCAL_ADDR": "127.0.0.1:0", "DYNAMODB_ENDPOINT": db.Endpoint, "LOCAL_S3_ADDR": "127.0.0.1:0", "LOCAL_COGNITO_ADDR": "127.0.0.1:0", "ARTICLES": file})
	defer stop()
	if s.db != nil || s.Endpoint != db.Endpoint {
		t.Errorf("stack started its own engine (%s), want the given %s", s.Endpoint, db.Endpoint)
	}
	resp, err := http.Get(s.URL + "/api/stamp-duty-datas")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"purpose_name":"Will"`) || !strings.Contains(string(body), `"total":1`) {
		t.Errorf("articles = %s, want only the ARTICLES file's", body)
	}
}
