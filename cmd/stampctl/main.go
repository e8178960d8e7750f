// Command stampctl is the operator's tool of the stamp-duty service:
// tokens, the articles catalogue and the failing webhooks straight in the
// DynamoDB tables, orders through the operator API, on a deployed stack or
// the local one. `stampctl help` lists the commands; see README.md.
package main

import (
	"cmp"
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

// usageError is a command line stampctl cannot run: it prints the message
// (if any) and the usage of cmd, else the overview, and exits with 2.
type usageError struct {
	msg string
	cmd *command
}

// Error returns the message.
func (e usageError) Error() string { return e.msg }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{msg: fmt.Sprintf(format, args...)}
}

// errHelp is what parse returns for --help (or -h).
var errHelp = errors.New("help requested")

// cli is one run of stampctl: its input, output and environment, its
// --stack and --api-url, and the stack once read (stack).
type cli struct {
	ctx                   context.Context
	stdin                 io.Reader
	stdout, stderr        io.Writer
	getenv                func(string) string
	now                   func() time.Time
	stackFlag, apiURLFlag string
	stackRead             bool // stackInfo and stackErr hold what reading the stack gave
	stackInfo             *stackInfo
	stackErr              error
}

// command is a subcommand: its two words ("token create"), its synopsis
// after them ("DOC --to STATUS [--ref R]"), one paragraph of what it does,
// what it reads, and what runs it with a flag set of that name.
type command struct {
	name, args, about string
	reads             reads
	run               func(c *cli, fs *flag.FlagSet, args []string) error
}

// reads is what a command reads besides its arguments: the operator API,
// tables or the token hashing key; it decides the common flags it takes
// and the environment its help lists.
type reads struct {
	api     bool
	tables  []tableSpec
	hashKey bool
	pool    bool // the staff's Cognito user pool
}

// commands are every subcommand of stampctl, in the order help lists them.
var commands = []command{
	{"token create", "--owner NAME [--test] [--by WHO]",
		"issue a token for NAME (1 to 64 letters, digits, '.', '_' or '-'), creating the caller first when it has no record; " +
			"with --test, a test token (sdt_test_…) that sees only NAME's test data; " +
			"the token is printed alone on the last line of the output",
		reads{tables: []tableSpec{tokensSpec}, hashKey: true}, (*cli).tokenCreate},
	{"token list", "",
		"list every token: ID, owner, creation time, status, mode (live or test)",
		reads{tables: []tableSpec{tokensSpec}}, (*cli).tokenList},
	{"token revoke", "ID",
		"revoke the token whose ID (12 hex digits, from the list) is ID; it stops working everywhere within 5 seconds (functions cache a token that long)",
		reads{tables: []tableSpec{tokensSpec}}, (*cli).tokenRevoke},
	{"callers list", "",
		"every caller (those created and every token's owner): when and by whom it was created, its active and revoked tokens, its orders " +
			"(from each caller's order counter: one small read per caller, never a scan of the orders)",
		reads{tables: []tableSpec{tokensSpec, ordersSpec}}, (*cli).callersList},
	{"callers create", "NAME [--by WHO]",
		"create the caller NAME (1 to 64 letters, digits, '.', '_' or '-'), with no token yet; a name is taken once. " +
			"Its account opens with the stack's DefaultCreditLimit ($DEFAULT_CREDIT_LIMIT, else the stack's parameter; unlimited by default)",
		reads{tables: []tableSpec{tokensSpec, ordersSpec, ledgerSpec}}, (*cli).callersCreate},
	{"accounts show", "--owner NAME [--test]",
		"a caller's account (accounts.md): balance, held, available, credit limit, low-balance threshold, its number of entries; " +
			"--test: the caller's test account",
		reads{tables: []tableSpec{tokensSpec, ledgerSpec}}, (*cli).accountsShow},
	{"accounts entries", "--owner NAME [--test] [--page-size N] [--before SEQ]",
		"a page of the account's ledger entries, newest first (25 by default); prints the command for the next page",
		reads{tables: []tableSpec{tokensSpec, ledgerSpec}}, (*cli).accountsEntries},
	{"accounts credit", "--owner NAME --amount 1000.00 --reference R [--note N] [--test] [--by WHO]",
		"record money received (a bank transfer, its UTR as --reference) as a credit, by you (--by, else $STAMPDUTY_BY, else your IAM identity). " +
			"A reference is recorded once per account: the same reference and amount again prints the first credit and writes nothing; " +
			"another amount is refused",
		reads{tables: []tableSpec{tokensSpec, ledgerSpec}}, (*cli).accountsCredit},
	{"accounts adjust", "--owner NAME --amount -40.50 --note N [--request ID] [--test] [--by WHO]",
		"record an adjustment (a refund paid out, a bank charge): its sign is its direction, the note is required; one that would take " +
			"available below zero is refused. Prints its request id: give it as --request to retry a run whose outcome is unknown",
		reads{tables: []tableSpec{tokensSpec, ledgerSpec}}, (*cli).accountsAdjust},
	{"accounts limit", "--owner NAME --limit 0.00|unlimited [--yes] [--test] [--by WHO]",
		"set the account's credit limit (0.00: prepaid). A limit below what is held needs --yes: available is then negative and " +
			"every new order is refused until it is back at zero or above",
		reads{tables: []tableSpec{tokensSpec, ledgerSpec}}, (*cli).accountsLimit},
	{"staff list", "",
		"every staff account of the console, by email: role (admin, operator or none: signs in, may do nothing), its groups, " +
			"enabled or not, Cognito's status (FORCE_CHANGE_PASSWORD until the first sign-in, then CONFIRMED), when it was created",
		reads{pool: true}, (*cli).staffList},
	{"staff invite", "EMAIL --role admin|operator [--by WHO]",
		"create the account of EMAIL with the role; Cognito emails the person a temporary password (valid 7 days) and their first " +
			"sign-in sets their own (and TOTP unless the stack's ConsoleMfa is OFF). An email is invited once: change its role instead",
		reads{pool: true}, (*cli).staffInvite},
	{"staff role", "EMAIL --role admin|operator|none [--by WHO]",
		"change the person's role; rights are taken away first, so a failure halfway never leaves more than the new role's. " +
			"A lower role also signs them out everywhere (the tokens they hold expire within 15 minutes). " +
			"The last enabled admin cannot be demoted",
		reads{pool: true}, (*cli).staffRole},
	{"staff disable", "EMAIL [--by WHO]",
		"disable the account (it can no longer sign in; it keeps its role) and sign the person out everywhere. " +
			"The last enabled admin cannot be disabled",
		reads{pool: true}, (*cli).staffDisable},
	{"staff enable", "EMAIL [--by WHO]",
		"enable a disabled account again, with its role; the person signs in with their password as before",
		reads{pool: true}, (*cli).staffEnable},
	{"articles list", "",
		"every article, retired ones too: purpose, state, documentId, version, status, amounts and its last change (kind, when, by whom)",
		reads{tables: catalogueTables}, (*cli).articlesList},
	{"articles add", "PURPOSE STATE --min N --max N [--fixed N] [--follow true|false] [--factor X] [--by WHO]",
		"add an article (a retired one of the same purpose and state comes back, keeping its id and documentId), log the change " +
			"(who: --by, else $STAMPDUTY_BY, else your IAM identity on AWS, $USER locally) and publish the catalogue",
		reads{tables: catalogueTables}, (*cli).articlesAdd},
	{"articles edit", "PURPOSE STATE [--min N] [--max N] [--fixed N|none] [--follow true|false] [--factor X|none] [--version V] [--by WHO]",
		"change an article's amounts (the flags given; the rest stay), log the fields before and after, and publish the catalogue. " +
			"Orders already created keep the amounts they were priced with. With --version, refused when the article changed since that version; " +
			"an edit stored by someone else between this one's read and write is refused too (read it again), never overwritten",
		reads{tables: catalogueTables}, (*cli).articlesEdit},
	{"articles retire", "PURPOSE STATE [--by WHO]",
		"retire an article: new orders and quotes answer as for an article that does not exist, the public list leaves it out; " +
			"orders already created keep it; articles list still shows it, retired. Add it again to bring it back",
		reads{tables: catalogueTables}, (*cli).articlesRetire},
	{"articles log", "PURPOSE STATE | DOCUMENTID",
		"an article's change log, newest first: version, when, who, kind (added, edited, retired, imported, migrated), each field before → after",
		reads{tables: catalogueTables}, (*cli).articlesLog},
	{"articles import", "[--dry-run] [--retire-missing] [--by WHO] FILE",
		"check every article of FILE (- for stdin) and, when all are valid, add or change each one by (purpose_name, state), " +
			"keeping the id and documentId of existing ones and bringing retired ones back; articles not in FILE are left as they are, " +
			"or retired with --retire-missing. Each change is logged (kind imported). " +
			"If any article is invalid nothing is written and every error is printed. --dry-run prints what it would add, change, retire and leave, " +
			"and writes nothing. Then it publishes the catalogue (as articles publish).",
		reads{tables: catalogueTables}, (*cli).articlesImport},
	{"articles publish", "",
		"publish the articles table as the catalogue that the article list and the quote serve (every instance within a minute); " +
			"import does it too. Run it once on a stack whose articles were imported before catalogue snapshots.",
		reads{tables: []tableSpec{articlesSpec, catalogueSpec}}, (*cli).articlesPublish},
	{"articles export", "[FILE]",
		"write the whole catalogue to FILE (default stdout) in the format import reads, sorted by purpose_name and state",
		reads{tables: []tableSpec{articlesSpec}}, (*cli).articlesExport},
	{"articles migrate-rules", "[--apply] [--by WHO]",
		"once, after the deploy that brought duty rules (duty-rules.md §9): list each article stored without duty_rules " +
			"(its rules are derived from its amount fields when read) with the version it would get and the rule it would store, " +
			"and write nothing; with --apply store each one's migrated version (its amounts and answers do not change), " +
			"logged as kind migrated (duty_rules null → […]) with who, and publish the catalogue once. " +
			"A second run finds nothing to do and writes nothing",
		reads{tables: catalogueTables}, (*cli).articlesMigrateRules},
	{"articles rules show", "--purpose P --state S [--json] [--version-index I]",
		"an article's duty_rules: each version's index, period, citation and hash, and the article's version; " +
			"--json prints the duty_rules JSON instead (with --version-index, that version's object alone: the file rules edit takes)",
		reads{tables: catalogueTables}, (*cli).rulesShow},
	{"articles rules edit", "--purpose P --state S --version-index I --file F [--version V] [--by WHO]",
		"replace version I of the article's duty_rules with the JSON object of F (- for stdin). " +
			"Every change to duty_rules is checked whole (duty-rules.md §11) and, when any problem is found, nothing is written and " +
			"each problem is printed at its path (duty_rules[1].components[2].rate: …); otherwise it is an edit of the article " +
			"(logged before → after with who, published). With --version, refused when the article changed since that version",
		reads{tables: catalogueTables}, (*cli).rulesEdit},
	{"articles rules add-version", "--purpose P --state S --file F [--close-previous] [--version V] [--by WHO]",
		"append the version of F (a JSON object, - for stdin) to the article's duty_rules (a rate change, §7). " +
			"The previous version must end by the day the new one starts: a period that overlaps is refused; --close-previous sets the last version's " +
			"open effectiveTo to the new effectiveFrom. Checked, logged and published as rules edit",
		reads{tables: catalogueTables}, (*cli).rulesAddVersion},
	{"articles rules archive", "--purpose P --state S --version-index I [--version V] [--by WHO]",
		"remove version I from the article's duty_rules (§1: at most 12 versions); the change log keeps it (articles log). " +
			"Quotes for its dates then find no rule; orders priced by it keep their snapshot. Checked, logged and published as rules edit",
		reads{tables: catalogueTables}, (*cli).rulesArchive},
	{"quote", "--purpose P --state S [--date YYYY-MM-DD] [--quantity N] [--input NAME=VALUE] [NAME=VALUE ...]",
		"the explained quote of duty-rules.md §8 as a table: the rule version (citation, period, hash, the article's version), " +
			"then each line (LINE, LABEL, BASE, RATE, EXACT, ROUNDING, AMOUNT) and the TOTAL. Priced by the API's quote itself, " +
			"from the articles table as stored now. The inputs of §3 are NAME=VALUE (considerationPrice, marketValue, monthlyRent, " +
			"refundableDeposit, nonRefundableDeposit, termMonths, amount, partyCategory, locationClass, propertyUse, relation, " +
			"tradeType), as arguments or --input; the date defaults to today in India. A refused quote prints each failing input " +
			"with its message and exits 1",
		reads{tables: []tableSpec{articlesSpec}}, (*cli).quote},
	{"orders queue", "[--status S] [--mode live|test] [--page-size N] [--cursor C]",
		"the orders waiting in status S (Pending by default), oldest first across all callers; prints the command for the next page. " +
			"The live orders only; --mode test lists the test orders (made with a caller's test token) only",
		reads{api: true}, (*cli).ordersQueue},
	{"orders show", "DOC",
		"one order as operators see it (with its owner and who changed it)",
		reads{api: true}, (*cli).ordersShow},
	{"orders advance", "DOC --to STATUS [--ref R] [--certificate-number N] [--fulfillment F]",
		"move the order's fulfillment one step: Created needs --ref (the unique_doc_ref), Procured --certificate-number, " +
			"Printed an attached certificate",
		reads{api: true}, (*cli).ordersAdvance},
	{"orders attach-certificate", "DOC FILE [--name NAME] [--fulfillment F]",
		"upload the certificate PDF of a Procured fulfillment",
		reads{api: true}, (*cli).ordersAttachCertificate},
	{"orders cancel", "DOC --reason R",
		"cancel the order, for the reason R (1 to 200 printable characters, required), while none of its fulfillments is " +
			"Procured or Printed; the order is kept, leaves the queue and takes no move, certificate or document. " +
			"Cancelling a cancelled order again changes nothing and prints it as it was cancelled",
		reads{api: true}, (*cli).ordersCancel},
	{"orders download", "DOC [--out FILE] [--fulfillment F]",
		"save the certificate through its pre-signed address, checking its SHA-256",
		reads{api: true}, (*cli).ordersDownload},
	{"orders backfill", "",
		"once, after the first deploy with the work queue or its shards: put the orders stored before it into their queue shard, " +
			"and test orders stored in the live queue into the test queue " +
			"(straight in the orders table; running it again changes nothing)",
		reads{tables: []tableSpec{ordersSpec}}, (*cli).ordersBackfill},
	{"orders claim-numbers", "",
		"once, after the first deploy with the numbers table: claim for each stored paper its unique_doc_ref and certificate_number " +
			"(papers.md: a number names one paper in the whole service), so that no later move can give another paper one of them; " +
			"prints how many it claimed and every number two stored papers share, for an operator to look into " +
			"(straight in the orders and numbers tables; running it again claims nothing more)",
		reads{tables: []tableSpec{ordersSpec, numbersSpec}}, (*cli).ordersClaimNumbers},
	{"webhooks failing", "[--min-attempts N] [--json]",
		"across all callers, each webhook with events still waiting after at least N failed attempts (default 1), " +
			"and each one a receiver's 410 disabled: owner, documentId, URL, enabled, events waiting, the oldest waiting event's time, " +
			"the most attempts one has had, the last attempt (status, when) and when the next is due; --json prints them as a JSON list. " +
			"Says so when there are none.",
		reads{tables: []tableSpec{webhooksSpec, deliveriesSpec}}, (*cli).webhooksFailing},
	{"metrics summary", "[--minutes N] [--json]",
		"the functions' metrics of the last N minutes (default 5), as the dashboard shows them: counts summed, timings with their " +
			"samples, p50, p90, p99 and maximum, by metric and dimensions. From the local stack (make local reads them from the functions' " +
			"logs, as CloudWatch does); with --stack, the address of the stack's CloudWatch dashboard",
		reads{api: true}, (*cli).metricsSummary},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// run executes stampctl with args (without the program name) and returns
// its exit status: 0, 1 when the command failed, 2 on bad usage. getenv
// gives stampctl's own variables; the AWS SDK reads its own (AWS_PROFILE,
// AWS_REGION, ...) from the process, as every AWS tool does.
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
		if ue.cmd != nil {
			fmt.Fprintf(stderr, "%s\nRun 'stampctl %s --help' for its flags and environment.\n", ue.cmd.usageLine(), ue.cmd.name)
		} else {
			fmt.Fprint(stderr, overview(""))
		}
		return 2
	}
	fmt.Fprintf(stderr, "stampctl: %s\n", err)
	return 1
}

// dispatch runs the subcommand the first words of args name (one, as
// quote; two, as token list; three, as articles rules show) with the rest,
// its failure prefixed with its name. "help", -h and --help print the
// overview; "help COMMAND" and "COMMAND --help" that command's help; a
// group's word with --help the group's part of the overview.
func (c *cli) dispatch(args []string) error {
	args = commonFlagsLast(args)
	switch {
	case len(args) == 0:
		return usagef("no command given")
	case len(args) == 1 && isHelp(args[0]):
		fmt.Fprint(c.stdout, overview(""))
		return nil
	case isHelp(args[0]):
		return c.dispatch(append(slices.Clone(args[1:]), "--help"))
	case commandNamed(args[0]) != nil:
		return c.runCommand(commandNamed(args[0]), args[1:])
	case !hasSubcommands(args[0]):
		return usagef("unknown command %q", args[0])
	case len(args) == 1 && only(args[0]) != "":
		return c.dispatch([]string{args[0], only(args[0])})
	case len(args) == 1:
		return usagef("%s: which command? (see below)", args[0])
	case only(args[0]) != "" && strings.HasPrefix(args[1], "-") && !isHelp(args[1]):
		return c.dispatch(append([]string{args[0], only(args[0])}, args[1:]...))
	case isHelp(args[1]):
		fmt.Fprint(c.stdout, overview(args[0]))
		return nil
	}
	name, rest := args[0]+" "+args[1], args[2:]
	if commandNamed(name) == nil && hasSubcommands(name) {
		switch {
		case len(rest) > 0 && isHelp(rest[0]):
			fmt.Fprint(c.stdout, overview(args[0]))
			return nil
		case len(rest) == 0 || strings.HasPrefix(rest[0], "-"):
			return usagef("%s: which command? (see below)", name)
		}
		name, rest = name+" "+rest[0], rest[1:]
	}
	cmd := commandNamed(name)
	if cmd == nil {
		return usagef("unknown command %q", name)
	}
	return c.runCommand(cmd, rest)
}

// commandNamed returns the command whose words are name, nil when none is.
func commandNamed(name string) *command {
	i := slices.IndexFunc(commands, func(cmd command) bool { return cmd.name == name })
	if i < 0 {
		return nil
	}
	return &commands[i]
}

// hasSubcommands reports whether some command's words start with those
// of prefix (the group "articles", the words "articles rules").
func hasSubcommands(prefix string) bool {
	return slices.ContainsFunc(commands, func(cmd command) bool { return strings.HasPrefix(cmd.name, prefix+" ") })
}

// runCommand runs cmd with args, its failure prefixed with its name.
func (c *cli) runCommand(cmd *command, args []string) error {
	name := cmd.name
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	c.commonFlags(fs, cmd)
	err := cmd.run(c, fs, args)
	var ue usageError
	switch {
	case errors.Is(err, errHelp):
		fmt.Fprint(c.stdout, commandHelp(cmd, fs))
	case errors.As(err, &ue):
		ue.cmd = cmp.Or(ue.cmd, cmd)
		return ue
	case err != nil:
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// commonFlagsLast moves the common flags given before the command
// (`stampctl --stack S token list`) after it, where its flag set parses them.
func commonFlagsLast(args []string) []string {
	var moved []string
	for len(args) > 0 {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
		if !strings.HasPrefix(args[0], "-") || !slices.Contains(commonFlagNames, name) {
			break
		}
		n := 2
		if hasValue || len(args) == 1 {
			n = 1
		}
		moved, args = append(moved, args[:n]...), args[n:]
	}
	return append(slices.Clone(args), moved...)
}

// only returns the second word of group's command when the group has
// one command, which its word alone then runs (stampctl metrics); else "".
func only(group string) string {
	var found []string
	for _, cmd := range commands {
		if g, rest, _ := strings.Cut(cmd.name, " "); g == group {
			found = append(found, rest)
		}
	}
	if len(found) != 1 {
		return ""
	}
	return found[0]
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return slices.Contains([]string{"help", "-h", "-help", "--help"}, arg)
}

// commonFlags defines --stack, and --api-url for the commands that call the API.
func (c *cli) commonFlags(fs *flag.FlagSet, cmd *command) {
	fs.StringVar(&c.stackFlag, "stack", "",
		"the deployed stack `NAME` (default $STAMPDUTY_STACK): stampctl reads "+cmd.reads.fromStack()+
			" from its outputs with CloudFormation DescribeStacks, using your AWS credentials and region")
	if cmd.reads.api {
		fs.StringVar(&c.apiURLFlag, "api-url", "",
			"the API to call, at `URL`: e.g. the stack's ApiUrl output or the local stack's "+localAPIURL+
				" (default $STAMPDUTY_API_URL, else the stack's ApiUrl)")
	}
}

// commonFlagNames are the flags commonFlags defines.
var commonFlagNames = []string{"api-url", "stack"}

// parse parses the flags of args into fs, before, between or after the
// positional arguments, and returns those, checking there are min to max.
// --help (or -h) is errHelp; flag errors and a wrong count are usage errors.
func parse(fs *flag.FlagSet, args []string, min, max int) ([]string, error) {
	fs.SetOutput(io.Discard)
	var rest []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		} else if err != nil {
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
