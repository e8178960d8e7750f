package main

// The callers' admin commands, through shared/callers (the workflows the
// console will run too).

import (
	"flag"
	"fmt"
	"text/tabwriter"

	"stampduty/shared/callers"
)

// callersAdmin returns the callers' workflows over the stack's tokens
// table; with hashKey, able to issue tokens (and then without the orders
// table: only List counts orders).
func (c *cli) callersAdmin(hashKey bool) (*callers.Admin, []table, error) {
	specs := []tableSpec{tokensSpec, ordersSpec}
	if hashKey {
		specs = specs[:1]
	}
	db, ts, err := c.open(specs...)
	if err != nil {
		return nil, nil, err
	}
	a := &callers.Admin{Tokens: db.Tokens(ts[0].name), Now: c.now}
	if !hashKey {
		a.Orders = db.Orders(ts[1].name)
	}
	if hashKey {
		if a.Hasher, err = c.hasher(); err != nil {
			return nil, nil, err
		}
	}
	return a, ts, nil
}

// callersList prints every caller: `callers list`.
func (c *cli) callersList(fs *flag.FlagSet, args []string) error {
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	admin, ts, err := c.callersAdmin(false)
	if err != nil {
		return err
	}
	list, err := admin.List(c.ctx)
	if err != nil {
		return storeErr("list the callers", err, ts...)
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "OWNER\tCREATED\tBY\tACTIVE TOKENS\tREVOKED TOKENS\tORDERS")
	for _, s := range list {
		created, by := formatTime(s.CreatedAt), s.CreatedBy
		if !s.Recorded {
			created, by = "-", "(before caller records)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\n", printableOwner(s.Owner), created, orDash(&by), s.Active, s.Revoked, s.Orders)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write the list: %w", err)
	}
	return nil
}

// callersCreate creates a caller: `callers create NAME`, its account
// opened with the stack's DefaultCreditLimit (openCaller).
func (c *cli) callersCreate(fs *flag.FlagSet, args []string) error {
	by := byFlag(fs)
	rest, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	who, err := c.actor(*by)
	if err != nil {
		return err
	}
	admin, ts, err := c.callersAdmin(false)
	if err != nil {
		return err
	}
	cl, err := admin.Create(c.ctx, who, rest[0])
	if err != nil {
		return storeErr("create the caller", err, ts...)
	}
	fmt.Fprintf(c.stdout, "created caller %s; issue its token with: stampctl token create --owner %s\n", cl.Owner, cl.Owner)
	return c.openCaller(cl.Owner)
}
