package metrics

// This file is the one place the service's metrics are named: every
// metric a function emits is declared here with its unit and dimensions,
// and the template's alarms and dashboard name only these (a test reads
// the template and the functions' log lines against this list).

// NamespaceVar is the variable that names the CloudWatch namespace the
// functions' metrics go to: the template sets it to StampDuty/<stack>, so
// that two stacks in one account never add to each other's alarms.
const NamespaceVar = "METRICS_NAMESPACE"

// Unit is a CloudWatch unit.
type Unit string

// The units the service's metrics use.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
	Seconds      Unit = "Seconds"
)

// Name is a metric's name.
type Name string

// The service's metrics.
const (
	// Requests counts the API requests a function answered.
	Requests Name = "Requests"
	// Faults counts the API requests a function answered 5xx: with
	// Requests, the 5xx rate its alarm watches.
	Faults Name = "Faults"
	// Latency is a request's time in the function, in milliseconds.
	Latency Name = "Latency"
	// OrdersCreated counts orders created, by the state of their article.
	OrdersCreated Name = "OrdersCreated"
	// PapersOrdered counts the papers of the orders created (quantities).
	PapersOrdered Name = "PapersOrdered"
	// PapersMoved counts papers moved, by the status they moved to.
	PapersMoved Name = "PapersMoved"
	// FilesAttached counts files attached, by kind (document, certificate).
	FilesAttached Name = "FilesAttached"
	// Quotes counts quotes answered.
	Quotes Name = "Quotes"
	// EventsRelayed counts webhook events relayed from orders' outboxes
	// into delivery jobs.
	EventsRelayed Name = "EventsRelayed"
	// Attempts counts delivery attempts, by outcome: 2xx; 4xx (410 and
	// redirects, which are not followed, too); 5xx; timeout (no status
	// within the attempt's 10 s, DNS included); refused (any other attempt
	// without a status: the address guard, an unknown host, a refused or
	// reset connection, TLS). package webhooks maps them (attemptOutcome).
	Attempts Name = "Attempts"
	// EventsGivenUp counts deliveries whose last attempt failed.
	EventsGivenUp Name = "EventsGivenUp"
	// OldestDueAge is how long the oldest due delivery has waited, in
	// seconds, as a dispatcher pass sees it; written only while one is due
	// (an idle dispatcher writes no metric).
	OldestDueAge Name = "OldestDueAge"
	// DynamoDBThrottles counts DynamoDB calls answered with a throttling
	// error (each one, retried or not).
	DynamoDBThrottles Name = "DynamoDBThrottles"
	// DynamoDBRetries counts DynamoDB calls retried by the SDK.
	DynamoDBRetries Name = "DynamoDBRetries"
	// LedgerRepairs counts the writes the ledger's reconciler made that a
	// crash had left unmade (accounts.md): one per repair.
	LedgerRepairs Name = "LedgerRepairs"
	// LedgerMismatch counts the accounts a reconciler run found whose sums
	// disagree (it repairs none of them): any is a fault to look into.
	LedgerMismatch Name = "LedgerMismatch"
)

// Dimension names.
const (
	// FunctionName is the Lambda function's name, as AWS/Lambda's
	// metrics name it (AWS_LAMBDA_FUNCTION_NAME).
	FunctionName = "FunctionName"
	State        = "State"
	Status       = "Status"
	Kind         = "Kind"
	Outcome      = "Outcome"
)

// Def is a declared metric: its name, unit and the dimensions it is
// emitted with (one dimension set; never a caller id, whose cardinality
// would grow the bill with the callers).
type Def struct {
	Name       Name
	Unit       Unit
	Dimensions []string
}

// Defs are the service's metrics, each declared once.
var Defs = []Def{
	{Requests, Count, []string{FunctionName}},
	{Faults, Count, []string{FunctionName}},
	{Latency, Milliseconds, []string{FunctionName}},
	{OrdersCreated, Count, []string{State}},
	{PapersOrdered, Count, []string{State}},
	{PapersMoved, Count, []string{Status}},
	{FilesAttached, Count, []string{Kind}},
	{Quotes, Count, nil},
	{EventsRelayed, Count, nil},
	{Attempts, Count, []string{Outcome}},
	{EventsGivenUp, Count, nil},
	{OldestDueAge, Seconds, nil},
	{DynamoDBThrottles, Count, []string{FunctionName}},
	{DynamoDBRetries, Count, []string{FunctionName}},
	{LedgerRepairs, Count, nil},
	{LedgerMismatch, Count, nil},
}

// Lookup returns the declaration of the metric name.
func Lookup(name Name) (Def, bool) {
	for _, d := range Defs {
		if d.Name == name {
			return d, true
		}
	}
	return Def{}, false
}
