// Command stampctl is the operator's tool of the stamp-duty service: it
// issues, lists and revokes API tokens, imports and exports the articles
// catalogue and lists the webhooks that keep failing, straight in the
// service's DynamoDB tables, with the operator's own AWS credentials; its
// orders commands call the operator API.
//
// Run `stampctl help` for the commands and the environment it reads.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"
)

// usageText is what `stampctl help` and every usage error print.
const usageText = `usage: stampctl <command> [arguments]

Tokens (the API's bearer credentials; a token is shown once, when it is made,
and only its HMAC-SHA256 under the deployment's hashing key is stored):
  stampctl token create --owner NAME
        issue a token for NAME (1 to 64 letters, digits, '.', '_' or '-');
        the token is printed alone on the last line of the output
  stampctl token list
        list every token: ID, owner, creation time, status
  stampctl token revoke ID
        revoke the token whose ID (12 hex digits, from the list) is ID; it
        stops working everywhere within 5 seconds (functions cache a token
        that long)

Articles (the purpose x state catalogue that prices orders):
  stampctl articles import FILE
        check every article of FILE (- for stdin) and, when all are valid,
        create or update each one by (purpose_name, state), keeping the id
        and documentId of existing ones; articles not in FILE are left as
        they are. If any article is invalid nothing is written and every
        error is printed.
  stampctl articles export [FILE]
        write the whole catalogue to FILE (default stdout) in the format
        import reads, sorted by purpose_name and state

Orders (the operator API under /api/ops/, called with requests signed by
your AWS credentials; the API decides what is allowed and says why not):
  stampctl orders queue [--status S] [--page-size N] [--cursor C]
        the orders waiting in status S (Pending by default), oldest first
        across all callers; prints the command for the next page
  stampctl orders show DOC
        one order as operators see it (with its owner and who changed it)
  stampctl orders advance DOC --to STATUS [--ref R] [--certificate-number N]
        [--fulfillment F]
        move the order's fulfillment one step: Created needs --ref (the
        unique_doc_ref), Procured --certificate-number, Printed an attached
        certificate
  stampctl orders attach-certificate DOC FILE [--name NAME] [--fulfillment F]
        upload the certificate PDF of a Procured fulfillment
  stampctl orders download DOC [--out FILE] [--fulfillment F]
        save the certificate through its pre-signed address, checking its
        SHA-256
  stampctl orders backfill
        once, after the first deploy with the work queue: put the orders
        stored before it into the queue (straight in ORDERS_TABLE; running
        it again changes nothing)

Webhooks (straight in WEBHOOKS_TABLE and DELIVERIES_TABLE):
  stampctl webhooks failing [-min-attempts N] [-json]
        across all callers, each webhook with events still waiting after at
        least N failed attempts (default 1), and each one a receiver's 410
        disabled: owner, documentId, URL, enabled, events waiting, the
        oldest waiting event's time, the most attempts one has had, the
        last attempt (status, when) and when the next is due; -json prints
        them as a JSON list. Says so when there are none.

Environment:
  STAMPDUTY_API_URL
        the API for the orders commands: the stack's ApiUrl output; by
        default the local stack's, http://127.0.0.1:3000
  ARTICLES_TABLE, TOKENS_TABLE, COUNTERS_TABLE, ORDERS_TABLE,
  WEBHOOKS_TABLE, DELIVERIES_TABLE
        the tables; by default ArticlesTable, TokensTable, CountersTable,
        OrdersTable, WebhooksTable and DeliveriesTable, the names the local
        stack gives them. On AWS set them from the stack's outputs
        ArticlesTableName, TokensTableName, CountersTableName,
        OrdersTableName, WebhooksTableName and DeliveriesTableName, e.g.
          aws cloudformation describe-stacks --stack-name STACK \
            --query 'Stacks[0].Outputs' --output table
  DYNAMODB_ENDPOINT
        a local DynamoDB engine instead of AWS, e.g. http://127.0.0.1:8000
        (the local stack's). With it, EC2 instance credentials are not
        looked up, and when no AWS credentials or region are configured
        stampctl uses region us-east-1 and dummy credentials.
  TOKEN_HASH_KEY, TOKEN_HASH_KEY_PARAMETER
        token create hashes the new token with the key the functions use:
        TOKEN_HASH_KEY if set; with DYNAMODB_ENDPOINT the local stacks' key;
        otherwise the SSM parameter TOKEN_HASH_KEY_PARAMETER (default
        /stamp-duty/token-hash-key, the stack's TokenHashKeyParameter).
  AWS credentials and region come from the AWS SDK's default chain:
  AWS_PROFILE and the shared config files (including SSO), AWS_REGION,
  AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, web identity,
  container and instance roles.

Exit status: 0 on success, 1 when a command fails, 2 on bad usage.
`

// usageError is a command line stampctl cannot run: it prints the message
// (if any) and the usage text, and exits with status 2.
type usageError struct{ msg string }

// Error returns the message.
func (e usageError) Error() string { return e.msg }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...)}
}

// cli is one run of stampctl: its input, output and environment.
type cli struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	now    func() time.Time
}

// command is a subcommand: its two words ("token create") and what runs it
// with a flag set of that name and the arguments after them.
type command struct {
	name string
	run  func(c *cli, fs *flag.FlagSet, args []string) error
}

// commands are every subcommand of stampctl.
var commands = []command{
	{"token create", (*cli).tokenCreate},
	{"token list", (*cli).tokenList},
	{"token revoke", (*cli).tokenRevoke},
	{"articles import", (*cli).articlesImport},
	{"articles export", (*cli).articlesExport},
	{"orders queue", (*cli).ordersQueue},
	{"orders show", (*cli).ordersShow},
	{"orders advance", (*cli).ordersAdvance},
	{"orders attach-certificate", (*cli).ordersAttachCertificate},
	{"orders download", (*cli).ordersDownload},
	{"orders backfill", (*cli).ordersBackfill},
	{"webhooks failing", (*cli).webhooksFailing},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// run executes stampctl with args (the command line without the program
// name) and returns its exit status: 0 on success, 1 when the command
// failed, 2 on bad usage. getenv supplies stampctl's own variables
// (DYNAMODB_ENDPOINT and the *_TABLE names); the AWS SDK reads its own
// (AWS_PROFILE, AWS_REGION, ...) from the process environment and the
// shared config files, as every AWS tool does.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) (code int) {
	defer func() {
		// A bug must not print a stack trace that could hold a token.
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "stampctl: internal error: %v\n", r)
			code = 1
		}
	}()
	c := &cli{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv, now: time.Now}
	err := c.dispatch(args)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		if ue.msg != "" {
			fmt.Fprintf(stderr, "stampctl: %s\n\n", ue.msg)
		}
		fmt.Fprint(stderr, usageText)
		return 2
	default:
		fmt.Fprintf(stderr, "stampctl: %s\n", err)
		return 1
	}
}

// dispatch finds the subcommand named by the first two words of args and
// runs it with the rest; a failure is prefixed with the subcommand's name.
func (c *cli) dispatch(args []string) error {
	if len(args) == 0 {
		return usagef("no command given")
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return usageError{}
	}
	if !slices.ContainsFunc(commands, func(cmd command) bool { return strings.HasPrefix(cmd.name, args[0]+" ") }) {
		return usagef("unknown command %q", args[0])
	}
	if len(args) < 2 {
		return usagef("%s: which command? (see below)", args[0])
	}
	name := args[0] + " " + args[1]
	for _, cmd := range commands {
		if cmd.name == name {
			err := cmd.run(c, flag.NewFlagSet(name, flag.ContinueOnError), args[2:])
			if ue := (usageError{}); err == nil || errors.As(err, &ue) {
				return err
			}
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return usagef("unknown command %q", name)
}

// parse parses the flags of args into fs (named for its subcommand) and
// returns the positional arguments, checking there are between min and max
// of them. Flags may come before, between or after the positional
// arguments. Flag errors, -h and a wrong count are usage errors.
func parse(fs *flag.FlagSet, args []string, min, max int) ([]string, error) {
	fs.SetOutput(io.Discard)
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, usageError{}
			}
			return nil, usagef("%s: %v", fs.Name(), err)
		}
		if fs.NArg() == 0 {
			break
		}
		rest, args = append(rest, fs.Arg(0)), fs.Args()[1:]
	}
	switch {
	case len(rest) < min:
		return nil, usagef("%s: missing argument", fs.Name())
	case len(rest) > max:
		return nil, usagef("%s: unexpected argument %q", fs.Name(), rest[max])
	}
	return rest, nil
}
