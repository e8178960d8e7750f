package main

// The catalogue's admin commands: list, add, edit, retire, the change log
// and the import with its preview, through shared/catalogue (the
// workflows the console will run too).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os/user"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sts"

	"stampduty/shared/catalogue"
	"stampduty/shared/stampduty"
	"stampduty/shared/stampduty/stampjson"
)

// catalogueTables are the tables the catalogue's workflows use.
var catalogueTables = []tableSpec{articlesSpec, articleLogSpec, countersSpec, catalogueSpec}

// catalogueAdmin returns the catalogue's workflows over the stack's tables;
// a publish says so on stderr.
func (c *cli) catalogueAdmin() (*catalogue.Admin, []table, error) {
	db, ts, err := c.open(catalogueTables...)
	if err != nil {
		return nil, nil, err
	}
	arts := db.Articles(ts[0].name).WithLog(ts[1].name).WithSnapshots(ts[3].name)
	return &catalogue.Admin{
		Articles: arts,
		IDs:      db.IDs(ts[2].name, idBlock),
		Publish: func(ctx context.Context, now time.Time) error {
			s, err := db.Catalogue(ts[3].name).Publish(ctx, arts, now)
			if err == nil {
				fmt.Fprintf(c.stderr, "published the catalogue: version %s, %d articles; every instance serves it within a minute\n", s.Version, s.Articles)
			}
			return err
		},
		Now: c.now,
	}, ts, nil
}

// byFlag defines --by, who makes the change.
func byFlag(fs *flag.FlagSet) *string {
	return fs.String("by", "", "who makes the change, for the change log (default $STAMPDUTY_BY; on AWS your IAM identity's ARN, locally $USER)")
}

// actor returns who makes a change: --by, else STAMPDUTY_BY, else, on AWS,
// the ARN of the caller's IAM identity (STS GetCallerIdentity, when it
// answers), else the local user's name ($USER).
func (c *cli) actor(by string) (string, error) {
	if by = strings.TrimSpace(by); by == "" {
		by = strings.TrimSpace(c.getenv("STAMPDUTY_BY"))
	}
	if by == "" && c.dynamoEndpoint() == "" && c.cognitoEndpoint() == "" {
		// On AWS: the IAM identity, when STS answers (else $USER below).
		if cfg, err := c.loadAWS(false); err == nil {
			if out, err := sts.NewFromConfig(cfg).GetCallerIdentity(c.ctx, &sts.GetCallerIdentityInput{}); err == nil && out.Arn != nil {
				by = *out.Arn
			}
		}
	}
	if by == "" {
		by = c.getenv("USER")
		if u, err := user.Current(); by == "" && err == nil {
			by = u.Username
		}
	}
	if !stampduty.ValidActor(by) {
		return "", fmt.Errorf("who makes the change? %s is not 1 to %d printable characters without spaces: give --by EMAIL",
			strconv.Quote(by), stampduty.MaxActorLength)
	}
	return by, nil
}

// articleFlags are the flags that set an article's amounts; a flag not
// given leaves the value as it is.
type articleFlags struct {
	min, max, fixed, follow, factor *string
}

func defineArticleFlags(fs *flag.FlagSet) articleFlags {
	return articleFlags{
		min:    fs.String("min", "", "the least amount, in rupees"),
		max:    fs.String("max", "", "the greatest amount, in rupees"),
		fixed:  fs.String("fixed", "", "the fixed amount, in rupees, or none"),
		follow: fs.String("follow", "", "true when the amount is the factor × the consideration price"),
		factor: fs.String("factor", "", "amountPercentConsideration, in (0, 1], or none"),
	}
}

// apply sets a's fields from the flags given.
func (f articleFlags) apply(a *stampduty.Article) error {
	for _, p := range []struct {
		name string
		v    *string
		to   *int64
	}{{"min", f.min, &a.Min}, {"max", f.max, &a.Max}} {
		if *p.v != "" {
			n, err := strconv.ParseInt(*p.v, 10, 64)
			if err != nil {
				return usagef("--%s: %s is not a whole number of rupees", p.name, strconv.Quote(*p.v))
			}
			*p.to = n
		}
	}
	switch *f.fixed {
	case "":
	case "none", "null":
		a.Fixed = nil
	default:
		n, err := strconv.ParseInt(*f.fixed, 10, 64)
		if err != nil {
			return usagef("--fixed: %s is not a whole number of rupees or none", strconv.Quote(*f.fixed))
		}
		a.Fixed = &n
	}
	if *f.follow != "" {
		b, err := strconv.ParseBool(*f.follow)
		if err != nil {
			return usagef("--follow: %s is not true or false", strconv.Quote(*f.follow))
		}
		a.FollowsConsideration = b
	}
	switch *f.factor {
	case "":
	case "none", "null":
		a.Factor = nil
	default:
		d, err := stampduty.ParseDecimal(*f.factor)
		if err != nil {
			return usagef("--factor: %s is not a decimal number or none", strconv.Quote(*f.factor))
		}
		a.Factor = &d
		if *f.follow == "" {
			a.FollowsConsideration = true
		}
	}
	return nil
}

// invalid prints each failing field of an EINVALID error on stderr.
func (c *cli) invalid(err error) {
	var e *stampduty.Error
	if errors.As(err, &e) {
		for _, f := range e.Fields {
			if f.Path != "" {
				fmt.Fprintf(c.stderr, "%s: %s\n", f.Path, f.Message)
			}
		}
	}
}

// printEntry prints one article as admins see it.
func (c *cli) printEntry(verb string, e stampduty.CatalogueEntry) {
	fmt.Fprintf(c.stdout, "%s %s in %s (documentId %s, version %d%s): %s\n", verb, strconv.Quote(e.PurposeName), e.State,
		e.DocumentID, e.Version, retiredNote(e), values(e.Article))
}

func retiredNote(e stampduty.CatalogueEntry) string {
	if e.Retired() {
		return ", retired " + formatTime(e.RetiredAt)
	}
	return ""
}

// values renders an article's amounts as the change log names them.
func values(a stampduty.Article) string {
	var parts []string
	for _, v := range stampduty.ArticleValues(a) {
		parts = append(parts, v[0]+" "+v[1])
	}
	return strings.Join(parts, ", ")
}

// articlesList prints every article, retired ones included: `articles list`.
func (c *cli) articlesList(fs *flag.FlagSet, args []string) error {
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	admin, ts, err := c.catalogueAdmin()
	if err != nil {
		return err
	}
	es, err := admin.List(c.ctx)
	if err != nil {
		return storeErr("list the articles", err, ts...)
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "PURPOSE\tSTATE\tDOCUMENTID\tVERSION\tSTATUS\tAMOUNTS\tLAST CHANGE")
	for _, e := range es {
		status, last := "active", "-"
		if e.Retired() {
			status = "retired"
		}
		if e.Last != nil {
			last = fmt.Sprintf("%s %s by %s", e.Last.Kind, formatTime(e.Last.At), e.Last.By)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", strconv.Quote(e.PurposeName), e.State, e.DocumentID, e.Version, status, values(e.Article), last)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write the list: %w", err)
	}
	return nil
}

// catalogueChange is what each command that changes an article needs:
// who acts (by, or the caller's own identity: actor) and the catalogue's
// workflows over the stack's tables.
func (c *cli) catalogueChange(by string) (string, *catalogue.Admin, []table, error) {
	who, err := c.actor(by)
	if err != nil {
		return "", nil, nil, err
	}
	admin, ts, err := c.catalogueAdmin()
	return who, admin, ts, err
}

// articlesAdd adds an article: `articles add PURPOSE STATE --max N ...`.
func (c *cli) articlesAdd(fs *flag.FlagSet, args []string) error {
	flags := defineArticleFlags(fs)
	by := byFlag(fs)
	rest, err := parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	art := stampduty.Article{PurposeName: rest[0], State: rest[1]}
	if err := flags.apply(&art); err != nil {
		return err
	}
	who, admin, ts, err := c.catalogueChange(*by)
	if err != nil {
		return err
	}
	e, err := admin.Add(c.ctx, who, art)
	return c.changed("added", e, err, ts)
}

// changed reports a change's outcome: the article, or why not.
func (c *cli) changed(verb string, e stampduty.CatalogueEntry, err error, ts []table) error {
	var np *catalogue.NotPublishedError
	switch {
	case errors.As(err, &np):
		c.printEntry(verb, e)
		return err
	case stampduty.ErrorCode(err) == stampduty.EINVALID:
		c.invalid(err)
		return err
	case err != nil:
		return storeErr("change the article", err, ts...)
	}
	c.printEntry(verb, e)
	return nil
}

// articlesEdit edits an article: `articles edit PURPOSE STATE [--max N] ...`.
func (c *cli) articlesEdit(fs *flag.FlagSet, args []string) error {
	flags := defineArticleFlags(fs)
	by := byFlag(fs)
	version := fs.String("version", "", "the version `V` you read (from articles list); the edit is refused if the article changed since (default: the version it reads now)")
	rest, err := parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	who, admin, ts, err := c.catalogueChange(*by)
	if err != nil {
		return err
	}
	old, err := admin.Articles.Entry(c.ctx, rest[0], rest[1])
	if err != nil {
		return storeErr("read the article", err, ts...)
	}
	art := old.Article
	if err := flags.apply(&art); err != nil {
		return err
	}
	from := old.Version
	if *version != "" {
		if from, err = strconv.ParseInt(*version, 10, 64); err != nil || from < 0 {
			return usagef("--version: %s is not a version (a whole number from articles list)", strconv.Quote(*version))
		}
	}
	e, err := admin.Edit(c.ctx, who, from, art)
	if err == nil && e.Version == old.Version {
		c.printEntry("unchanged", e)
		return nil
	}
	return c.changed("edited", e, err, ts)
}

// articlesRetire retires an article: `articles retire PURPOSE STATE`.
func (c *cli) articlesRetire(fs *flag.FlagSet, args []string) error {
	by := byFlag(fs)
	rest, err := parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	who, admin, ts, err := c.catalogueChange(*by)
	if err != nil {
		return err
	}
	e, err := admin.Retire(c.ctx, who, rest[0], rest[1])
	return c.changed("retired", e, err, ts)
}

// articlesLog prints an article's change log, newest first:
// `articles log PURPOSE STATE` or `articles log DOCUMENTID`.
func (c *cli) articlesLog(fs *flag.FlagSet, args []string) error {
	rest, err := parse(fs, args, 1, 2)
	if err != nil {
		return err
	}
	admin, ts, err := c.catalogueAdmin()
	if err != nil {
		return err
	}
	var e stampduty.CatalogueEntry
	var log []stampduty.ArticleChange
	if len(rest) == 2 {
		e, log, err = admin.Log(c.ctx, rest[0], rest[1])
	} else {
		e, log, err = admin.LogByDoc(c.ctx, rest[0])
	}
	if err != nil {
		return storeErr("read the change log", err, ts...)
	}
	c.printEntry("article", e)
	if len(log) == 0 {
		fmt.Fprintln(c.stdout, "no change recorded (unchanged since change logs began)")
		return nil
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "VERSION\tAT\tBY\tKIND\tCHANGES")
	for _, ch := range log {
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", ch.Version, formatTime(ch.At), ch.By, ch.Kind, changes(ch.Changes))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write the log: %w", err)
	}
	return nil
}

// changes renders field changes: "max 500 → 800; fixed null → 250".
func changes(cs []stampduty.FieldChange) string {
	var parts []string
	for _, f := range cs {
		if f.Before == "" {
			parts = append(parts, f.Field+" "+f.After)
		} else {
			parts = append(parts, f.Field+" "+f.Before+" → "+f.After)
		}
	}
	return strings.Join(parts, "; ")
}

// articlesImport checks a catalogue file and applies it:
// `articles import [--dry-run] [--retire-missing] FILE`. The whole file is
// checked first; if any article is invalid nothing is written and every
// error is printed, one per line. --dry-run prints what it would do.
func (c *cli) articlesImport(fs *flag.FlagSet, args []string) error {
	dry := fs.Bool("dry-run", false, "print what the import would add, change, retire and leave, and write nothing")
	retire := fs.Bool("retire-missing", false, "retire the articles FILE leaves out (default: leave them as they are)")
	by := byFlag(fs)
	rest, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	name, data, err := c.readInput(rest[0])
	if err != nil {
		return err
	}
	arts, err := stampjson.DecodeArticles(data)
	if err != nil {
		return c.reportInvalid(name, data, err)
	}
	who := ""
	if !*dry {
		if who, err = c.actor(*by); err != nil {
			return err
		}
	}
	admin, ts, err := c.catalogueAdmin()
	if err != nil {
		return err
	}
	plan, err := admin.Preview(c.ctx, arts, *retire)
	if err != nil {
		return storeErr("read the articles", err, ts...)
	}
	if *dry {
		w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "ACTION\tPURPOSE\tSTATE\tCHANGES")
		for _, s := range plan.Steps {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Action, strconv.Quote(s.After.PurposeName), s.After.State, changes(s.Changes))
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("write the preview: %w", err)
		}
		fmt.Fprintf(c.stdout, "would add %d, change %d, retire %d, leave %d; nothing was written\n", plan.Add, plan.Change, plan.Retire, plan.Leave)
		return nil
	}
	r, err := admin.Import(c.ctx, who, plan)
	summary := fmt.Sprintf("%d created, %d updated, %d unchanged", r.Added, r.Changed, r.Left)
	if *retire {
		summary += fmt.Sprintf(", %d retired", r.Retired)
	}
	var np *catalogue.NotPublishedError
	switch {
	case errors.As(err, &np):
		fmt.Fprintf(c.stdout, "imported %d articles: %s\n", len(arts), summary)
		return err
	case err != nil:
		return storeErr(fmt.Sprintf("import %s stopped after %s of %d articles", name, summary, len(arts)), err, ts...)
	}
	fmt.Fprintf(c.stdout, "imported %d articles: %s\n", len(arts), summary)
	return nil
}
