package main

import (
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"go.yaml.in/yaml/v3"

	"stampduty/cmd/internal/apigw"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/localdb"
	"stampduty/shared/testkit/samtemplate"
	"stampduty/shared/testkit/storetest"
)

// exports returns the variables of the first "export A=x B=y" line of s.
func exports(t *testing.T, s string) map[string]string {
	t.Helper()
	for _, l := range lines(s) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "export "); ok {
			vars := map[string]string{}
			for _, kv := range strings.Fields(rest) {
				k, v, _ := strings.Cut(kv, "=")
				vars[k] = v
			}
			return vars
		}
	}
	t.Fatalf("no export line in:\n%s", s)
	return nil
}

// TestWithoutSettings runs commands with no AWS settings, no stack and no
// local engine, as on a fresh machine: each says what to set for AWS and
// for the local stack, and doing what it says works.
func TestWithoutSettings(t *testing.T) {
	var h *harness // nothing set

	t.Run("OrdersNameTheLocalOperatorPairAndFollowingItWorks", func(t *testing.T) {
		// The operator API as the local stack serves it: signatures checked
		// against its fixed pair, for its region, as its principal.
		api := &opsAPI{order: stampduty.OpsOrder{Owner: "alice", Caller: "alice", Order: stampduty.Order{DocumentID: "o1", CreatedAt: "2026-11-21T04:09:00.123Z", Livemode: true,
			Fulfillments: []stampduty.Fulfillment{{DocumentID: "f1", Status: stampduty.StatusPending}}}}}
		srv := newOpsServer(t, api, apigw.IAM{Region: localdb.Region, Account: "000000000000", Principal: localdb.OperatorARN,
			Credentials: awsCreds(localdb.OperatorKeyID, localdb.OperatorSecret)})

		r := h.run(t, "", nil, "orders", "queue")
		line := localdb.OperatorExports(localdb.OperatorKeyID, localdb.OperatorSecret, localdb.Region, "http://127.0.0.1:3000")
		for _, want := range []string{"--stack NAME", "--api-url URL", "AWS_REGION", line} {
			if r.code != 1 || !strings.Contains(r.stderr, want) {
				t.Errorf("exit %d, stderr does not say %q:\n%s", r.code, want, r.stderr)
			}
		}
		if strings.Contains(r.stderr, "DYNAMODB_ENDPOINT") {
			t.Errorf("an orders command points at DYNAMODB_ENDPOINT, which cannot sign for the API:\n%s", r.stderr)
		}
		// Follow it: the AWS variables as printed; the address is this
		// test's local API (it cannot own port 3000), as the README runner
		// substitutes it.
		vars := exports(t, r.stderr)
		if vars["STAMPDUTY_API_URL"] != "http://127.0.0.1:3000" {
			t.Errorf("STAMPDUTY_API_URL=%s, want the local stack's default address", vars["STAMPDUTY_API_URL"])
		}
		vars["STAMPDUTY_API_URL"] = srv.URL
		for k, v := range vars {
			if strings.HasPrefix(k, "AWS_") {
				t.Setenv(k, v)
			}
		}
		r = h.run(t, "", vars, "orders", "queue")
		if r.code != 0 || !strings.Contains(r.stdout, "o1") {
			t.Fatalf("after following the message: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if got := api.requests[len(api.requests)-1].RequestContext.Authorizer.IAM.UserARN; got != localdb.OperatorARN {
			t.Errorf("signed as %q, want the local operator %s", got, localdb.OperatorARN)
		}
	})

	t.Run("TheLocalEngineAloneDoesNotSignForTheAPI", func(t *testing.T) {
		// The old advice: DYNAMODB_ENDPOINT, whose dummy credentials the
		// API refuses with 403. Now no request is sent, and the message
		// names the pair the local API takes, at the address asked for.
		api := &opsAPI{}
		srv := newOpsServer(t, api, apigw.IAM{Region: localdb.Region, Principal: localdb.OperatorARN,
			Credentials: awsCreds(localdb.OperatorKeyID, localdb.OperatorSecret)})
		r := h.run(t, "", map[string]string{"DYNAMODB_ENDPOINT": localDynamoDB, "STAMPDUTY_API_URL": srv.URL}, "orders", "show", "o1")
		want := localdb.OperatorExports(localdb.OperatorKeyID, localdb.OperatorSecret, localdb.Region, srv.URL)
		if r.code != 1 || !strings.Contains(r.stderr, "no AWS credentials") || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d; want 1, no AWS credentials and %q:\n%s", r.code, want, r.stderr)
		}
		if n := api.count(); n != 0 {
			t.Errorf("%d requests reached the API, want none", n)
		}
	})

	t.Run("TablesNameTheLocalDynamoDBAndFollowingItWorks", func(t *testing.T) {
		// The tables as the local stack makes them: named by their logical
		// ids, seeded with the catalogue and the dev token.
		env := storetest.New(t)
		tmpl, err := samtemplate.Load(filepath.Join("..", "..", "template.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := localdb.CreateTables(context.Background(), env.Client, tmpl.Tables, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := localdb.Seed(context.Background(), env.DB(), env.DB().IDs("CountersTable", 10), localdb.LogicalNames, filepath.Join("..", "..", localdb.SampleCatalogue), true); err != nil {
			t.Fatal(err)
		}

		r := h.run(t, "", nil, "token", "list")
		for _, want := range []string{"--stack NAME", "TOKENS_TABLE", "AWS_REGION", "export DYNAMODB_ENDPOINT=http://127.0.0.1:8000"} {
			if r.code != 1 || !strings.Contains(r.stderr, want) {
				t.Errorf("exit %d, stderr does not say %q:\n%s", r.code, want, r.stderr)
			}
		}
		vars := exports(t, r.stderr)
		if vars["DYNAMODB_ENDPOINT"] != "http://127.0.0.1:8000" {
			t.Errorf("DYNAMODB_ENDPOINT=%s, want the local stack's default address", vars["DYNAMODB_ENDPOINT"])
		}
		vars["DYNAMODB_ENDPOINT"] = env.Endpoint // this test's engine, as the README runner substitutes it
		r = h.run(t, "", vars, "token", "list")
		if r.code != 0 || listRow(r.stdout, localdb.Hasher().Hash(localdb.DevToken)[:12]) == nil {
			t.Errorf("after following the message: exit %d, want the dev token listed\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
}

// awsCreds is a static key pair.
func awsCreds(id, secret string) aws.Credentials {
	return aws.Credentials{AccessKeyID: id, SecretAccessKey: secret}
}

// flagsOf returns the flags cmd defines (its own and the common ones), as
// its help lists them.
func flagsOf(t *testing.T, cmd *command) *flag.FlagSet {
	t.Helper()
	c := &cli{ctx: context.Background(), getenv: func(string) string { return "" }}
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	c.commonFlags(fs, cmd)
	if err := cmd.run(c, fs, []string{"--help"}); !errors.Is(err, errHelp) {
		t.Fatalf("%s --help: %v", cmd.name, err)
	}
	return fs
}

// fakeCloudFormation answers DescribeStacks as CloudFormation does (the
// query protocol: a signed form POST, an XML answer), from stacks by
// name, and records each request's form and Authorization header. There
// is no local CloudFormation engine, so this loopback server is what the
// SDK's real HTTP round trip reaches.
type fakeCloudFormation struct {
	mu       sync.Mutex
	stacks   map[string]describedStack
	requests []cfnRequest
}

// describedStack is what fakeCloudFormation says of a stack.
type describedStack struct{ outputs, params map[string]string }

// cfnRequest is one request fakeCloudFormation had.
type cfnRequest struct {
	form map[string]string
	auth string
}

func (f *fakeCloudFormation) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	form := map[string]string{}
	for k := range r.PostForm {
		form[k] = r.PostForm.Get(k)
	}
	f.mu.Lock()
	f.requests = append(f.requests, cfnRequest{form: form, auth: r.Header.Get("Authorization")})
	st, ok := f.stacks[form["StackName"]]
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/xml")
	if form["Action"] != "DescribeStacks" || !ok {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type>`+
			`<Code>ValidationError</Code><Message>Stack with id %s does not exist</Message></Error>`+
			`<RequestId>b9b4b8a2-0000-4000-8000-000000000000</RequestId></ErrorResponse>`, xmlText(form["StackName"]))
		return
	}
	var members strings.Builder
	for k, v := range st.outputs {
		fmt.Fprintf(&members, "<member><OutputKey>%s</OutputKey><OutputValue>%s</OutputValue><Description>d</Description></member>", xmlText(k), xmlText(v))
	}
	var params strings.Builder
	for k, v := range st.params {
		fmt.Fprintf(&params, "<member><ParameterKey>%s</ParameterKey><ParameterValue>%s</ParameterValue></member>", xmlText(k), xmlText(v))
	}
	fmt.Fprintf(w, `<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member>`+
		`<StackName>%s</StackName><StackId>arn:aws:cloudformation:us-east-1:123456789012:stack/%s/5b5c2f40-0000-4000-8000-000000000000</StackId>`+
		`<CreationTime>2026-11-20T10:00:00.000Z</CreationTime><StackStatus>UPDATE_COMPLETE</StackStatus>`+
		`<Parameters>%s</Parameters><Outputs>%s</Outputs></member></Stacks></DescribeStacksResult>`+
		`<ResponseMetadata><RequestId>b9b4b8a2-0000-4000-8000-000000000001</RequestId></ResponseMetadata></DescribeStacksResponse>`,
		xmlText(form["StackName"]), xmlText(form["StackName"]), params.String(), members.String())
}

// xmlText escapes s for XML character data.
func xmlText(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// describes returns how many DescribeStacks requests f has had.
func (f *fakeCloudFormation) describes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// TestStack points stampctl at a stack with --stack: it reads the API's
// address, the table names and the token key's parameter from the stack's
// outputs with a signed DescribeStacks (answered by fakeCloudFormation on
// loopback), and works on those tables (dynalite, reached through the
// SDK's AWS_ENDPOINT_URL_DYNAMODB as if it were AWS) and that API.
func TestStack(t *testing.T) {
	h := newHarness(t)
	api := &opsAPI{order: stampduty.OpsOrder{Owner: "alice", Caller: "alice", Order: stampduty.Order{DocumentID: "o1", CreatedAt: "2026-11-21T04:09:00.123Z", Livemode: true,
		Fulfillments: []stampduty.Fulfillment{{DocumentID: "f1", Status: stampduty.StatusPending}}}}}
	srv := newOpsServer(t, api, opsIAM)
	// A server that is not the API: only a wrong precedence reaches it.
	wrong := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"message":"the wrong API"}`, http.StatusTeapot)
	}))
	defer wrong.Close()
	outputs := map[string]string{"ApiUrl": srv.URL, "FilesBucketName": "files"}
	for _, spec := range []tableSpec{articlesSpec, tokensSpec, countersSpec, ordersSpec, webhooksSpec, deliveriesSpec} {
		outputs[spec.output] = h.env.Table(spec.logicalID)
	}
	old := map[string]string{"ApiUrl": srv.URL, "TokensTableName": h.env.Table("TokensTable")} // deployed before the webhooks
	cfn := &fakeCloudFormation{stacks: map[string]describedStack{
		"demo": {outputs: outputs, params: map[string]string{"TokenHashKeyParameter": "/demo/token-hash-key"}},
		"old":  {outputs: old},
	}}
	cfnSrv := httptest.NewServer(cfn)
	defer cfnSrv.Close()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIAOPS", "AWS_SECRET_ACCESS_KEY": "ops-secret", "AWS_REGION": "us-east-1",
		"AWS_ENDPOINT_URL_CLOUDFORMATION": cfnSrv.URL, "AWS_ENDPOINT_URL_DYNAMODB": h.env.Endpoint,
	} {
		t.Setenv(k, v) // the AWS SDK's own variables, read from the process
	}
	// Nothing but the stack: no engine, no table or API variables.
	none := map[string]string{"DYNAMODB_ENDPOINT": "", "ARTICLES_TABLE": "", "TOKENS_TABLE": "", "COUNTERS_TABLE": ""}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range none {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}

	t.Run("DescribeStacksIsSignedAndReadOncePerRun", func(t *testing.T) {
		before := cfn.describes()
		r := h.run(t, "", with("TOKEN_HASH_KEY", localdb.TokenHashKey), "articles", "import", "--stack", "demo",
			filepath.Join("..", "..", localdb.SampleCatalogue))
		if r.code != 0 || !strings.Contains(r.stdout, "imported") {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if n := cfn.describes() - before; n != 1 {
			t.Errorf("%d DescribeStacks for one command, want 1", n)
		}
		req := cfn.requests[len(cfn.requests)-1]
		if req.form["Action"] != "DescribeStacks" || req.form["Version"] != "2010-05-15" || req.form["StackName"] != "demo" {
			t.Errorf("request form %v", req.form)
		}
		if !regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=AKIAOPS/\d{8}/us-east-1/cloudformation/aws4_request`).MatchString(req.auth) {
			t.Errorf("Authorization %q, want SigV4 for cloudformation in us-east-1", req.auth)
		}
		arts, err := h.db.Articles(h.env.Table("ArticlesTable")).All(context.Background())
		if err != nil || len(arts) == 0 {
			t.Errorf("the stack's articles table has %d articles, %v", len(arts), err)
		}
	})
	t.Run("TokenCommandsUseTheStacksTable", func(t *testing.T) {
		r := h.run(t, "", with("TOKEN_HASH_KEY", localdb.TokenHashKey), "token", "create", "--owner", "stacked", "--stack", "demo")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		secret := lines(r.stdout)[len(lines(r.stdout))-1]
		if got, err := h.db.Tokens(h.env.Table("TokensTable")).Token(context.Background(), localdb.Hasher().Hash(secret)); err != nil || got.Owner != "stacked" {
			t.Errorf("the stack's tokens table holds %+v, %v", got, err)
		}
		if r := h.run(t, "", with("STAMPDUTY_STACK", "demo"), "token", "list"); r.code != 0 || !strings.Contains(r.stdout, "stacked") {
			t.Errorf("STAMPDUTY_STACK: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		for _, args := range [][]string{{"--stack", "demo", "token", "list"}, {"-stack=demo", "token", "list"}} {
			if r := h.run(t, "", with(), args...); r.code != 0 || !strings.Contains(r.stdout, "stacked") {
				t.Errorf("%s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
			}
		}
	})
	t.Run("TheTokenKeyIsTheStacksParameter", func(t *testing.T) {
		for _, tc := range []struct {
			stack, variable, want string
		}{
			{"demo", "", "/demo/token-hash-key"},
			{"demo", "/mine", "/mine"},
			{"old", "", "/stamp-duty/token-hash-key"}, // a stack without the parameter: the template's default
			{"", "", "/stamp-duty/token-hash-key"},
		} {
			c := &cli{ctx: context.Background(), getenv: func(k string) string { return with("TOKEN_HASH_KEY_PARAMETER", tc.variable)[k] },
				stackFlag: tc.stack}
			if got, err := c.hashKeyParameter(); err != nil || got != tc.want {
				t.Errorf("stack %q, TOKEN_HASH_KEY_PARAMETER=%q: %q, %v; want %s", tc.stack, tc.variable, got, err, tc.want)
			}
		}
	})
	t.Run("OrdersCallTheStacksApiUrl", func(t *testing.T) {
		before := api.count()
		r := h.run(t, "", with(), "orders", "queue", "--stack", "demo")
		if r.code != 0 || !strings.Contains(r.stdout, "o1") || api.count() != before+1 {
			t.Errorf("exit %d, %d requests\n%s%s", r.code, api.count()-before, r.stdout, r.stderr)
		}
	})
	t.Run("APIURLFlagWinsOverTheVariableAndTheStack", func(t *testing.T) {
		before, described := api.count(), cfn.describes()
		r := h.run(t, "", with("STAMPDUTY_API_URL", wrong.URL), "orders", "show", "o1", "--stack", "demo", "--api-url", srv.URL)
		if r.code != 0 || api.count() != before+1 {
			t.Errorf("exit %d, %d requests\n%s%s", r.code, api.count()-before, r.stdout, r.stderr)
		}
		if cfn.describes() != described {
			t.Errorf("the stack was read although --api-url named the API")
		}
		r = h.run(t, "", with("STAMPDUTY_API_URL", srv.URL), "orders", "show", "o1", "-api-url", wrong.URL)
		if r.code != 1 || !strings.Contains(r.stderr, "the wrong API") {
			t.Errorf("-api-url (one dash): exit %d, want the flag's API\n%s", r.code, r.stderr)
		}
	})
	t.Run("ATableVariableWinsOverTheStack", func(t *testing.T) {
		r := h.run(t, "", with("TOKENS_TABLE", "NoSuchTable"), "token", "list", "--stack", "demo")
		if r.code != 1 || !strings.Contains(r.stderr, "NoSuchTable (TOKENS_TABLE)") {
			t.Errorf("exit %d\n%s", r.code, r.stderr)
		}
	})
	t.Run("ErrUnknownStack", func(t *testing.T) {
		r := h.run(t, "", with(), "token", "list", "--stack", "nope")
		if r.code != 1 || !strings.Contains(r.stderr, "stack nope does not exist in region us-east-1") {
			t.Errorf("exit %d\n%s", r.code, r.stderr)
		}
	})
	t.Run("ErrStackWithoutTheOutput", func(t *testing.T) {
		r := h.run(t, "", with(), "webhooks", "failing", "--stack", "old")
		if r.code != 1 || !strings.Contains(r.stderr, "stack old (us-east-1) has no output WebhooksTableName") {
			t.Errorf("exit %d\n%s", r.code, r.stderr)
		}
	})
	t.Run("ErrStackAndLocalEngine", func(t *testing.T) {
		r := h.run(t, "", with("DYNAMODB_ENDPOINT", h.env.Endpoint), "token", "list", "--stack", "demo")
		if r.code != 2 || !strings.Contains(r.stderr, "use one of them") {
			t.Errorf("exit %d\n%s", r.code, r.stderr)
		}
	})
}

// TestStackOutputsAreTheTemplates checks that the outputs and parameter
// stampctl reads from a stack are template.yaml's: each table output a !Ref
// of its table, ApiUrl and TokenHashKeyParameter present.
func TestStackOutputsAreTheTemplates(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Parameters map[string]yaml.Node `yaml:"Parameters"`
		Outputs    map[string]struct {
			Value yaml.Node `yaml:"Value"`
		} `yaml:"Outputs"`
	}
	if err := yaml.Unmarshal(b, &tmpl); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []tableSpec{articlesSpec, tokensSpec, countersSpec, ordersSpec, webhooksSpec, deliveriesSpec} {
		o, ok := tmpl.Outputs[spec.output]
		if !ok || o.Value.Tag != "!Ref" || o.Value.Value != spec.logicalID {
			t.Errorf("output %s = %s %q, want !Ref %s", spec.output, o.Value.Tag, o.Value.Value, spec.logicalID)
		}
	}
	if _, ok := tmpl.Outputs[apiURLOutput]; !ok {
		t.Errorf("no output %s", apiURLOutput)
	}
	if _, ok := tmpl.Parameters[hashKeyParam]; !ok {
		t.Errorf("no parameter %s", hashKeyParam)
	}
}

// TestHelp: every command has its own help (exit 0, on stdout) naming its
// flags as --flag and the environment it reads; help, --help and -h give
// the overview; no help text writes a flag with one dash.
func TestHelp(t *testing.T) {
	var h *harness
	singleDash := regexp.MustCompile(`(^|[\s\[(` + "`" + `])-[a-z][a-z-]+`)
	for i := range commands {
		cmd := &commands[i]
		t.Run(strings.ReplaceAll(cmd.name, " ", "-"), func(t *testing.T) {
			words := strings.Fields(cmd.name)
			var first string
			for _, args := range [][]string{append(words, "--help"), append(words, "-h"), append([]string{"help"}, words...)} {
				r := h.run(t, "", nil, args...)
				if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "usage: stampctl "+cmd.name) {
					t.Fatalf("stampctl %s: exit %d, stderr %q, stdout:\n%s", strings.Join(args, " "), r.code, r.stderr, r.stdout)
				}
				if first == "" {
					first = r.stdout
				} else if r.stdout != first {
					t.Errorf("stampctl %s differs from %s --help", strings.Join(args, " "), cmd.name)
				}
			}
			// Every flag the command defines: in its help, and in the
			// synopsis the overview shows.
			fs := flagsOf(t, cmd)
			fs.VisitAll(func(f *flag.Flag) {
				if !strings.Contains(first, "  --"+f.Name) {
					t.Errorf("help does not list --%s", f.Name)
				}
				if !slices.Contains(commonFlagNames, f.Name) && !strings.Contains(cmd.args, "--"+f.Name) {
					t.Errorf("synopsis %q does not show --%s", cmd.args, f.Name)
				}
			})
			var want []string
			if cmd.reads.api {
				want = append(want, "STAMPDUTY_API_URL", "--api-url URL", "AWS_ACCESS_KEY_ID=AKIALOCALOPERATOR000")
			}
			for _, spec := range cmd.reads.tables {
				want = append(want, spec.envVar, "DYNAMODB_ENDPOINT", "export DYNAMODB_ENDPOINT=http://127.0.0.1:8000")
			}
			if cmd.reads.hashKey {
				want = append(want, "TOKEN_HASH_KEY", "TOKEN_HASH_KEY_PARAMETER")
			}
			for _, w := range append(want, "--stack NAME", "STAMPDUTY_STACK", "AWS_PROFILE", "Environment:") {
				if !strings.Contains(first, w) {
					t.Errorf("help does not say %q:\n%s", w, first)
				}
			}
			if !cmd.reads.api && strings.Contains(first, "--api-url") {
				t.Errorf("a command that calls no API takes --api-url")
			}
			if m := singleDash.FindString(first); m != "" {
				t.Errorf("help writes a flag with one dash: %q", m)
			}
		})
	}
	for _, arg := range []string{"help", "--help", "-h", "-help"} {
		t.Run("Overview"+arg, func(t *testing.T) {
			if r := h.run(t, "", nil, arg); r.code != 0 || r.stdout != overview("") || r.stderr != "" {
				t.Errorf("exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
			}
		})
	}
	t.Run("OverviewWritesFlagsWithTwoDashes", func(t *testing.T) {
		if m := singleDash.FindString(overview("")); m != "" {
			t.Errorf("the overview writes a flag with one dash: %q", m)
		}
	})
	t.Run("GroupHelp", func(t *testing.T) {
		r := h.run(t, "", nil, "orders", "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "stampctl orders queue") || strings.Contains(r.stdout, "stampctl token create") {
			t.Errorf("exit %d\n%s", r.code, r.stdout)
		}
	})
}

// TestCloudFormationNotLinkedIntoFunctions keeps the CloudFormation client,
// which only stampctl's --stack uses, out of the Lambda binaries.
func TestCloudFormationNotLinkedIntoFunctions(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../functions/...").Output()
	if err != nil {
		t.Fatalf("go list -deps ./functions/...: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps ./functions/... listed %d packages", len(deps))
	}
	for _, dep := range deps {
		if strings.HasPrefix(dep, "github.com/aws/aws-sdk-go-v2/service/cloudformation") || dep == "stampduty/cmd/stampctl" {
			t.Errorf("a function links %s", dep)
		}
	}
}

// TestReadmeSection checks what the docs say of stampctl, the README's
// section and cmd/stampctl/README.md together: the messages they quote are
// what stampctl prints without settings, the help they expect is the
// command's, and their stampctl lines write flags with two dashes.
func TestReadmeSection(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Operator CLI: stampctl\n")
	if !ok {
		t.Fatal("README.md has no section ## Operator CLI: stampctl")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	own, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	section += "\n" + string(own)
	var h *harness
	for _, args := range [][]string{{"orders", "queue"}, {"token", "list"}} {
		r := h.run(t, "", nil, args...)
		if quoted := "$ go run ./cmd/stampctl " + strings.Join(args, " ") + "\n" + r.stderr; !strings.Contains(section, quoted) {
			t.Errorf("the docs do not quote what stampctl %s prints without settings:\n%s", strings.Join(args, " "), quoted)
		}
	}
	if r := h.run(t, "", nil, "orders", "queue", "--help"); !strings.Contains(section, "# expect: "+lines(r.stdout)[0]+"\n") {
		t.Errorf("the docs do not expect the help's first line %q", lines(r.stdout)[0])
	}
	singleDash := regexp.MustCompile(`(^|[\s\[(` + "`" + `])-[a-z][a-z-]+`)
	for _, l := range lines(section) {
		if _, after, ok := strings.Cut(l, "stampctl "); ok {
			after, _, _ = strings.Cut(after, "|") // what other commands take is theirs
			if m := singleDash.FindString(after); m != "" && !strings.Contains(after, "curl") {
				t.Errorf("a stampctl flag with one dash, %q, in: %s", m, l)
			}
		}
	}
}
