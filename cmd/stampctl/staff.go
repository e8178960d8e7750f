package main

// The staff commands, through shared/staff (the workflows the console
// will run too): the staff's accounts in the stack's Cognito user pool.

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"stampduty/shared/staff"
	"stampduty/shared/stampduty"
	"stampduty/shared/testkit/localcognito"
)

// Where the staff pool is: STAFF_USER_POOL_ID, else the stack's
// StaffUserPoolId output, else, against a local Cognito
// (COGNITO_ENDPOINT), the pool the local stack names StaffUserPool.
const (
	staffPoolEnv       = "STAFF_USER_POOL_ID"
	staffPoolOutput    = "StaffUserPoolId"
	staffPoolLogicalID = "StaffUserPool"
	cognitoEndpointEnv = "COGNITO_ENDPOINT"
	// localCognito is the local stack's Cognito (cmd/local's default
	// LOCAL_COGNITO_ADDR).
	localCognito = "http://127.0.0.1:9229"
)

// cognitoEndpoint returns COGNITO_ENDPOINT, "" when unset.
func (c *cli) cognitoEndpoint() string { return strings.TrimSpace(c.getenv(cognitoEndpointEnv)) }

// staffPool returns the staff workflows on the stack's user pool, or on
// the local Cognito's at COGNITO_ENDPOINT.
func (c *cli) staffPool() (*staff.Pool, error) {
	endpoint := c.cognitoEndpoint()
	if endpoint != "" && c.stackName() != "" {
		return nil, usagef("--stack (or STAMPDUTY_STACK) reads a deployed stack and %s names a local Cognito: use one of them", cognitoEndpointEnv)
	}
	pool := strings.TrimSpace(c.getenv(staffPoolEnv))
	if pool == "" && endpoint == "" && c.stackName() == "" {
		return nil, errors.New("which user pool? stampctl has no stack, pool id or local Cognito.\n" +
			"On AWS:    --stack NAME (stampctl reads the pool's id from its " + staffPoolOutput + " output), or " + staffPoolEnv + ",\n" +
			"           with your AWS credentials and region (AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; AWS_REGION).\n" +
			"Locally:   the local stack's Cognito, as make local prints it:\n" +
			"  export " + cognitoEndpointEnv + "=" + localCognito)
	}
	cfg, err := c.loadAWS(endpoint != "")
	if err != nil {
		return nil, err
	}
	if endpoint != "" {
		// A local Cognito checks no signature: its region and dummy
		// credentials when none are configured.
		if cfg.Region == "" {
			cfg.Region = localcognito.Region
		}
		if cfg.Credentials == nil || !retrievable(c.ctx, cfg.Credentials) {
			cfg.Credentials = credentials.NewStaticCredentialsProvider(localcognito.AccessKeyID, localcognito.SecretAccessKey, "")
		}
		cfg.BaseEndpoint = aws.String(endpoint)
	} else if err := c.checkAWS(cfg, "reach the staff's Cognito user pool"); err != nil {
		return nil, fmt.Errorf("%w\nAgainst the local stack instead: export %s=%s (its Cognito, as make local prints it)", err, cognitoEndpointEnv, localCognito)
	}
	if pool == "" {
		st, err := c.stack()
		if err != nil {
			return nil, err
		}
		switch {
		case st != nil:
			if pool, err = st.output(staffPoolOutput); err != nil {
				return nil, err
			}
		case endpoint != "":
			if pool, err = localcognito.PoolID(c.ctx, localcognito.Client(endpoint), staffPoolLogicalID); err != nil {
				return nil, fmt.Errorf("the local Cognito at %s: %w (set %s to another pool's id)", endpoint, err, staffPoolEnv)
			}
		}
	}
	// cognito-local does not serve AdminUserGlobalSignOut; on AWS it
	// always runs. Each change's record on AWS is CloudTrail's, which
	// names the IAM identity stampctl signs with.
	return staff.New(cfg, pool, staff.Options{SkipGlobalSignOut: endpoint != ""}), nil
}

// staffErr wraps an error of a staff workflow for the operator: a fault
// of Cognito's or of the call shows its cause.
func staffErr(what string, err error) error {
	var e *stampduty.Error
	if errors.As(err, &e) && e.Err != nil && (e.Code == stampduty.EINTERNAL || e.Code == stampduty.EUNAVAILABLE) {
		return fmt.Errorf("%s: %w", what, e.Err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// staffList prints every account: `staff list`.
func (c *cli) staffList(fs *flag.FlagSet, args []string) error {
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	p, err := c.staffPool()
	if err != nil {
		return err
	}
	list, err := p.List(c.ctx)
	if err != nil {
		return staffErr("list the staff", err)
	}
	w := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "EMAIL\tROLE\tGROUPS\tENABLED\tSTATUS\tCREATED")
	for _, m := range list {
		gs := make([]string, len(m.Groups))
		for i, g := range m.Groups {
			gs[i] = string(g)
		}
		groups, enabled := strings.Join(gs, ","), "yes"
		if groups == "" {
			groups = "-"
		}
		if !m.Enabled {
			enabled = "no"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Email, m.Role, groups, enabled, m.Status, formatTime(m.Created))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write the list: %w", err)
	}
	return nil
}

// roleFlag defines --role.
func roleFlag(fs *flag.FlagSet, what string) *string {
	return fs.String("role", "", what)
}

// staffChange reads a change of one account: its email (the one
// argument), the command's own flags (check, which may refuse them), who
// acts (--by) and the pool.
func (c *cli) staffChange(fs *flag.FlagSet, args []string, check func() error) (p *staff.Pool, who, email string, err error) {
	by := byFlag(fs)
	rest, err := parse(fs, args, 1, 1)
	if err != nil {
		return nil, "", "", err
	}
	if err := check(); err != nil {
		return nil, "", "", err
	}
	if who, err = c.actor(*by); err != nil {
		return nil, "", "", err
	}
	p, err = c.staffPool()
	return p, who, rest[0], err
}

// staffInvite invites a person: `staff invite EMAIL --role admin|operator`.
func (c *cli) staffInvite(fs *flag.FlagSet, args []string) error {
	role := roleFlag(fs, "the person's role: admin or operator (required)")
	var r staff.Role
	p, who, email, err := c.staffChange(fs, args, func() (err error) {
		if r, err = staff.ParseRole(*role); err != nil || r == staff.None {
			return usagef("staff invite: --role must be admin or operator")
		}
		return nil
	})
	if err != nil {
		return err
	}
	m, err := p.Invite(c.ctx, who, email, r)
	if err != nil {
		return staffErr("invite "+email, err)
	}
	fmt.Fprintf(c.stdout, "invited %s as %s (%s): Cognito emails them a temporary password, and their first sign-in sets their own\n", m.Email, m.Role, m.Status)
	return nil
}

// staffRole changes a person's role: `staff role EMAIL --role admin|operator|none`.
func (c *cli) staffRole(fs *flag.FlagSet, args []string) error {
	role := roleFlag(fs, "the new role: admin, operator or none (signs in, may do nothing) (required)")
	var r staff.Role
	p, who, email, err := c.staffChange(fs, args, func() (err error) {
		if r, err = staff.ParseRole(*role); err != nil {
			return usagef("staff role: --role must be admin, operator or none")
		}
		return nil
	})
	if err != nil {
		return err
	}
	ch, err := p.SetRole(c.ctx, who, email, r)
	if err != nil {
		return staffErr("change the role of "+email, err)
	}
	fmt.Fprintf(c.stdout, "%s: %s → %s%s\n", ch.Email, ch.From, ch.Role, c.signedOut(ch, ch.Demotion()))
	return nil
}

// signedOut says whether the person of ch was signed out everywhere, when
// asked is true (the change signs out).
func (c *cli) signedOut(ch staff.Changed, asked bool) string {
	switch {
	case !asked:
		return ""
	case ch.SignedOut:
		return "; signed out everywhere (the tokens they hold expire within 15 minutes)"
	}
	return "; not signed out: the local Cognito does not serve AdminUserGlobalSignOut"
}

// staffDisable disables an account: `staff disable EMAIL`.
func (c *cli) staffDisable(fs *flag.FlagSet, args []string) error {
	p, who, email, err := c.staffChange(fs, args, func() error { return nil })
	if err != nil {
		return err
	}
	ch, err := p.Disable(c.ctx, who, email)
	if err != nil {
		return staffErr("disable "+email, err)
	}
	fmt.Fprintf(c.stdout, "disabled %s (%s): they can no longer sign in%s\n", ch.Email, ch.Role, c.signedOut(ch, true))
	return nil
}

// staffEnable enables an account again: `staff enable EMAIL`.
func (c *cli) staffEnable(fs *flag.FlagSet, args []string) error {
	p, who, email, err := c.staffChange(fs, args, func() error { return nil })
	if err != nil {
		return err
	}
	ch, err := p.Enable(c.ctx, who, email)
	if err != nil {
		return staffErr("enable "+email, err)
	}
	fmt.Fprintf(c.stdout, "enabled %s (%s): they sign in with their password as before\n", ch.Email, ch.Role)
	return nil
}
