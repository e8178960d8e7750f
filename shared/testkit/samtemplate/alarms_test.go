package samtemplate

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"stampduty/shared/metrics"
)

// The template's alarms, their topic and the dashboard (issue 23), checked
// against the metrics the service declares (metrics.Defs) and those AWS
// publishes. monitoringProblems does the checking, so that
// TestMonitoringChecksFail can show each check failing on a template broken
// on purpose.

// awsMetrics are the AWS namespaces' metrics the template may name, each
// with the dimension sets AWS publishes it with.
var awsMetrics = map[string]map[string][][]string{
	"AWS/Lambda": {
		"Errors": {{"FunctionName"}}, "Throttles": {{"FunctionName"}},
		"Invocations": {{"FunctionName"}}, "Duration": {{"FunctionName"}},
	},
	// An HTTP API's metrics (not a REST API's 4XXError and 5XXError).
	"AWS/ApiGateway": {
		"Count": {{"ApiId"}, {"ApiId", "Stage"}}, "4xx": {{"ApiId"}, {"ApiId", "Stage"}},
		"5xx": {{"ApiId"}, {"ApiId", "Stage"}}, "Latency": {{"ApiId"}, {"ApiId", "Stage"}},
	},
	"AWS/DynamoDB": {
		"ThrottledRequests":  {{"TableName", "Operation"}},
		"ReadThrottleEvents": {{"TableName"}}, "WriteThrottleEvents": {{"TableName"}},
	},
}

// dimensionTargets is the resource type whose !Ref a dimension's value must
// be (the name AWS reports it by).
var dimensionTargets = map[string]string{
	"FunctionName": "AWS::Serverless::Function",
	"ApiId":        "AWS::Serverless::HttpApi",
	"TableName":    "AWS::DynamoDB::Table",
}

// alarm is an AWS::CloudWatch::Alarm's properties.
type alarm struct {
	metricStat         `yaml:",inline"`
	Statistic          string      `yaml:"Statistic"`
	Threshold          Value       `yaml:"Threshold"`
	TreatMissingData   string      `yaml:"TreatMissingData"`
	AlarmActions       []Value     `yaml:"AlarmActions"`
	OKActions          []Value     `yaml:"OKActions"`
	Metrics            []dataQuery `yaml:"Metrics"`
	ComparisonOperator string      `yaml:"ComparisonOperator"`
}

// metricStat names one metric: its namespace, name and dimensions.
type metricStat struct {
	Namespace  Value       `yaml:"Namespace"`
	MetricName string      `yaml:"MetricName"`
	Dimensions []dimension `yaml:"Dimensions"`
}

type dimension struct {
	Name  string `yaml:"Name"`
	Value Value  `yaml:"Value"`
}

// dataQuery is one entry of an alarm's Metrics: a metric, or an
// expression (metric math over the others' Ids, or a Metrics Insights
// query).
type dataQuery struct {
	ID         string `yaml:"Id"`
	Expression Value  `yaml:"Expression"`
	MetricStat *struct {
		Metric metricStat `yaml:"Metric"`
	} `yaml:"MetricStat"`
}

// monitoring is what the checks read: the resources' types, the
// parameters, the alarms, the dashboards' bodies, and the namespace the
// functions write their metrics to.
type monitoring struct {
	tmpl       *Template
	types      map[string]string
	params     map[string]Parameter
	alarms     map[string]alarm
	dashboards map[string]Value
	namespace  Value
}

// readMonitoring parses the template's alarms and dashboards.
func readMonitoring(data []byte) (*monitoring, error) {
	tmpl, err := Parse(data)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Parameters map[string]Parameter `yaml:"Parameters"`
		Resources  map[string]struct {
			Type       string    `yaml:"Type"`
			Properties yaml.Node `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	m := &monitoring{tmpl: tmpl, types: map[string]string{}, params: doc.Parameters, alarms: map[string]alarm{}, dashboards: map[string]Value{}}
	for id, r := range doc.Resources {
		m.types[id] = r.Type
		switch r.Type {
		case "AWS::CloudWatch::Alarm":
			var a alarm
			if err := r.Properties.Decode(&a); err != nil {
				return nil, fmt.Errorf("%s: %w", id, err)
			}
			m.alarms[id] = a
		case "AWS::CloudWatch::Dashboard":
			var d struct {
				Body Value `yaml:"DashboardBody"`
			}
			if err := r.Properties.Decode(&d); err != nil {
				return nil, fmt.Errorf("%s: %w", id, err)
			}
			m.dashboards[id] = d.Body
		}
	}
	for _, f := range tmpl.Functions {
		if v, ok := f.Env[metrics.NamespaceVar]; ok {
			m.namespace = v
		}
	}
	return m, nil
}

// use is one metric an alarm or the dashboard names: its namespace (as
// written, or resolved for the dashboard), name, and dimensions with their
// values (nil values: any, as a SEARCH or a Metrics Insights schema asks).
type use struct {
	namespace string
	name      string
	dims      map[string]Value
}

// uses returns the metrics alarm a names.
func (a alarm) uses() ([]use, error) {
	var out []use
	add := func(s metricStat) {
		u := use{namespace: s.Namespace.Sub + s.Namespace.Literal, name: s.MetricName, dims: map[string]Value{}}
		for _, d := range s.Dimensions {
			u.dims[d.Name] = d.Value
		}
		out = append(out, u)
	}
	if a.MetricName != "" {
		add(a.metricStat)
	}
	for _, q := range a.Metrics {
		switch e := q.Expression.Sub + q.Expression.Literal; {
		case q.MetricStat != nil:
			add(q.MetricStat.Metric)
		case strings.HasPrefix(strings.ToUpper(e), "SELECT"):
			m := insightsQuery.FindStringSubmatch(e)
			if m == nil {
				return nil, fmt.Errorf("Metrics Insights query %q is not SELECT FN(metric) FROM SCHEMA(\"namespace\", dimensions...)", e)
			}
			u := use{namespace: m[2], name: m[1], dims: map[string]Value{}}
			for _, d := range strings.Split(m[3], ",") {
				if d = strings.TrimSpace(d); d != "" {
					u.dims[d] = Value{}
				}
			}
			out = append(out, u)
		}
	}
	return out, nil
}

// insightsQuery is the form of the Metrics Insights queries the template's
// alarms may use: one metric over one dimension set of one namespace.
var insightsQuery = regexp.MustCompile(`^SELECT [A-Z]+\((\w+)\) FROM SCHEMA\("([^"]+)"((?:, *\w+)*)\)$`)

// searchExpr is a dashboard's SEARCH expression of one metric in one schema.
var searchExpr = regexp.MustCompile(`^SEARCH\('\{([^}]*)\} MetricName="(\w+)"'`)

// checkUse returns what is wrong with u: a service metric must be declared
// in metrics.Defs with exactly its dimensions, in the stack's namespace; an
// AWS one must be one AWS publishes, with a dimension set it publishes.
// Dimension values that are given must name a resource of the right type
// (refs), or be one of values (the dashboard, resolved).
func (m *monitoring) checkUse(u use, namespace string, values map[string][]string) []string {
	var names []string
	for d := range u.dims {
		names = append(names, d)
	}
	slices.Sort(names)
	var problems []string
	switch {
	case u.namespace == namespace:
		def, ok := metrics.Lookup(metrics.Name(u.name))
		if !ok {
			return []string{fmt.Sprintf("metric %s is not declared in metrics.Defs", u.name)}
		}
		if want := slices.Sorted(slices.Values(def.Dimensions)); !slices.Equal(names, want) {
			problems = append(problems, fmt.Sprintf("metric %s with dimensions %v, declared with %v", u.name, names, want))
		}
	case awsMetrics[u.namespace] != nil:
		sets, ok := awsMetrics[u.namespace][u.name]
		if !ok {
			return []string{fmt.Sprintf("%s publishes no metric %s (or the test does not know it)", u.namespace, u.name)}
		}
		if !slices.ContainsFunc(sets, func(s []string) bool { return slices.Equal(slices.Sorted(slices.Values(s)), names) }) {
			problems = append(problems, fmt.Sprintf("%s %s with dimensions %v, which AWS does not publish (%v)", u.namespace, u.name, names, sets))
		}
	default:
		return []string{fmt.Sprintf("metric %s in namespace %q: neither the stack's (%s) nor AWS's", u.name, u.namespace, namespace)}
	}
	for _, d := range names {
		v := u.dims[d]
		if v == (Value{}) {
			continue
		}
		if values != nil {
			if !slices.Contains(values[d], v.Literal) {
				problems = append(problems, fmt.Sprintf("%s's dimension %s = %q names nothing of the stack", u.name, d, v.Literal))
			}
			continue
		}
		if want := dimensionTargets[d]; want == "" || m.types[v.Ref] != want {
			problems = append(problems, fmt.Sprintf("%s's dimension %s = %s, want a !Ref to an %s", u.name, d, v, typeName(want)))
		}
	}
	return problems
}

// typeName names a resource type for messages.
func typeName(t string) string {
	if t == "" {
		return "(dimension the test does not know)"
	}
	return t
}

// alarmProblems checks every alarm: its metrics (checkUse), that it
// notifies an SNS topic of the template, that its threshold and every
// parameter its expression names is a Number parameter with a default,
// and that it says what missing data means.
func (m *monitoring) alarmProblems() []string {
	var problems []string
	say := func(id, format string, args ...any) {
		problems = append(problems, id+": "+fmt.Sprintf(format, args...))
	}
	numberParam := func(id, what, name string) {
		p, ok := m.params[name]
		if !ok || p.Type != "Number" || p.Default == "" {
			say(id, "%s %s is not a Number parameter with a default", what, name)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(m.alarms)) {
		a := m.alarms[id]
		uses, err := a.uses()
		if err != nil {
			say(id, "%v", err)
		}
		if len(uses) == 0 {
			say(id, "names no metric")
		}
		for _, u := range uses {
			for _, p := range m.checkUse(u, m.namespace.Sub, nil) {
				say(id, "%s", p)
			}
		}
		if !slices.ContainsFunc(a.AlarmActions, func(v Value) bool { return m.types[v.Ref] == "AWS::SNS::Topic" }) {
			say(id, "AlarmActions %v do not notify an SNS topic of the stack", a.AlarmActions)
		}
		for _, v := range a.OKActions {
			if m.types[v.Ref] != "AWS::SNS::Topic" {
				say(id, "OKActions %s is not an SNS topic of the stack", v)
			}
		}
		if a.Threshold.Ref == "" {
			say(id, "Threshold %s is not a parameter (!Ref)", a.Threshold)
		} else {
			numberParam(id, "Threshold", a.Threshold.Ref)
		}
		for _, q := range a.Metrics {
			for _, ref := range regexp.MustCompile(`\$\{([^}]+)\}`).FindAllStringSubmatch(q.Expression.Sub, -1) {
				if !strings.HasPrefix(ref[1], "AWS::") {
					numberParam(id, "expression's", ref[1])
				}
			}
		}
		if !slices.Contains([]string{"breaching", "notBreaching", "ignore", "missing"}, a.TreatMissingData) {
			say(id, "TreatMissingData %q: say what no data means for this alarm", a.TreatMissingData)
		}
	}
	// Each API function's 5xx rate (one alarm watching both its Faults and
	// its Requests), and each scheduled function's errors.
	for _, f := range m.tmpl.Functions {
		var rate, errs bool
		for _, a := range m.alarms {
			uses, _ := a.uses()
			seen := map[string]bool{}
			for _, u := range uses {
				if u.dims["FunctionName"].Ref == f.LogicalID {
					seen[u.namespace+" "+u.name] = true
				}
			}
			rate = rate || seen[m.namespace.Sub+" "+string(metrics.Faults)] && seen[m.namespace.Sub+" "+string(metrics.Requests)]
			errs = errs || seen["AWS/Lambda Errors"]
		}
		if len(f.Routes) > 0 && !rate {
			say(f.LogicalID, "serves the API and no alarm watches its 5xx rate (Faults / Requests)")
		}
		if len(f.Schedules) > 0 && !errs {
			say(f.LogicalID, "runs on a schedule and no alarm watches its Errors (AWS/Lambda)")
		}
	}
	return problems
}

// dashboardProblems resolves each dashboard's body as CloudWatch would get
// it (with made-up names for the stack's resources) and checks every
// metric it names (checkUse), that its alarm widgets show every alarm of
// the template and nothing else, and that every declared metric is shown.
func (m *monitoring) dashboardProblems() []string {
	var problems []string
	const stack = "stack"
	names := map[string]string{"AWS::StackName": stack, "AWS::Region": "ap-south-1", "AWS::URLSuffix": "amazonaws.com"}
	values := map[string][]string{}
	arns := map[string]string{}
	for id, typ := range m.types {
		names[id] = stack + "-" + id + "-X1"
		names[id+".Arn"] = "arn:aws:x:ap-south-1:123456789012:" + id
		if typ == "AWS::CloudWatch::Alarm" {
			arns[names[id+".Arn"]] = id
		}
		for d, want := range dimensionTargets {
			if typ == want {
				values[d] = append(values[d], names[id])
			}
		}
	}
	namespace, err := m.tmpl.Resolve(m.namespace, nil, names)
	if err != nil {
		return []string{fmt.Sprintf("the functions' %s: %v", metrics.NamespaceVar, err)}
	}
	if len(m.dashboards) == 0 {
		problems = append(problems, "no AWS::CloudWatch::Dashboard")
	}
	for _, id := range slices.Sorted(maps.Keys(m.dashboards)) {
		say := func(format string, args ...any) { problems = append(problems, id+": "+fmt.Sprintf(format, args...)) }
		text, err := m.tmpl.Resolve(m.dashboards[id], nil, names)
		if err != nil {
			say("DashboardBody: %v", err)
			continue
		}
		var body struct {
			Widgets []struct {
				Type       string `json:"type"`
				Properties struct {
					Metrics [][]any  `json:"metrics"`
					Alarms  []string `json:"alarms"`
				} `json:"properties"`
			} `json:"widgets"`
		}
		if err := json.Unmarshal([]byte(text), &body); err != nil {
			say("DashboardBody is not JSON once substituted: %v", err)
			continue
		}
		shown, alarms := map[string]bool{}, map[string]bool{}
		for _, w := range body.Widgets {
			for _, arn := range w.Properties.Alarms {
				if a, ok := arns[arn]; ok {
					alarms[a] = true
				} else {
					say("alarm widget shows %s, no alarm of the stack", arn)
				}
			}
			for _, row := range w.Properties.Metrics {
				u, ok, err := dashboardUse(row)
				if err != nil {
					say("%v", err)
				}
				if !ok {
					continue
				}
				for _, p := range m.checkUse(u, namespace, values) {
					say("%s", p)
				}
				if u.namespace == namespace {
					shown[u.name] = true
				}
			}
		}
		for _, a := range slices.Sorted(maps.Keys(m.alarms)) {
			if !alarms[a] {
				say("no alarm widget shows %s", a)
			}
		}
		for _, d := range metrics.Defs {
			if !shown[string(d.Name)] {
				say("declared metric %s is not shown", d.Name)
			}
		}
	}
	return problems
}

// dashboardUse reads one row of a metric widget: a metric
// [namespace, name, dimension, value, ..., {options}], or an expression
// (a SEARCH is read as the metric it searches; other math, over the
// rows' ids, is no metric).
func dashboardUse(row []any) (use, bool, error) {
	if len(row) == 0 {
		return use{}, false, fmt.Errorf("empty metric row")
	}
	if opts, ok := row[0].(map[string]any); ok {
		e, _ := opts["expression"].(string)
		if !strings.HasPrefix(e, "SEARCH(") {
			return use{}, false, nil
		}
		m := searchExpr.FindStringSubmatch(e)
		if m == nil {
			return use{}, false, fmt.Errorf("SEARCH %q is not of one MetricName in one {namespace,dimensions} schema", e)
		}
		schema := strings.Split(m[1], ",")
		u := use{namespace: strings.Trim(schema[0], `"`), name: m[2], dims: map[string]Value{}}
		for _, d := range schema[1:] {
			u.dims[strings.Trim(d, `"`)] = Value{}
		}
		return u, true, nil
	}
	var s []string
	for _, v := range row {
		if str, ok := v.(string); ok {
			s = append(s, str)
		}
	}
	if len(s) < 2 || len(s)%2 != 0 || slices.Contains(s, ".") {
		return use{}, false, fmt.Errorf("metric row %v is not [namespace, name, dimension, value, ...] (no \".\" shorthand)", row)
	}
	u := use{namespace: s[0], name: s[1], dims: map[string]Value{}}
	for i := 2; i < len(s); i += 2 {
		u.dims[s[i]] = Value{Literal: s[i+1]}
	}
	return u, true, nil
}

// templateText reads template.yaml.
func templateText(t *testing.T) []byte {
	t.Helper()
	root, err := Root(".")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestAlarms: every alarm names declared metrics of the stack's namespace
// with their declared dimensions, or AWS's with dimensions AWS publishes,
// notifies the stack's SNS topic, takes its threshold (and its expression's
// numbers) from Number parameters with defaults, and says what missing data
// means; every API function has a 5xx-rate alarm and every scheduled
// function an errors alarm.
func TestAlarms(t *testing.T) {
	m, err := readMonitoring(templateText(t))
	if err != nil {
		t.Fatal(err)
	}
	if m.namespace.Sub == "" {
		t.Fatalf("the functions' %s = %s, want a !Sub naming the stack", metrics.NamespaceVar, m.namespace)
	}
	if len(m.alarms) == 0 {
		t.Fatal("no AWS::CloudWatch::Alarm")
	}
	for _, p := range m.alarmProblems() {
		t.Error(p)
	}
}

// TestDashboard: the dashboard's body, substituted, is JSON that names
// only declared metrics (or AWS's, with real dimensions and the stack's
// resources), shows every alarm's state and every declared metric.
func TestDashboard(t *testing.T) {
	m, err := readMonitoring(templateText(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.dashboardProblems() {
		t.Error(p)
	}
}

// TestAlarmEmail: the alarms' email subscription exists only when
// AlarmEmail is set, and AlarmEmail is empty by default.
func TestAlarmEmail(t *testing.T) {
	data := templateText(t)
	var doc struct {
		Parameters map[string]Parameter `yaml:"Parameters"`
		Resources  map[string]struct {
			Type       string `yaml:"Type"`
			Condition  string `yaml:"Condition"`
			Properties struct {
				Protocol string `yaml:"Protocol"`
				Endpoint Value  `yaml:"Endpoint"`
				TopicArn Value  `yaml:"TopicArn"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if p, ok := doc.Parameters["AlarmEmail"]; !ok || p.Default != "" {
		t.Errorf("AlarmEmail: declared %v, default %q; want a parameter, empty by default", ok, p.Default)
	}
	subs := 0
	for id, r := range doc.Resources {
		if r.Type != "AWS::SNS::Subscription" {
			continue
		}
		subs++
		if r.Properties.Protocol != "email" || r.Properties.Endpoint.Ref != "AlarmEmail" || doc.Resources[r.Properties.TopicArn.Ref].Type != "AWS::SNS::Topic" {
			t.Errorf("%s: %s to %s on %s, want email to !Ref AlarmEmail on the topic", id, r.Properties.Protocol, r.Properties.Endpoint, r.Properties.TopicArn)
		}
		for _, c := range []struct {
			email string
			want  bool
		}{{"", false}, {"owner@example.in", true}} {
			tmpl, err := ParseWith(data, map[string]string{"AlarmEmail": c.email})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := tmpl.condition(r.Condition, nil); err != nil || got != c.want {
				t.Errorf("%s with AlarmEmail %q: condition %s = %v, %v; want %v", id, c.email, r.Condition, got, err, c.want)
			}
		}
	}
	if subs != 1 {
		t.Errorf("%d SNS subscriptions, want 1 (AlarmEmail's)", subs)
	}
}

// TestMonitoringChecksFail: each check of TestAlarms and TestDashboard
// fails on a template broken in the way it checks for.
func TestMonitoringChecksFail(t *testing.T) {
	data := string(templateText(t))
	for _, c := range []struct {
		name, old, new, says string
	}{
		{"UndeclaredMetric", "MetricName: OldestDueAge\n", "MetricName: OldestDueAges\n", "OldestDueAges is not declared"},
		{"UndeclaredDimension", "- Name: FunctionName\n                  Value: !Ref CreateOrderFunction", "- Name: Function\n                  Value: !Ref CreateOrderFunction", "with dimensions [Function], declared with [FunctionName]"},
		{"OtherNamespace", "Namespace: !Sub \"StampDuty/${AWS::StackName}\"\n      MetricName: EventsGivenUp", "Namespace: !Sub \"StampDuty/other\"\n      MetricName: EventsGivenUp", "neither the stack's"},
		{"AWSDimensionAWSDoesNotPublish", "- Name: ApiId\n", "- Name: ApiName\n", "which AWS does not publish"},
		{"DimensionNamesNoResource", "Value: !Ref WebhookDispatchFunction", "Value: !Ref AlarmTopic", "want a !Ref to an AWS::Serverless::Function"},
		{"InsightsQueryUndeclared", "SUM(DynamoDBThrottles)", "SUM(DynamoThrottles)", "DynamoThrottles is not declared"},
		{"NoTopic", "      AlarmActions: [!Ref AlarmTopic]\n\n  # Any error", "\n  # Any error", "EventsGivenUpAlarm: AlarmActions [] do not notify"},
		{"OKActionsElsewhere", "      OKActions: [!Ref AlarmTopic]\n\n  # DynamoDB", "      OKActions: [!Ref Api]\n\n  # DynamoDB", "Api5xxAlarm: OKActions !Ref Api is not an SNS topic"},
		{"LiteralThreshold", "Threshold: !Ref OldestDueAgeThreshold", "Threshold: 600", "Threshold 600 is not a parameter"},
		{"ThresholdWithoutDefault", "    Default: 600\n    MinValue: 60\n", "    MinValue: 60\n", "Threshold OldestDueAgeThreshold is not a Number parameter with a default"},
		{"ExpressionNamesNoParameter", "${FaultMinFaults}", "${FaultMinimum}", "expression's FaultMinimum is not a Number parameter"},
		{"MissingDataUnsaid", "      TreatMissingData: ignore\n", "", "FileSweeperErrorsAlarm: TreatMissingData \"\""},
		{"APIFunctionWithout5xxAlarm", "Value: !Ref NotFoundFunction", "Value: !Ref ListOrdersFunction", "NotFoundFunction: serves the API and no alarm watches its 5xx rate"},
		{"ScheduledFunctionWithoutErrorsAlarm", "Value: !Ref FileSweeperFunction", "Value: !Ref WebhookDispatchFunction", "FileSweeperFunction: runs on a schedule and no alarm watches its Errors"},
		{"DashboardUndeclaredMetric", `"Quotes",`, `"Quote",`, "metric Quote is not declared"},
		{"DashboardSearchUndeclared", `MetricName=\"PapersMoved\"`, `MetricName=\"PaperMoved\"`, "metric PaperMoved is not declared"},
		{"DashboardWrongDimension", `\"StampDuty/${AWS::StackName}\",State} MetricName=\"OrdersCreated\"`, `\"StampDuty/${AWS::StackName}\",Status} MetricName=\"OrdersCreated\"`, "OrdersCreated with dimensions [Status], declared with [State]"},
		{"DashboardMetricNotShown", `,["StampDuty/${AWS::StackName}","EventsRelayed",{"label":"relayed"}]`, ``, "declared metric EventsRelayed is not shown"},
		{"DashboardNamesNoFunction", `"FunctionName","${FileSweeperFunction}"`, `"FunctionName","FileSweeper"`, `dimension FunctionName = "FileSweeper" names nothing`},
		{"DashboardMissesAnAlarm", `,"${FileSweeperErrorsAlarm.Arn}"`, ``, "no alarm widget shows FileSweeperErrorsAlarm"},
		{"DashboardNotJSON", `{"widgets":[`, `{"widgets":[,`, "is not JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(data, c.old) {
				t.Fatalf("the template has no %q to break", c.old)
			}
			m, err := readMonitoring([]byte(strings.Replace(data, c.old, c.new, 1)))
			if err != nil {
				t.Fatal(err)
			}
			problems := strings.Join(append(m.alarmProblems(), m.dashboardProblems()...), "\n")
			if !strings.Contains(problems, c.says) {
				t.Errorf("the checks said:\n%s\nwant them to say %q", problems, c.says)
			}
		})
	}
}
