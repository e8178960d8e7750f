package main

import (
	"flag"
	"fmt"
	"stampduty/shared/webhooks"
	"text/tabwriter"
)

// webhooksFailing lists, across all callers, the webhooks whose events
// wait after failed attempts and those a 410 disabled (webhooks.Failures):
// an aligned table, or JSON with --json.
func (c *cli) webhooksFailing(fs *flag.FlagSet, args []string) error {
	min := fs.Int("min-attempts", 1, "list events waiting after at least this many attempts")
	asJSON := fs.Bool("json", false, "print JSON (a list of objects) instead of the table")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *min < 0 {
		return usagef("webhooks failing: --min-attempts must be 0 or more")
	}
	hooks, err := c.table(webhooksSpec)
	if err != nil {
		return err
	}
	deliveries, err := c.table(deliveriesSpec)
	if err != nil {
		return err
	}
	db, err := c.openDB()
	if err != nil {
		return err
	}
	list, err := webhooks.Failures(c.ctx, db.Deliveries(deliveries.name), db.Webhooks(hooks.name), *min)
	if err != nil {
		return storeErr("list the failing webhooks", err, hooks, deliveries)
	}
	if *asJSON {
		return c.printJSON(list)
	}
	if len(list) == 0 {
		fmt.Fprintf(c.stdout, "no webhook is failing: no event waits after %d or more attempts, and no webhook is disabled\n", *min)
		return nil
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "OWNER\tWEBHOOK\tENABLED\tWAITING\tOLDEST EVENT\tMAX ATTEMPTS\tLAST ATTEMPT\tNEXT DUE\tURL")
	for _, f := range list {
		last := "-"
		if a := f.LastAttempt; a != nil {
			status := fmt.Sprint(a.Status)
			if a.Status == 0 {
				status = "no answer"
			}
			last = status + " at " + a.At
		}
		fmt.Fprintf(w, "%s\t%s\t%v\t%d\t%s\t%d\t%s\t%s\t%s\n", f.Owner, f.Webhook, f.Enabled, f.Waiting,
			orDash(f.OldestEventAt), f.MaxAttempts, last, orDash(f.NextAttemptAt), f.URL)
	}
	return w.Flush()
}

// orDash returns *s, or "-" when s is nil.
func orDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}
