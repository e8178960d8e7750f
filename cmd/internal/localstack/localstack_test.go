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

	"stampduty/shared/config"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/storetest"
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

// TestSamLocal checks the `sam local` recipe (cmd/local/README.md "sam local") against
// what SAM CLI does, as read in its source (samcli/local/lambdafn/env_vars.py,
// samcli/commands/local/lib/local_lambda.py), since no Docker runs here:
// a function's environment is the template's variables, each overridden by
// the --env-vars file (its "Parameters" apply to every function, and only
// to variables the template declares), !Ref of a resource resolved to its
// logical id, plus AWS_SAM_LOCAL=true and the region and credentials of the
// session. With samconfig.toml's settings, every function must get the
// environment the local stack gives it (Env), with the engines on
// host.docker.internal at make local-db's ports (8000 and 9000), which
// add_host maps on Linux; and sam build must build in the source folder,
// not copy the repository once per function.
func TestSamLocal(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	conf := samconfig(t, filepath.Join(root, "samconfig.toml"))
	for _, cmd := range []string{"local_start_api", "local_invoke"} {
		c := conf["default."+cmd+".parameters"]
		for key, want := range map[string]string{
			"env_vars": `"events/sam-local-env.json"`,
			"add_host": `["host.docker.internal:host-gateway"]`,
			"region":   strconv.Quote(localdb.Region), // the local S3 signs for this region only
		} {
			if got := c[key]; got != want {
				t.Errorf("samconfig.toml %s %s = %s, want %s", cmd, key, got, want)
			}
		}
		if got, ok := c["parameter_overrides"]; ok {
			t.Errorf("samconfig.toml %s parameter_overrides = %s: no parameter points functions at local engines, and a command line's would replace it whole", cmd, got)
		}
	}
	if got := conf["default.build.parameters"]["build_in_source"]; got != "true" {
		t.Errorf("samconfig.toml build build_in_source = %q, want true: else SAM CLI copies the repository (CodeUri: .) once per function", got)
	}

	data, err := os.ReadFile(filepath.Join(root, "events/sam-local-env.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vars map[string]map[string]string
	if err := json.Unmarshal(data, &vars); err != nil {
		t.Fatal(err)
	}
	overrides := vars["Parameters"]
	env := storetest.New(t)
	declared := map[string]bool{}
	eng := Engines{DynamoDB: "http://host.docker.internal:8000", S3: "http://host.docker.internal:9000"}
	for _, f := range env.Template.Functions {
		want, err := Env(env.Template, f, eng)
		if err != nil {
			t.Fatal(err)
		}
		local := map[string]string{}
		for _, kv := range want {
			k, v, _ := strings.Cut(kv, "=")
			local[k] = v
		}
		names := map[string]string{}
		for _, tb := range env.Template.Tables {
			names[tb.LogicalID] = tb.LogicalID
		}
		for _, b := range env.Template.Buckets {
			names[b] = b
		}
		for _, c := range env.Template.UserPoolClients {
			names[c.LogicalID] = c.LogicalID
		}
		for _, p := range env.Template.UserPools {
			names[p.LogicalID] = p.LogicalID
		}
		for name, v := range f.Env {
			declared[name] = true
			got, ok := overrides[name]
			if !ok {
				if got, err = env.Template.Resolve(v, nil, names); err != nil {
					t.Errorf("%s: sam local cannot resolve %s (%v) and the env-vars file does not set it", f.LogicalID, name, err)
					continue
				}
			}
			if got != local[name] {
				t.Errorf("%s: sam local gives %s=%q, the local stack %q", f.LogicalID, name, got, local[name])
			}
		}
		if got := local[config.LocalSignal]; got != "true" {
			t.Errorf("%s: the local stack sets %s=%q, want true as SAM CLI does", f.LogicalID, config.LocalSignal, got)
		}
	}
	for name := range overrides {
		if !declared[name] {
			t.Errorf("the env-vars file sets %s, which no function declares: sam local ignores it", name)
		}
	}
	for fn := range vars {
		if fn != "Parameters" {
			t.Errorf("the env-vars file has a section %q: all its variables go in Parameters", fn)
		}
	}

	// The README's recipe runs sam local with the local pair (SAM CLI
	// passes the shell's credentials) and, on Linux, make local-db on
	// Docker's bridge (where host-gateway leads).
	readme, err := os.ReadFile(filepath.Join(root, "cmd", "local", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## sam local (with Docker)\n")
	section, _, _ = strings.Cut(section, "\n## ")
	creds := "AWS_ACCESS_KEY_ID=" + localdb.AccessKeyID + " AWS_SECRET_ACCESS_KEY=" + localdb.SecretAccessKey + " AWS_SESSION_TOKEN= sam local "
	for _, want := range []string{creds + "start-api", creds + "invoke", "LOCAL_DYNAMODB_ADDR=$BRIDGE:8000 LOCAL_S3_ADDR=$BRIDGE:9000 make local-db"} {
		if !strings.Contains(section, want) {
			t.Errorf("cmd/local/README.md's sam local section lacks %q", want)
		}
	}
}

// samconfig reads the sections of a samconfig.toml: its key = value lines
// under each [section], the values as written.
func samconfig(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{"": {}}
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			out[section] = map[string]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("samconfig.toml: cannot read %q", line)
			}
			out[section][strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
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
