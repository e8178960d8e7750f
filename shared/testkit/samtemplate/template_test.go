package samtemplate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"stampduty/shared/config"
)

// The project's template, checked against the repository. What each
// function does with its environment and its IAM policy is checked by the
// function's own tests (functest.CheckTemplate), which drive it.

// load reads template.yaml, and the spec of it that only these checks read.
func load(t *testing.T) (*Template, *spec, string) {
	t.Helper()
	root, err := Root(".")
	if err != nil {
		t.Fatal(err)
	}
	data := templateText(t)
	tmpl, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl, readSpec(t, data), root
}

// The parts of the template that only these checks read, parsed here from
// the same document as Parse's.

// spec is what the checks read beyond Template.
type spec struct {
	// ParameterSpecs maps each parameter to its declaration.
	ParameterSpecs map[string]Parameter
	// Resources maps each logical id to its resource type.
	Resources map[string]string
	// Outputs maps each output name to its value.
	Outputs   map[string]Value
	LogGroups []LogGroup
	// Cors, Throttle and AccessLog are the HttpApi's CorsConfiguration,
	// DefaultRouteSettings and AccessLogSettings, nil when absent.
	Cors      *Cors
	Throttle  *Throttle
	AccessLog *AccessLog
	Functions map[string]functionSpec
	Tables    map[string]tableSpec
}

// Parameter is the declaration of a template parameter.
type Parameter struct {
	Type          string   `yaml:"Type"`
	Default       string   `yaml:"Default"`
	AllowedValues []string `yaml:"AllowedValues"`
	// MinValue and MaxValue bound a Number parameter, "" when unbounded.
	MinValue string `yaml:"MinValue"`
	MaxValue string `yaml:"MaxValue"`
}

// Throttle is the throttling an HttpApi applies to every route by default.
type Throttle struct {
	BurstLimit Value `yaml:"ThrottlingBurstLimit"`
	RateLimit  Value `yaml:"ThrottlingRateLimit"`
}

// AccessLog is an HttpApi's access logging: where to and in what format.
type AccessLog struct {
	DestinationArn Value `yaml:"DestinationArn"`
	Format         Value `yaml:"Format"`
}

// LogGroup is an AWS::Logs::LogGroup.
type LogGroup struct {
	LogicalID       string `yaml:"-"`
	Name            Value  `yaml:"LogGroupName"`
	RetentionInDays Value  `yaml:"RetentionInDays"`
}

// Cors is an HttpApi's CorsConfiguration.
type Cors struct {
	AllowOrigins     Value    `yaml:"AllowOrigins"`
	AllowMethods     []string `yaml:"AllowMethods"`
	AllowHeaders     []string `yaml:"AllowHeaders"`
	ExposeHeaders    []string `yaml:"ExposeHeaders"`
	AllowCredentials bool     `yaml:"AllowCredentials"`
	MaxAge           int      `yaml:"MaxAge"`
}

// functionSpec is a function's build and runtime settings, with Globals
// applied, the ApiId of each route, and its LoggingConfig LogGroup (empty:
// Lambda writes to /aws/lambda/<function name>).
type functionSpec struct {
	CodeURI       string   `yaml:"CodeUri"`
	Runtime       string   `yaml:"Runtime"`
	Handler       string   `yaml:"Handler"`
	Architectures []string `yaml:"Architectures"`
	Events        map[string]struct {
		Properties struct {
			ApiId Value `yaml:"ApiId"`
		} `yaml:"Properties"`
	} `yaml:"Events"`
	LoggingConfig struct {
		LogGroup  Value  `yaml:"LogGroup"`
		LogFormat string `yaml:"LogFormat"`
	} `yaml:"LoggingConfig"`
	BuildMethod string           `yaml:"-"`
	ApiIDs      map[string]Value `yaml:"-"`
	LogGroup    Value            `yaml:"-"`
}

// tableSpec is a table's protection settings. SSE is encryption at rest
// with a KMS key when Enabled and Type is KMS, the AWS managed key
// aws/dynamodb when KMSKey is also empty.
type tableSpec struct {
	DeletionPolicy, UpdateReplacePolicy     string `yaml:"-"`
	PointInTimeRecovery, DeletionProtection bool   `yaml:"-"`
	PITR                                    struct {
		Enabled bool `yaml:"PointInTimeRecoveryEnabled"`
	} `yaml:"PointInTimeRecoverySpecification"`
	Protection bool `yaml:"DeletionProtectionEnabled"`
	SSE        struct {
		Enabled bool   `yaml:"SSEEnabled"`
		Type    string `yaml:"SSEType"`
		KMSKey  Value  `yaml:"KMSMasterKeyId"`
	} `yaml:"SSESpecification"`
}

// readSpec reads the spec from the template's document.
func readSpec(t *testing.T, data []byte) *spec {
	t.Helper()
	var doc struct {
		Parameters map[string]Parameter `yaml:"Parameters"`
		Outputs    map[string]struct {
			Value Value `yaml:"Value"`
		} `yaml:"Outputs"`
		Globals struct {
			Function yaml.Node `yaml:"Function"`
		} `yaml:"Globals"`
		Resources map[string]struct {
			Type                string    `yaml:"Type"`
			DeletionPolicy      string    `yaml:"DeletionPolicy"`
			UpdateReplacePolicy string    `yaml:"UpdateReplacePolicy"`
			Properties          yaml.Node `yaml:"Properties"`
			Metadata            struct {
				BuildMethod string `yaml:"BuildMethod"`
			} `yaml:"Metadata"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	sp := &spec{ParameterSpecs: doc.Parameters, Resources: map[string]string{}, Outputs: map[string]Value{},
		Functions: map[string]functionSpec{}, Tables: map[string]tableSpec{}}
	for name, o := range doc.Outputs {
		sp.Outputs[name] = o.Value
	}
	for _, id := range slices.Sorted(maps.Keys(doc.Resources)) {
		r := doc.Resources[id]
		sp.Resources[id] = r.Type
		decode := func(v any, nodes ...*yaml.Node) {
			for _, n := range nodes {
				if err := n.Decode(v); err != nil {
					t.Fatalf("%s: %v", id, err)
				}
			}
		}
		switch r.Type {
		case "AWS::Serverless::Function":
			var f functionSpec
			decode(&f, &doc.Globals.Function, &r.Properties)
			f.BuildMethod, f.ApiIDs, f.LogGroup = r.Metadata.BuildMethod, map[string]Value{}, f.LoggingConfig.LogGroup
			for name, e := range f.Events {
				f.ApiIDs[name] = e.Properties.ApiId
			}
			sp.Functions[id] = f
		case "AWS::Serverless::HttpApi":
			var api struct {
				Cors      *Cors      `yaml:"CorsConfiguration"`
				Throttle  *Throttle  `yaml:"DefaultRouteSettings"`
				AccessLog *AccessLog `yaml:"AccessLogSettings"`
			}
			decode(&api, &r.Properties)
			sp.Cors, sp.Throttle, sp.AccessLog = api.Cors, api.Throttle, api.AccessLog
		case "AWS::Logs::LogGroup":
			g := LogGroup{LogicalID: id}
			decode(&g, &r.Properties)
			sp.LogGroups = append(sp.LogGroups, g)
		case "AWS::DynamoDB::Table":
			tb := tableSpec{DeletionPolicy: r.DeletionPolicy, UpdateReplacePolicy: r.UpdateReplacePolicy}
			decode(&tb, &r.Properties)
			tb.PointInTimeRecovery, tb.DeletionProtection = tb.PITR.Enabled, tb.Protection
			sp.Tables[id] = tb
		}
	}
	return sp
}

// s3Grants returns the S3 actions the function's policy allows, by the
// key prefix they are allowed on (!Sub "${Bucket.Arn}/PREFIX*": "PREFIX").
func s3Grants(f Function) map[string][]string {
	out := map[string][]string{}
	for _, st := range f.Statements {
		for _, r := range st.Resources {
			if st.Effect != "Allow" || !strings.HasPrefix(st.Actions[0], "s3:") {
				continue
			}
			_, prefix, _ := strings.Cut(r.Sub, ".Arn}/")
			prefix = strings.TrimSuffix(prefix, "*")
			out[prefix] = append(out[prefix], st.Actions...)
		}
	}
	return out
}

func TestFunctions(t *testing.T) {
	tmpl, sp, root := load(t)
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	// functions/ holds one directory per function (and functions.mk,
	// generated from the template, which is no function).
	entries, _ := filepath.Glob(filepath.Join(root, "functions", "*"))
	dirs := slices.DeleteFunc(entries, func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && !fi.IsDir()
	})
	if got, want := len(tmpl.Functions), len(dirs); got != want || got == 0 {
		t.Errorf("%d functions in template.yaml, %d directories in functions/", got, want)
	}
	routes := map[string]string{}
	built := map[string]string{} // the LogicalId whose target builds each functions/ directory
	for _, f := range tmpl.Functions {
		t.Run(f.LogicalID, func(t *testing.T) {
			x := sp.Functions[f.LogicalID]
			if x.Runtime != "provided.al2023" || x.Handler != "bootstrap" || strings.Join(x.Architectures, ",") != "arm64" || x.BuildMethod != "makefile" {
				t.Errorf("runtime %q handler %q architectures %v build method %q; want provided.al2023, bootstrap, [arm64], makefile",
					x.Runtime, x.Handler, x.Architectures, x.BuildMethod)
			}
			if x.CodeURI != "." {
				t.Errorf("CodeUri = %q, want . (the Makefile is at the top)", x.CodeURI)
			}
			// API Gateway answers 503 after 30 s; a scheduled function may run
			// for Lambda's 15 minutes.
			limit := 30
			if len(f.Routes) == 0 {
				limit = 900
			}
			if f.Timeout < 1 || f.Timeout > limit || f.MemorySize < 128 {
				t.Errorf("timeout %d s (at most %d), memory %d MB", f.Timeout, limit, f.MemorySize)
			}
			// The Makefile target SAM runs (make build-<LogicalId> with
			// ARTIFACTS_DIR set) builds this function's directory with the
			// release flags.
			out, err := exec.Command("make", "-C", root, "-n", "-s", "--no-print-directory", "build-"+f.LogicalID, "ARTIFACTS_DIR=/artifacts").CombinedOutput()
			if err != nil {
				t.Fatalf("make -n build-%s: %v\n%s", f.LogicalID, err, out)
			}
			recipe := strings.TrimSpace(string(out))
			dir := regexp.MustCompile(`\./functions/([a-z-]+)$`).FindStringSubmatch(recipe)
			if dir == nil {
				t.Fatalf("build-%s does not build a functions/ directory: %s", f.LogicalID, recipe)
			}
			if _, err := os.Stat(filepath.Join(root, "functions", dir[1], "main.go")); err != nil {
				t.Errorf("build-%s builds ./functions/%s, which has no main.go", f.LogicalID, dir[1])
			}
			if other, dup := built[dir[1]]; dup {
				t.Errorf("build-%s and build-%s both build ./functions/%s", other, f.LogicalID, dir[1])
			}
			built[dir[1]] = f.LogicalID
			for _, want := range []string{"GOOS=linux GOARCH=arm64 CGO_ENABLED=0 ", `-tags lambda.norpc -trimpath -ldflags "-s -w"`, "-o /artifacts/bootstrap"} {
				if !strings.Contains(recipe, want) {
					t.Errorf("build-%s recipe lacks %s: %s", f.LogicalID, want, recipe)
				}
			}
			if len(f.Routes) == 0 && len(f.Schedules) == 0 {
				t.Errorf("neither an HttpApi route nor a Schedule")
			}
			for _, r := range f.Routes {
				key := r.Key()
				if other, dup := routes[key]; dup {
					t.Errorf("route %s served by %s and %s", key, other, f.LogicalID)
				}
				routes[key] = f.LogicalID
				if x.ApiIDs[r.Name].Ref != "Api" {
					t.Errorf("route %s is not on the HttpApi", key)
				}
			}
			for name, v := range f.Env {
				secret := strings.HasPrefix(v.Sub, "{{resolve:ssm:${") && strings.HasSuffix(v.Sub, "}}}")
				local := slices.Contains(config.LocalEndpoints[:], name) // empty: TestNoParameterTurnsOnLocalMode
				// A name the stack derives from itself (the metrics'
				// namespace, StampDuty/${AWS::StackName}) is no setting.
				stack := v.Sub != "" && !strings.Contains(regexp.MustCompile(`\$\{AWS::[A-Za-z]+\}`).ReplaceAllString(v.Sub, ""), "${")
				if v.Ref == "" && !secret && !local && !stack {
					t.Errorf("env %s = %s: settings come from !Ref, secrets from an SSM dynamic reference, names of the stack from !Sub of its pseudo parameters", name, v)
				}
			}
		})
	}
	for _, key := range []string{"POST /api/live-orders", "GET /api/live-orders", "GET /api/stamp-duty-datas"} {
		if routes[key] == "" {
			t.Errorf("no function serves %s", key)
		}
	}
	// The release flags, with the tracing build's tag only under TRACING=on
	// (shared/tracing).
	for _, must := range []string{"LAMBDA_ENV      := GOOS=linux GOARCH=arm64 CGO_ENABLED=0", `LAMBDA_FLAGS    := -tags $(LAMBDA_TAGS) -trimpath -ldflags "-s -w"`,
		"ifeq ($(TRACING),on)\nLAMBDA_TAGS     := lambda.norpc,tracing\n", "else ifeq ($(TRACING),off)\nLAMBDA_TAGS     := lambda.norpc\n"} {
		if !strings.Contains(string(makefile), must) {
			t.Errorf("Makefile lacks %q", must)
		}
	}
}

func TestTables(t *testing.T) {
	tmpl, sp, _ := load(t)
	if len(tmpl.Tables) == 0 {
		t.Fatal("no tables")
	}
	for _, tb := range tmpl.Tables {
		t.Run(tb.LogicalID, func(t *testing.T) {
			x := sp.Tables[tb.LogicalID]
			if tb.BillingMode != "PAY_PER_REQUEST" || !x.PointInTimeRecovery {
				t.Errorf("billing %q, point-in-time recovery %v", tb.BillingMode, x.PointInTimeRecovery)
			}
			if x.DeletionPolicy != "Retain" || x.UpdateReplacePolicy != "Retain" {
				t.Errorf("DeletionPolicy %q, UpdateReplacePolicy %q; want Retain", x.DeletionPolicy, x.UpdateReplacePolicy)
			}
			defined := map[string]bool{}
			for _, a := range tb.Attributes {
				defined[a.Name] = true
			}
			if len(tb.KeySchema) == 0 || tb.KeySchema[0].Type != "HASH" {
				t.Errorf("key schema %v", tb.KeySchema)
			}
			for _, k := range tb.KeySchema {
				if !defined[k.Name] {
					t.Errorf("key %s has no attribute definition", k.Name)
				}
			}
			found := false
			for _, o := range sp.Outputs {
				found = found || o.Ref == tb.LogicalID
			}
			if !found {
				t.Errorf("no output gives the table's name")
			}
		})
	}
	if _, ok := sp.Outputs["ApiUrl"]; !ok {
		t.Error("no ApiUrl output")
	}
	if got := sp.Resources["Api"]; got != "AWS::Serverless::HttpApi" {
		t.Errorf("Api is %q, want AWS::Serverless::HttpApi", got)
	}
}

func TestResolve(t *testing.T) {
	tmpl, _, _ := load(t)
	f, _ := tmpl.Function("CreateOrderFunction")
	got, err := tmpl.Resolve(f.Env["ORDERS_TABLE"], nil, map[string]string{"OrdersTable": "orders-x"})
	if err != nil || got != "orders-x" {
		t.Errorf("ORDERS_TABLE = %q, %v", got, err)
	}
	got, err = tmpl.Resolve(f.Env["DYNAMODB_ENDPOINT"], nil, nil)
	if err != nil || got != "" {
		t.Errorf("DYNAMODB_ENDPOINT = %q, %v; want empty", got, err)
	}
	got, err = tmpl.Resolve(f.Env["TOKEN_HASH_KEY"], map[string]string{"TokenHashKeyParameter": "/other", "ssm:/other": "k"}, nil)
	if err != nil || got != "k" {
		t.Errorf("parameter override = %q, %v; want the SSM parameter it names", got, err)
	}
	if _, err := tmpl.Resolve(Value{Ref: "Nope"}, nil, nil); err == nil {
		t.Error("unresolvable !Ref resolved")
	}
}

// TestTableGrants reads the DynamoDB operations a policy allows per table,
// and refuses what cannot be checked against calls.
func TestTableGrants(t *testing.T) {
	arn := func(table string) Value { return Value{GetAtt: [2]string{table, "Arn"}} }
	f := Function{LogicalID: "F", Statements: []Statement{
		{Effect: "Allow", Actions: []string{"dynamodb:GetItem", "dynamodb:Query"}, Resources: []Value{arn("A"), arn("B")}},
		{Effect: "Allow", Actions: []string{"dynamodb:PutItem"}, Resources: []Value{arn("B")}},
		{Effect: "Deny", Actions: []string{"dynamodb:DeleteItem"}, Resources: []Value{arn("A")}},
	}}
	got, err := f.TableGrants()
	want := map[string]map[string]bool{"A": {"GetItem": true, "Query": true}, "B": {"GetItem": true, "Query": true, "PutItem": true}}
	if err != nil || !maps.EqualFunc(got, want, maps.Equal) {
		t.Errorf("TableGrants = %v, %v; want %v", got, err, want)
	}
	t.Run("Indexes", func(t *testing.T) {
		f := Function{LogicalID: "F", Statements: []Statement{
			{Effect: "Allow", Actions: []string{"dynamodb:Query"}, Resources: []Value{{Sub: "${A.Arn}/index/by-x"}, {Sub: "${A.Arn}/index/q"}}},
		}}
		got, err := f.TableGrants()
		want := map[string]map[string]bool{"A/index/by-x": {"Query": true}, "A/index/q": {"Query": true}}
		if err != nil || !maps.EqualFunc(got, want, maps.Equal) {
			t.Errorf("TableGrants = %v, %v; want %v", got, err, want)
		}
	})
	t.Run("S3StatementsAreNotTables", func(t *testing.T) {
		f := Function{LogicalID: "F", Statements: []Statement{
			{Effect: "Allow", Actions: []string{"s3:GetObject"}, Resources: []Value{{Sub: "${B.Arn}/documents/*"}, {Sub: "${B.Arn}/certificates/*"}}},
			{Effect: "Allow", Actions: []string{"s3:PutObject", "s3:DeleteObject"}, Resources: []Value{{Sub: "${B.Arn}/certificates/*"}}},
		}}
		if got, err := f.TableGrants(); err != nil || len(got) != 0 {
			t.Errorf("TableGrants = %v, %v; want none", got, err)
		}
		want := map[string][]string{"documents/": {"s3:GetObject"}, "certificates/": {"s3:GetObject", "s3:PutObject", "s3:DeleteObject"}}
		if got := s3Grants(f); !maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("S3Grants = %v, want %v", got, want)
		}
	})
	t.Run("ErrNotATableOrAction", func(t *testing.T) {
		f.Statements = []Statement{{Effect: "Allow", Actions: []string{"dynamodb:GetItem", "sqs:SendMessage"},
			Resources: []Value{arn("A"), {Ref: "Bucket"}, {Sub: "${A.Arn}/index/*"}}}}
		_, err := f.TableGrants()
		msg := fmt.Sprint(err)
		for _, want := range []string{"!Ref Bucket is not a table or index ARN", "${A.Arn}/index/* is not a table or index ARN", "sqs:SendMessage, not a DynamoDB action"} {
			if !strings.Contains(msg, want) {
				t.Errorf("TableGrants error = %v, want it to say %q", err, want)
			}
		}
	})
}

// TestCors: the API states its CORS policy: the methods and headers clients
// use (PUT for a caller's document, DELETE for a caller's webhook; the operator API is not for browsers;
// Idempotency-Key among the headers), Retry-After readable, no credentials,
// origins from a parameter.
func TestCors(t *testing.T) {
	tmpl, sp, _ := load(t)
	c := sp.Cors
	if c == nil {
		t.Fatal("the HttpApi has no CorsConfiguration")
	}
	if got, want := strings.Join(c.AllowMethods, ","), "GET,POST,PUT,DELETE"; got != want {
		t.Errorf("AllowMethods = %s, want %s", got, want)
	}
	if got, want := strings.Join(c.AllowHeaders, ","), "Authorization,Content-Type,Idempotency-Key"; got != want {
		t.Errorf("AllowHeaders = %s, want %s", got, want)
	}
	if got, want := strings.Join(c.ExposeHeaders, ","), "Retry-After"; got != want {
		t.Errorf("ExposeHeaders = %s, want %s", got, want)
	}
	if c.AllowCredentials {
		t.Error("AllowCredentials is true: the API takes bearer tokens, never cookies")
	}
	if c.AllowOrigins.Ref == "" {
		t.Errorf("AllowOrigins = %s, want a !Ref to a parameter", c.AllowOrigins)
	} else if _, ok := tmpl.Parameters[c.AllowOrigins.Ref]; !ok {
		t.Errorf("AllowOrigins refers to %s, which is not a parameter", c.AllowOrigins.Ref)
	}
	if c.MaxAge <= 0 {
		t.Errorf("MaxAge = %d", c.MaxAge)
	}
}

// TestTableProtection: no table can be deleted by accident (a console click,
// a stray DeleteTable) while deletion protection is on, and
// each is encrypted with the AWS managed key aws/dynamodb: KMS, auditable in
// CloudTrail, and usable by the functions without any kms:* permission.
func TestTableProtection(t *testing.T) {
	tmpl, sp, _ := load(t)
	for _, tb := range tmpl.Tables {
		x := sp.Tables[tb.LogicalID]
		t.Run(tb.LogicalID+"/DeletionProtected", func(t *testing.T) {
			if !x.DeletionProtection {
				t.Error("DeletionProtectionEnabled is not true")
			}
		})
		t.Run(tb.LogicalID+"/EncryptedWithTheAWSManagedKey", func(t *testing.T) {
			if !x.SSE.Enabled || x.SSE.Type != "KMS" {
				t.Errorf("SSESpecification: SSEEnabled %v, SSEType %q; want true, KMS", x.SSE.Enabled, x.SSE.Type)
			}
			if x.SSE.KMSKey != (Value{}) {
				t.Errorf("KMSMasterKeyId = %s: a customer managed key needs kms:Decrypt on every function's role and a key policy; want none (aws/dynamodb)", x.SSE.KMSKey)
			}
		})
	}
}

// TestThrottle: the HttpApi bounds traffic on every route by default, with
// a burst and a rate the deployer sets as parameters.
func TestThrottle(t *testing.T) {
	_, sp, _ := load(t)
	th := sp.Throttle
	if th == nil {
		t.Fatal("the HttpApi has no DefaultRouteSettings: traffic (and spend) is bounded only by the account's limits")
	}
	// number checks that v is a !Ref to a Number parameter whose default
	// lies in (0, max], within its own MinValue and MaxValue, and returns
	// the default.
	number := func(t *testing.T, what string, v Value, ceiling float64) float64 {
		t.Helper()
		p, ok := sp.ParameterSpecs[v.Ref]
		if !ok {
			t.Fatalf("%s = %s, want a !Ref to a parameter", what, v)
		}
		if p.Type != "Number" {
			t.Errorf("parameter %s is a %s, want a Number", v.Ref, p.Type)
		}
		def, err := strconv.ParseFloat(p.Default, 64)
		if err != nil || def <= 0 || def > ceiling {
			t.Errorf("parameter %s defaults to %q, want a number in (0, %g]", v.Ref, p.Default, ceiling)
		}
		lo, errLo := strconv.ParseFloat(p.MinValue, 64)
		hi, errHi := strconv.ParseFloat(p.MaxValue, 64)
		if errLo != nil || errHi != nil || lo <= 0 || hi > ceiling || def < lo || def > hi {
			t.Errorf("parameter %s: MinValue %q, MaxValue %q, default %q; want 0 < MinValue <= default <= MaxValue <= %g",
				v.Ref, p.MinValue, p.MaxValue, p.Default, ceiling)
		}
		return def
	}
	var burst, rate float64
	// The ceilings are API Gateway's default account-level throttle per
	// region: 5,000 requests of burst, 10,000 requests per second.
	t.Run("BurstFromANumberParameter", func(t *testing.T) {
		burst = number(t, "ThrottlingBurstLimit", th.BurstLimit, 5000)
	})
	t.Run("RateFromANumberParameter", func(t *testing.T) {
		rate = number(t, "ThrottlingRateLimit", th.RateLimit, 10000)
	})
	t.Run("BurstCoversOneSecondAtTheRate", func(t *testing.T) {
		if burst < rate {
			t.Errorf("default burst %g < default rate %g: the bucket could not hold one second of traffic at the rate", burst, rate)
		}
	})
}

// cloudWatchRetentionDays are the values CloudWatch Logs accepts for a log
// group's retention (PutRetentionPolicy), in days.
var cloudWatchRetentionDays = []string{"1", "3", "5", "7", "14", "30", "60", "90", "120", "150", "180",
	"365", "400", "545", "731", "1096", "1827", "2192", "2557", "2922", "3288", "3653"}

// TestLogGroups: every function logs to a log group of its own that the
// stack creates, and every log group of the stack keeps its events for
// LogRetentionDays, not forever.
func TestLogGroups(t *testing.T) {
	tmpl, sp, _ := load(t)
	groups := map[string]LogGroup{}
	for _, g := range sp.LogGroups {
		groups[g.LogicalID] = g
	}
	writers := map[string][]string{} // log group -> what writes to it
	for _, f := range tmpl.Functions {
		t.Run(f.LogicalID+"/LogsToAGroupOfTheStack", func(t *testing.T) {
			logGroup := sp.Functions[f.LogicalID].LogGroup
			g, ok := groups[logGroup.Ref]
			if !ok {
				// Without LoggingConfig.LogGroup Lambda creates
				// /aws/lambda/<name> itself on first use, with no retention.
				t.Fatalf("LoggingConfig.LogGroup = %q, want a !Ref to an AWS::Logs::LogGroup of the template", logGroup)
			}
			writers[g.LogicalID] = append(writers[g.LogicalID], f.LogicalID)
			// JSON: Lambda's own lines (START, END, REPORT, init and
			// timeouts) are JSON records beside the function's, so one
			// Logs Insights query reads both (issue 23).
			if got, want := sp.Functions[f.LogicalID].LoggingConfig.LogFormat, "JSON"; got != want {
				t.Errorf("LoggingConfig.LogFormat = %q, want %q", got, want)
			}
			if !strings.HasPrefix(g.Name.Sub, "/aws/lambda/${AWS::StackName}/") {
				t.Errorf("%s is named %s, want !Sub /aws/lambda/${AWS::StackName}/...: where Lambda logs, one per stack", g.LogicalID, g.Name)
			}
		})
	}
	if a := sp.AccessLog; a != nil {
		writers[a.DestinationArn.GetAtt[0]] = append(writers[a.DestinationArn.GetAtt[0]], "the HttpApi's access log")
	}
	t.Run("OneWriterPerGroup", func(t *testing.T) {
		names := map[string]string{}
		for _, g := range sp.LogGroups {
			if w := writers[g.LogicalID]; len(w) != 1 {
				t.Errorf("%s is written by %v, want exactly one function or the access log", g.LogicalID, w)
			}
			if other, dup := names[g.Name.String()]; dup {
				t.Errorf("%s and %s are both named %s", other, g.LogicalID, g.Name)
			}
			names[g.Name.String()] = g.LogicalID
		}
	})
	t.Run("RetentionFromLogRetentionDays", func(t *testing.T) {
		if len(sp.LogGroups) == 0 {
			t.Fatal("no AWS::Logs::LogGroup")
		}
		for _, g := range sp.LogGroups {
			if g.RetentionInDays.Ref != "LogRetentionDays" {
				t.Errorf("%s RetentionInDays = %s, want !Ref LogRetentionDays", g.LogicalID, g.RetentionInDays)
			}
		}
	})
	t.Run("LogRetentionDaysIsWhatCloudWatchAccepts", func(t *testing.T) {
		p, ok := sp.ParameterSpecs["LogRetentionDays"]
		if !ok {
			t.Fatal("no LogRetentionDays parameter")
		}
		if p.Type != "Number" || p.Default != "30" {
			t.Errorf("LogRetentionDays: type %q, default %q; want Number, 30", p.Type, p.Default)
		}
		if got, want := strings.Join(p.AllowedValues, ","), strings.Join(cloudWatchRetentionDays, ","); got != want {
			t.Errorf("LogRetentionDays AllowedValues = %s\nwant %s", got, want)
		}
	})
}

// accessLogVariables are the only variables the API's access log may
// record, by the JSON field that holds each: who called (source IP), which
// request, which route (the route key, never the path with its query
// string), its status and its latency. No headers, bodies, query strings,
// tokens or authorizer data.
var accessLogVariables = map[string]string{
	"requestId":       "$context.requestId",
	"routeKey":        "$context.routeKey",
	"status":          "$context.status",
	"responseLatency": "$context.responseLatency",
	"sourceIp":        "$context.identity.sourceIp",
}

// TestAccessLog: the HttpApi writes an access log line per request to a log
// group of the stack, with exactly the fields of accessLogVariables.
func TestAccessLog(t *testing.T) {
	_, sp, _ := load(t)
	a := sp.AccessLog
	if a == nil {
		t.Fatal("the HttpApi has no AccessLogSettings")
	}
	t.Run("ToALogGroupOfTheStack", func(t *testing.T) {
		id := a.DestinationArn.GetAtt[0]
		if a.DestinationArn.GetAtt[1] != "Arn" || sp.Resources[id] != "AWS::Logs::LogGroup" {
			t.Errorf("DestinationArn = %s, want !GetAtt <an AWS::Logs::LogGroup>.Arn", a.DestinationArn)
		}
	})
	format := a.Format.Literal
	t.Run("FormatIsOneJSONObject", func(t *testing.T) {
		if strings.Contains(format, "\n") {
			t.Errorf("format spans lines: each request must be one log line")
		}
		var fields map[string]string
		if err := json.Unmarshal([]byte(format), &fields); err != nil {
			t.Fatalf("format %q is not a JSON object of strings: %v", format, err)
		}
		if len(fields) != len(accessLogVariables) {
			t.Errorf("%d fields, want %d: %v", len(fields), len(accessLogVariables), fields)
		}
		for k, want := range accessLogVariables {
			if fields[k] != want {
				t.Errorf("field %q = %q, want %q", k, fields[k], want)
			}
		}
	})
	t.Run("NoOtherVariables", func(t *testing.T) {
		allowed := map[string]bool{}
		for _, v := range accessLogVariables {
			allowed[v] = true
		}
		// Every variable an access log format can name: $context.x.y,
		// and the $input / $request / $stageVariables families.
		refs := regexp.MustCompile(`\$[A-Za-z]+(\.[A-Za-z0-9_-]+)*`).FindAllString(format, -1)
		if len(refs) != len(accessLogVariables) {
			t.Errorf("format names %d variables, want %d: %v", len(refs), len(accessLogVariables), refs)
		}
		for _, r := range refs {
			if !allowed[r] {
				t.Errorf("format logs %s: only %v may be logged", r, slices.Sorted(maps.Values(accessLogVariables)))
			}
		}
		for _, never := range []string{"$context.path", "querystring", "$input", "$request", "$context.authorizer", "$context.identity.user", "header"} {
			if strings.Contains(strings.ToLower(format), strings.ToLower(never)) {
				t.Errorf("format contains %s", never)
			}
		}
	})
}

// TestMakefileLintsTemplate: make test (through vet) runs cfn-lint on
// template.yaml where cfn-lint is installed, and skips it with a note where
// it is not, so a machine with only Go and Node still passes.
func TestMakefileLintsTemplate(t *testing.T) {
	_, _, root := load(t)
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	// make test runs vet as a prerequisite or as a step of its recipe
	// ($(MAKE) vet), which lets it say which phase it is in.
	test := regexp.MustCompile(`(?m)^test:([^#\n]*)[^\n]*\n((?:\t.*\n)*)`).FindSubmatch(makefile)
	if test == nil || !slices.Contains(strings.Fields(string(test[1])), "vet") &&
		!regexp.MustCompile(`(?m)^\t@?\$\(MAKE\)[^\n]* vet$`).Match(test[2]) {
		t.Fatalf("make test does not run vet")
	}
	m := regexp.MustCompile(`(?m)^vet:.*\n((?:\t.*\n)+)`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("Makefile has no vet recipe")
	}
	recipe := string(m[1])
	for _, want := range []string{"command -v cfn-lint", "cfn-lint template.yaml", "else", "not on PATH"} {
		if !strings.Contains(recipe, want) {
			t.Errorf("vet recipe lacks %q: it must run cfn-lint template.yaml when installed and skip it with a note otherwise\n%s", want, recipe)
		}
	}
}

// TestSamconfigOverrides: every parameter samconfig.toml overrides is a
// parameter of the template, so sam deploy and sam local do not fail on a
// renamed or removed one.
func TestSamconfigOverrides(t *testing.T) {
	_, sp, root := load(t)
	conf, err := os.ReadFile(filepath.Join(root, "samconfig.toml"))
	if err != nil {
		t.Fatal(err)
	}
	lines := regexp.MustCompile(`(?m)^parameter_overrides\s*=\s*"([^"]*)"`).FindAllSubmatch(conf, -1)
	for _, l := range lines {
		for _, kv := range strings.Fields(string(l[1])) {
			name, _, ok := strings.Cut(kv, "=")
			if _, known := sp.ParameterSpecs[name]; !ok || !known {
				t.Errorf("samconfig.toml overrides %q, which is not a parameter of template.yaml", kv)
			}
		}
	}
}

// TestNoParameterTurnsOnLocalMode: a deployed function can never run in
// local mode (webhooks to loopback, where the Lambda Runtime API answers)
// or use a local engine, whatever the stack's parameters say: no function's
// environment, Globals included, sets the local signal, and the variables
// that point at local engines are absent or literally empty, so that no
// parameter, reference or substitution can reach them. (`sam local` fills
// them from its --env-vars file; the functions refuse them outside a local
// runtime: config.Env.Endpoint.)
func TestNoParameterTurnsOnLocalMode(t *testing.T) {
	tmpl, _, _ := load(t)
	for _, f := range tmpl.Functions {
		if v, ok := f.Env[config.LocalSignal]; ok {
			t.Errorf("%s sets %s (%s): only a local runtime may", f.LogicalID, config.LocalSignal, v)
		}
		for _, name := range config.LocalEndpoints {
			if v, ok := f.Env[name]; ok && v != (Value{}) {
				t.Errorf("%s sets %s to %s, want it empty (a deploy must not point a function at a local engine)", f.LogicalID, name, v)
			}
		}
	}
}

// TestDefaultRoute: an HttpApi event with neither Path nor Method is the
// API's catch-all, keyed "$default" as API Gateway keys it.
func TestDefaultRoute(t *testing.T) {
	tmpl, err := Parse([]byte(`
Resources:
  F:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Any:
          Type: HttpApi
          Properties: {ApiId: !Ref Api}
        One:
          Type: HttpApi
          Properties: {ApiId: !Ref Api, Method: get, Path: /x}
`))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range tmpl.Functions[0].Routes {
		keys = append(keys, r.Key())
	}
	if got, want := strings.Join(keys, ","), "$default,GET /x"; got != want {
		t.Errorf("route keys = %s, want %s", got, want)
	}
}

// TestSchedules: a function's Schedule events are reported with their
// expression, enabled unless they say otherwise, and are no routes.
func TestSchedules(t *testing.T) {
	tmpl, err := Parse([]byte(`
Resources:
  Dispatch:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Every:
          Type: Schedule
          Properties: {Schedule: rate(1 minute)}
        Nightly:
          Type: Schedule
          Properties: {Schedule: "cron(0 3 * * ? *)", Enabled: false}
        Paused:
          Type: Schedule
          Properties: {Schedule: rate(2 hours), State: DISABLED}
`))
	if err != nil {
		t.Fatal(err)
	}
	f := tmpl.Functions[0]
	want := []Schedule{{"Every", "rate(1 minute)", true, ""}, {"Nightly", "cron(0 3 * * ? *)", false, ""}, {"Paused", "rate(2 hours)", false, ""}}
	if !slices.Equal(f.Schedules, want) {
		t.Errorf("schedules = %+v, want %+v", f.Schedules, want)
	}
	if len(f.Routes) != 0 {
		t.Errorf("routes = %+v, want none: a schedule is no route", f.Routes)
	}
}

// conditional is a template whose schedules' Input and State depend on a
// parameter through conditions, in the short and the long forms.
const conditional = `
Parameters:
  Pollers: {Type: Number, Default: 1, AllowedValues: [1, 2, 4]}
  Label: {Type: String, Default: x}
Conditions:
  Two: !Not [!Equals [!Ref Pollers, "1"]]
  Four: {"Fn::Equals": [{Ref: Pollers}, "4"]}
  TwoNotFour: !And [{Condition: Two}, !Not [{Condition: Four}]]
  Either: !Or [!Condition Four, !Equals [!Ref Label, y]]
Resources:
  Dispatch:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        P0:
          Type: Schedule
          Properties: {Schedule: rate(1 minute), State: ENABLED, Input: !Sub '{"poller": 0, "pollers": ${Pollers}}'}
        P1:
          Type: Schedule
          Properties: {Schedule: rate(1 minute), State: !If [Two, ENABLED, DISABLED], Input: '{"poller": 1}'}
        P2:
          Type: Schedule
          Properties: {Schedule: rate(1 minute), State: {"Fn::If": [TwoNotFour, ENABLED, DISABLED]}}
        P3:
          Type: Schedule
          Properties: {Schedule: rate(1 minute), Enabled: false, State: !If [Either, ENABLED, DISABLED], Input: !If [Four, four, !Ref Label]}
`

// TestScheduleConditions: a Schedule event's Input and State are
// evaluated as CloudFormation would with the parameters' values (defaults,
// or overrides): !Sub, !Ref, !If on conditions made of Equals, Not, And,
// Or and Condition, in the short and long forms; Enabled: false still
// disables. An override of an undeclared parameter, or outside its
// AllowedValues, is refused, as is a condition that cannot be evaluated.
func TestScheduleConditions(t *testing.T) {
	for _, c := range []struct {
		params  map[string]string
		enabled string // P0..P3, 1 when enabled
		input0  string
		input3  string
	}{
		{nil, "1000", `{"poller": 0, "pollers": 1}`, "x"},
		{map[string]string{"Pollers": "2"}, "1110", `{"poller": 0, "pollers": 2}`, "x"},
		{map[string]string{"Pollers": "4", "Label": "z"}, "1100", `{"poller": 0, "pollers": 4}`, "four"},
		{map[string]string{"Label": "y"}, "1000", `{"poller": 0, "pollers": 1}`, "y"},
	} {
		tmpl, err := ParseWith([]byte(conditional), c.params)
		if err != nil {
			t.Fatalf("%v: %v", c.params, err)
		}
		ss := tmpl.Functions[0].Schedules
		enabled := ""
		for _, s := range ss {
			enabled += map[bool]string{true: "1", false: "0"}[s.Enabled]
		}
		if enabled != c.enabled || ss[0].Input != c.input0 || ss[1].Input != `{"poller": 1}` || ss[2].Input != "" || ss[3].Input != c.input3 {
			t.Errorf("%v: enabled %s, inputs %q %q %q %q; want %s, %q, {\"poller\": 1}, none, %q", c.params, enabled,
				ss[0].Input, ss[1].Input, ss[2].Input, ss[3].Input, c.enabled, c.input0, c.input3)
		}
		if got, want := tmpl.Parameters["Pollers"], cmp.Or(c.params["Pollers"], "1"); got != want {
			t.Errorf("%v: parameter Pollers = %s, want %s", c.params, got, want)
		}
	}
	for _, c := range []struct {
		template string
		params   map[string]string
		says     string
	}{
		{conditional, map[string]string{"Pollers": "3"}, `parameter Pollers: "3" is not one of 1, 2, 4`},
		{conditional, map[string]string{"Nope": "1"}, "parameter Nope: the template declares no such parameter"},
		{strings.Replace(conditional, "[Two, ENABLED", "[Three, ENABLED", 1), nil, "P1: property State: no condition Three"},
		{strings.Replace(conditional, "Two: !Not", "Two: !And [{Condition: Two}]\n  Was: !Not", 1), nil, "condition Two refers to itself"},
		{strings.Replace(conditional, `!Sub '{"poller": 0, "pollers": ${Pollers}}'`, "!GetAtt X.Arn", 1), nil, "P0: property Input: cannot evaluate !GetAtt locally"},
	} {
		_, err := ParseWith([]byte(c.template), c.params)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: %v, want an error saying %q", c.params, err, c.says)
		}
	}
}

// TestCognitoGrants reads the Cognito actions a policy allows per user
// pool, leaves them out of the table grants, and refuses a wildcard or a
// resource that is not a pool's ARN.
func TestCognitoGrants(t *testing.T) {
	pool := Value{GetAtt: [2]string{"P", "Arn"}}
	f := Function{LogicalID: "F", Statements: []Statement{
		{Effect: "Allow", Actions: []string{"cognito-idp:AdminGetUser", "cognito-idp:ListUsers"}, Resources: []Value{pool}},
		{Effect: "Allow", Actions: []string{"dynamodb:GetItem"}, Resources: []Value{{GetAtt: [2]string{"T", "Arn"}}}},
	}}
	got, err := f.CognitoGrants()
	want := map[string]map[string]bool{"P": {"AdminGetUser": true, "ListUsers": true}}
	if err != nil || !maps.EqualFunc(got, want, maps.Equal) {
		t.Errorf("CognitoGrants = %v, %v; want %v", got, err, want)
	}
	if tables, err := f.TableGrants(); err != nil || len(tables) != 1 || tables["P"] != nil {
		t.Errorf("TableGrants = %v, %v; want the table only", tables, err)
	}
	for name, st := range map[string]Statement{
		"Wildcard":   {Effect: "Allow", Actions: []string{"cognito-idp:*"}, Resources: []Value{pool}},
		"AnyPool":    {Effect: "Allow", Actions: []string{"cognito-idp:AdminGetUser"}, Resources: []Value{{Literal: "*"}}},
		"MixedInOne": {Effect: "Allow", Actions: []string{"cognito-idp:AdminGetUser", "dynamodb:GetItem"}, Resources: []Value{pool}},
	} {
		if _, err := (Function{LogicalID: "F", Statements: []Statement{st}}).CognitoGrants(); err == nil {
			t.Errorf("%s: CognitoGrants took %v", name, st)
		}
	}
}

// TestLifecycleRules: a bucket's lifecycle rules are read with their
// prefix (the rule's own, or its Filter's), expiry days, noncurrent days
// and delete-marker removal; a bucket without rules has none.
func TestLifecycleRules(t *testing.T) {
	tmpl, err := Parse([]byte(`
Resources:
  Files:
    Type: AWS::S3::Bucket
    Properties:
      LifecycleConfiguration:
        Rules:
          - Id: A
            Status: Enabled
            Prefix: a/
            ExpirationInDays: 30
            NoncurrentVersionExpiration:
              NoncurrentDays: 1
          - Id: B
            Status: Disabled
            Filter:
              Prefix: b/
            ExpiredObjectDeleteMarker: true
  Plain:
    Type: AWS::S3::Bucket
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []LifecycleRule{
		{ID: "A", Status: "Enabled", Prefix: "a/", ExpirationInDays: 30, NoncurrentDays: 1},
		{ID: "B", Status: "Disabled", Prefix: "b/", ExpiredObjectDeleteMarker: true},
	}
	if got := tmpl.Lifecycle["Files"]; !slices.Equal(got, want) {
		t.Errorf("Lifecycle[Files] = %+v, want %+v", got, want)
	}
	if got := tmpl.Lifecycle["Plain"]; len(got) != 0 {
		t.Errorf("Lifecycle[Plain] = %+v, want none", got)
	}
}
