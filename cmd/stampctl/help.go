package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"stampduty/shared/testkit/localdb"
)

// The help is made from the commands table and the flags each command
// defines, so that it cannot drift from what runs. Flags are written
// --flag everywhere; Go's flag package accepts -flag too.

// groups are the first words of the commands, with what help says of them.
var groups = []struct{ name, title string }{
	{"token", "Tokens (the API's bearer credentials; a token is shown once, when it is made, and only its HMAC-SHA256 " +
		"under the deployment's hashing key is stored)"},
	{"callers", "Callers (who calls the API: each caller's record, its tokens and its orders, straight in the tokens and orders tables)"},
	{"staff", "Staff (the console's accounts in the stack's Cognito user pool: two roles, admin and operator, as its groups)"},
	{"articles", "Articles (the purpose x state catalogue that prices orders; every change is logged per article and published)"},
	{"quote", "Quotes (the explained duty of duty-rules.md §8, priced by the API's own quote from the articles table)"},
	{"orders", "Orders (the operator API under /api/ops/, called with requests signed by your AWS credentials; " +
		"the API decides what is allowed and says why not; backfill works straight in the orders table)"},
	{"webhooks", "Webhooks (straight in the webhooks and deliveries tables)"},
	{"metrics", "Metrics (what the functions measure of themselves, as the stack's dashboard shows it; `stampctl metrics` alone is the summary)"},
}

// width is the column help text is wrapped at.
const width = 80

// overview returns the help of every command, or of group's only when
// group is not "".
func overview(group string) string {
	var b strings.Builder
	b.WriteString("usage: stampctl COMMAND [ARGUMENTS] [FLAGS]\n" +
		"       stampctl COMMAND --help     that command's usage, flags and the environment it reads\n" +
		"       stampctl help               this overview\n\n")
	b.WriteString(whereItWorks(reads{api: true, tables: []tableSpec{tokensSpec}, hashKey: true, pool: true}))
	for _, g := range groups {
		if group != "" && g.name != group {
			continue
		}
		b.WriteString("\n" + wrap(g.title+":", "", width))
		for _, cmd := range commands {
			if cmd.name == g.name || strings.HasPrefix(cmd.name, g.name+" ") {
				b.WriteString("  stampctl " + strings.TrimSpace(cmd.name+" "+cmd.args) + "\n")
				b.WriteString(wrap(cmd.about, "        ", width))
			}
		}
	}
	if group == "" {
		b.WriteString("\nEnvironment (each command's --help lists what it reads):\n" + environment(reads{api: true,
			tables: []tableSpec{articlesSpec, tokensSpec, countersSpec, catalogueSpec, ordersSpec, webhooksSpec, deliveriesSpec}, hashKey: true, pool: true}))
		b.WriteString("\nFlags may come before, between or after the arguments, with two dashes or one;\n" +
			"--stack and --api-url also before the command.\n" +
			"Exit status: 0 on success, 1 when a command fails, 2 on bad usage.\n")
	}
	return b.String()
}

// whereItWorks says how to point commands that read r at AWS and at the
// local stack, with the values the local stack prints.
func whereItWorks(r reads) string {
	var b strings.Builder
	b.WriteString("Where it works:\n" +
		"  On AWS, with your AWS credentials and region (AWS_PROFILE, or AWS_ACCESS_KEY_ID and\n" +
		"  AWS_SECRET_ACCESS_KEY; AWS_REGION):\n" +
		"    --stack NAME     " + r.fromStack() + " from the stack's outputs\n")
	if r.api {
		b.WriteString("    --api-url URL    the API to call (the orders commands), instead of the stack's ApiUrl\n")
	}
	b.WriteString("  Against the local stack (make local), as it prints them:\n")
	if len(r.tables) > 0 {
		label := "    "
		if r.api {
			label = "    the commands on tables (token, callers, articles, orders backfill, webhooks):\n      "
		}
		b.WriteString(label + "export DYNAMODB_ENDPOINT=" + localDynamoDB + "\n")
	}
	if r.pool {
		label := "    "
		if len(r.tables) > 0 {
			label = "    the staff commands:\n      "
		}
		b.WriteString(label + "export " + cognitoEndpointEnv + "=" + localCognito + "\n")
	}
	if r.api {
		label := "    "
		if len(r.tables) > 0 {
			label = "    the commands on the operator API (orders queue, show, advance, attach-certificate, cancel, download):\n      "
		}
		b.WriteString(label + localdb.OperatorExports(localdb.OperatorKeyID, localdb.OperatorSecret, localdb.Region, localAPIURL) + "\n")
	}
	return b.String()
}

// fromStack says what --stack gives a command that reads r.
func (r reads) fromStack() string {
	var parts []string
	if r.api {
		parts = append(parts, "the API's address (ApiUrl)")
	}
	if len(r.tables) > 0 {
		parts = append(parts, "the table names")
	}
	if r.hashKey {
		parts = append(parts, "the token key's SSM parameter")
	}
	if r.pool {
		parts = append(parts, "the staff pool's id ("+staffPoolOutput+")")
	}
	if n := len(parts); n > 1 {
		return strings.Join(parts[:n-1], ", ") + " and " + parts[n-1]
	}
	return strings.Join(parts, "")
}

// usageLine is the command's synopsis with the common flags it takes.
func (cmd *command) usageLine() string {
	common := " [--stack NAME]"
	if cmd.reads.api {
		common = " [--api-url URL]" + common
	}
	return "usage: stampctl " + strings.TrimSpace(cmd.name+" "+cmd.args) + common
}

// metavar returns what cmd's synopsis calls the value of flag name
// ("--status S" gives S), and whether the synopsis names the flag; a
// boolean flag has none ("").
func (cmd *command) metavar(name string) (string, bool) {
	words := strings.Fields(strings.NewReplacer("[", " ", "]", " ").Replace(cmd.args))
	i := slices.Index(words, "--"+name)
	if i < 0 {
		return "", false
	}
	// A value in capitals (--status S), or the values it takes (--role admin|operator).
	if i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") && (strings.ToUpper(words[i+1]) == words[i+1] || strings.Contains(words[i+1], "|")) {
		return words[i+1], true
	}
	return "", true
}

// commandHelp is cmd's help: usage, what it does, its flags (those of fs,
// its own first), the environment it reads and where it works.
func commandHelp(cmd *command, fs *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString(cmd.usageLine() + "\n\n")
	about := strings.ToUpper(cmd.about[:1]) + cmd.about[1:]
	if !strings.HasSuffix(about, ".") {
		about += "."
	}
	b.WriteString(wrap(about, "  ", width))
	b.WriteString("\nFlags (two dashes or one):\n")
	var own, common []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if slices.Contains(commonFlagNames, f.Name) {
			common = append(common, f)
		} else {
			own = append(own, f)
		}
	})
	for _, f := range append(own, common...) {
		meta, usage := flag.UnquoteUsage(f)
		if m, ok := cmd.metavar(f.Name); ok {
			meta = m
		}
		b.WriteString("  --" + strings.TrimSpace(f.Name+" "+meta) + "\n")
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
			usage += " (default " + f.DefValue + ")"
		}
		b.WriteString(wrap(usage, "        ", width))
	}
	b.WriteString("  --help\n        this help\n")
	b.WriteString("\nEnvironment:\n" + environment(cmd.reads) + "\n" + whereItWorks(cmd.reads))
	return b.String()
}

// environment returns the help of each variable a command that reads r
// reads, in the order it consults them.
func environment(r reads) string {
	var b strings.Builder
	add := func(name, text string) { b.WriteString("  " + name + "\n" + wrap(text, "        ", width)) }
	add("STAMPDUTY_STACK", "the stack to read when --stack is not given")
	if r.api {
		add("STAMPDUTY_API_URL", "the API to call when --api-url is not given; it wins over the stack's ApiUrl output. "+
			"The local stack's is "+localAPIURL+".")
	}
	for _, t := range r.tables {
		add(t.envVar, fmt.Sprintf("the %s table's name; it wins over the stack's %s output. With DYNAMODB_ENDPOINT "+
			"it defaults to %s, the local stack's name.", strings.TrimSuffix(t.logicalID, "Table"), t.output, t.logicalID))
	}
	if len(r.tables) > 0 {
		add("DYNAMODB_ENDPOINT", "a local DynamoDB engine instead of AWS, e.g. "+localDynamoDB+" (the local stack's). "+
			"With it, EC2 instance credentials are not looked up, and when no AWS credentials or region are configured "+
			"stampctl uses region "+localdb.Region+" and dummy credentials, which a local engine accepts (the operator API does not). "+
			"It cannot be combined with --stack.")
	}
	if r.hashKey {
		add("TOKEN_HASH_KEY", "the key the new token is hashed with, the functions' key; with DYNAMODB_ENDPOINT "+
			"the local stacks' key by default")
		add("TOKEN_HASH_KEY_PARAMETER", "otherwise the SSM parameter that holds the key: by default the stack's "+
			"TokenHashKeyParameter parameter with --stack, else /stamp-duty/token-hash-key")
	}
	if r.pool {
		add(staffPoolEnv, "the staff's Cognito user pool id; it wins over the stack's "+staffPoolOutput+" output. With "+
			cognitoEndpointEnv+" it defaults to the local pool named "+staffPoolLogicalID+", the local stack's.")
		add(cognitoEndpointEnv, "a local Cognito instead of AWS, e.g. "+localCognito+" (the local stack's). With it, "+
			"EC2 instance credentials are not looked up, dummy credentials are used when none are configured, and people are not "+
			"signed out everywhere (the local Cognito does not serve AdminUserGlobalSignOut). It cannot be combined with --stack.")
	}
	sign := "your AWS identity, from the AWS SDK's default chain (also the shared config files, SSO, web identity, " +
		"container and instance roles)"
	if r.api {
		sign += "; the orders commands sign their requests with it (Signature Version 4 for execute-api), " +
			"and take the region from an execute-api address when none is configured"
	}
	add("AWS_PROFILE, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN", sign)
	return b.String()
}

// wrap breaks text into lines of at most width columns, each starting
// with indent (a word longer than a line gets one of its own).
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, w := range strings.Fields(text) {
		if line != indent && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += w
	}
	return b.String() + line + "\n"
}
