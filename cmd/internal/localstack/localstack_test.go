package localstack

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"stampduty/shared/store/localdb"
	"stampduty/shared/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func TestEnv(t *testing.T) {
	env := storetest.New(t)
	for fn, wants := range map[string][]string{
		"CreateOrderFunction": {"ORDERS_TABLE=OrdersTable", "TOKENS_TABLE=TokensTable", "DYNAMODB_ENDPOINT=http://127.0.0.1:9", "AWS_REGION=us-east-1"},
		"GetOrderFunction":    {"FILES_BUCKET=filesbucket", "S3_ENDPOINT=http://127.0.0.1:10"},
	} {
		f, _ := env.Template.Function(fn)
		got, err := Env(env.Template, f, Engines{DynamoDB: "http://127.0.0.1:9", S3: "http://127.0.0.1:10"})
		if err != nil {
			t.Fatal(err)
		}
		joined := strings.Join(got, "\n")
		for _, want := range wants {
			if !strings.Contains(joined, want) {
				t.Errorf("%s env lacks %s:\n%s", fn, want, joined)
			}
		}
	}
}

// TestSamLocalEnv: sam local, which does not resolve SSM references, gets
// the same token hashing key as the local stack, through the env-vars file
// samconfig.toml names.
func TestSamLocalEnv(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	data, err := os.ReadFile(filepath.Join(root, "events/sam-local-env.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vars struct{ Parameters map[string]string }
	if err := json.Unmarshal(data, &vars); err != nil {
		t.Fatal(err)
	}
	if got, want := vars.Parameters["TOKEN_HASH_KEY"], localdb.TokenHashKey; got != want {
		t.Errorf("TOKEN_HASH_KEY = %q, want the local stack's %q", got, want)
	}
	if got, want := vars.Parameters["FILES_BUCKET"], BucketName("FilesBucket"); got != want {
		t.Errorf("FILES_BUCKET = %q, want the local stack's %q", got, want)
	}
	cfg, _ := os.ReadFile(filepath.Join(root, "samconfig.toml"))
	if n := strings.Count(string(cfg), `env_vars = "events/sam-local-env.json"`); n != 2 {
		t.Errorf("samconfig.toml names the env-vars file %d times, want 2 (start-api and invoke)", n)
	}
}

func TestBuild(t *testing.T) {
	// Ending ctx ends the build's every process, not make alone: a go build
	// left running would write into a folder its caller is removing.
	t.Run("CancelEndsTheWholeBuild", func(t *testing.T) {
		root, out := t.TempDir(), t.TempDir()
		makefile := "build-Slow:\n\tsleep 60 && echo $(ARTIFACTS_DIR) >/dev/null\n"
		if err := os.WriteFile(filepath.Join(root, "Makefile"), []byte(makefile), 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := Build(ctx, root, out, "Slow", false)
			done <- err
		}()
		for len(processesWith(out)) == 0 {
			select {
			case err := <-done:
				t.Fatalf("Build ended before its recipe ran: %v", err)
			case <-time.After(10 * time.Millisecond):
			}
		}
		cancel()
		select {
		case err := <-done:
			if err == nil {
				t.Error("Build = nil after ctx ended, want an error")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Build still running 10s after ctx ended")
		}
		deadline := time.Now().Add(2 * time.Second)
		for left := processesWith(out); len(left) > 0; left = processesWith(out) {
			if time.Now().After(deadline) {
				t.Fatalf("processes left running: %v", left)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// processesWith returns the command lines that contain s, of processes other than this one.
func processesWith(s string) []string {
	files, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || filepath.Base(filepath.Dir(f)) == strconv.Itoa(os.Getpid()) {
			continue
		}
		if cmdline := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cmdline, s) {
			found = append(found, cmdline)
		}
	}
	return found
}
