package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// mk runs make in the module root with args, and returns its output and
// whether it succeeded. SAM=true stands in for the SAM CLI where a target
// must get past its check without running anything (-n prints, runs nothing).
func mk(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "TRACING=", "STACK=", "REGION=", "DELETE_DATA=", "FN=")
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// inOrder reports whether out holds each of want, in that order.
func inOrder(out string, want ...string) bool {
	for _, w := range want {
		i := strings.Index(out, w)
		if i < 0 {
			return false
		}
		out = out[i+len(w):]
	}
	return true
}

// TestMakeTargets: the deployed stack's daily commands, as make -n prints
// them (the SAM CLI is not needed to print them): one TRACING sets both the
// build tag and the stack's Tracing parameter; logs names a function's log
// group; sync refuses any stack not named -dev; destroy finds the tables
// and bucket before sam delete (skipped when find says the stack is gone
// already) and deletes them after, only with the stack's name typed again;
// without the SAM CLI each says so.
func TestMakeTargets(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cases := map[string]struct {
		args []string
		ok   bool
		want []string
	}{
		"DeployOff": {args: []string{"-n", "deploy"}, ok: true,
			want: []string{"TRACING=off sam build", "sam deploy --stack-name stamp-duty-service --region ap-south-1 --parameter-overrides Tracing=PassThrough"}},
		"DeployOn": {args: []string{"-n", "deploy", "TRACING=on", "STACK=me-dev"}, ok: true,
			want: []string{"TRACING=on sam build", "sam deploy --stack-name me-dev --region ap-south-1 --parameter-overrides Tracing=Active"}},
		"BuildOff": {args: []string{"-n", "build-GetOrderFunction"}, ok: true,
			want: []string{"go build -tags lambda.norpc -trimpath"}},
		"BuildOn": {args: []string{"-n", "build-GetOrderFunction", "TRACING=on"}, ok: true,
			want: []string{"go build -tags lambda.norpc,tracing -trimpath"}},
		"TracingNeitherOnNorOff": {args: []string{"-n", "build", "TRACING=yes"},
			want: []string{"TRACING=yes: say TRACING=on or TRACING=off"}},
		"Logs": {args: []string{"-n", "logs", "FN=CreateOrderFunction"}, ok: true,
			want: []string{"sam logs --region ap-south-1 --tail --cw-log-group /aws/lambda/stamp-duty-service/CreateOrderFunction"}},
		"LogsOfTheAPI": {args: []string{"-n", "logs", "FN=api", "STACK=me-dev"}, ok: true,
			want: []string{"--cw-log-group /aws/apigateway/me-dev/access"}},
		"LogsOfNoFunction": {args: []string{"logs", "FN=CreateOrder", "SAM=true"},
			want: []string{"logs: FN=<LogicalId> of a function"}},
		"SyncDev": {args: []string{"-n", "sync", "STACK=alice-dev", "TRACING=on"}, ok: true,
			want: []string{"TRACING=on sam sync --watch --stack-name alice-dev --region ap-south-1 --parameter-overrides Tracing=Active"}},
		"SyncProduction": {args: []string{"sync", "SAM=true"},
			want: []string{"sync: refused: STACK=stamp-duty-service is not a development stack"}},
		"SyncUnnamed": {args: []string{"sync", "SAM=true", "STACK=alice"},
			want: []string{"sync: refused: STACK=alice"}},
		"Destroy": {args: []string{"-n", "destroy", "STACK=old-dev"}, ok: true,
			want: []string{"sam delete --stack-name old-dev --region ap-south-1 --no-prompts"}},
		"DestroyWithData": {args: []string{"-n", "destroy", "STACK=old-dev", "DELETE_DATA=old-dev"}, ok: true,
			want: []string{"go build -o .build/teardown/teardown ./cmd/teardown",
				".build/teardown/teardown find --stack old-dev --region ap-south-1 --out .build/teardown/old-dev.json; rc=$?",
				"if [ $rc = 0 ]; then sam delete --stack-name old-dev --region ap-south-1 --no-prompts; elif [ $rc != 3 ]; then exit $rc; fi",
				".build/teardown/teardown delete --from .build/teardown/old-dev.json --region ap-south-1 --confirm old-dev"}},
		"DestroyDataOfAnotherName": {args: []string{"destroy", "STACK=old-dev", "DELETE_DATA=stamp-duty-service", "SAM=true"},
			want: []string{"destroy: refused: DELETE_DATA=stamp-duty-service is not the stack's name (old-dev)"}},
		"NoSAMCLI": {args: []string{"deploy", "SAM=/nonexistent/sam"},
			want: []string{"the SAM CLI (/nonexistent/sam) is not on PATH"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, ok := mk(t, tc.args...)
			if ok != tc.ok || !inOrder(out, tc.want...) {
				t.Errorf("make %s: succeeded %v, printed\n%s\nwant succeeded %v, printing in order %q", strings.Join(tc.args, " "), ok, out, tc.ok, tc.want)
			}
			if !tc.ok && strings.Contains(out, "sam delete") {
				t.Errorf("make %s printed a sam delete it refused", strings.Join(tc.args, " "))
			}
		})
	}
}
