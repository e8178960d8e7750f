// Package staff is the admins' workflows over the staff's accounts in the
// Cognito user pool of the console (console.md, "Who signs in, and how"
// and "Staff"): list the staff, invite a person with a role, change a
// person's role, disable and re-enable an account. stampctl's `staff`
// commands run them; the console's endpoints will run the same.
//
// It is the only code of the product that imports the AWS SDK's Cognito
// client (TestNotLinkedIntoFunctions): a function links it only through
// this package, and only the console function may.
//
// A person is named by their email, lower-cased (the pool signs in by
// email, case-insensitively). Each workflow first reads the account
// (AdminGetUser) and then acts on its Cognito user name, the pool's own
// id for it: the admin API takes an email there too on AWS, but the local
// Cognito keeps group members by user name.
//
// Roles are the pool's groups admin and operator; a person in neither has
// the role none (can sign in and do nothing). Rights are nested: admin
// has all that operator has.
package staff

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"

	"stampduty/shared/stampduty"
)

// Member is a staff account as the list shows it.
type Member struct {
	Email string
	// Groups are the role groups the person is in; Role the highest.
	Groups []Role
	Role   Role
	// Enabled is false for a disabled account, which cannot sign in.
	Enabled bool
	// Status is Cognito's: FORCE_CHANGE_PASSWORD until the first
	// sign-in with the invitation's temporary password, then CONFIRMED.
	Status           string
	Created, Changed time.Time
	// User is the account's Cognito user name (on AWS its sub, a UUID).
	User string
}

// Options change how a Pool works.
type Options struct {
	// SkipGlobalSignOut leaves out AdminUserGlobalSignOut, which the local
	// Cognito (cognito-local 5.3.0) does not serve; Changed.SignedOut
	// says so. Never set on AWS.
	SkipGlobalSignOut bool
	// Log receives one line per change (slog's JSON handler writes them
	// where the caller says): who did what to whom. Nil discards.
	Log *slog.Logger
}

// Pool runs the staff workflows on one user pool.
type Pool struct {
	client *cip.Client
	pool   string
	opts   Options
}

// New returns the workflows on the user pool poolID, with the Cognito
// client cfg configures (its BaseEndpoint names a local Cognito).
func New(cfg aws.Config, poolID string, opts Options) *Pool {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Pool{client: cip.NewFromConfig(cfg), pool: poolID, opts: opts}
}

// listLimit is the most users one ListUsers or ListUsersInGroup call
// returns on AWS (60).
const listLimit = 60

// List returns every account of the pool, by email. It costs one
// ListUsers call per 60 accounts and one ListUsersInGroup call per 60
// members of each role group: never a call per person.
func (a *Pool) List(ctx context.Context) ([]Member, error) {
	by := map[string]*Member{}
	var users []string
	p := cip.NewListUsersPaginator(a.client, &cip.ListUsersInput{UserPoolId: aws.String(a.pool), Limit: aws.Int32(listLimit)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, cognitoErr("list the staff", err)
		}
		for _, u := range out.Users {
			m := member(aws.ToString(u.Username), u.Attributes, u.Enabled, u.UserStatus, u.UserCreateDate, u.UserLastModifiedDate)
			by[m.User] = &m
			users = append(users, m.User)
		}
	}
	for _, g := range groups {
		members, err := a.groupMembers(ctx, g)
		if err != nil {
			return nil, err
		}
		for _, u := range members {
			if m, ok := by[aws.ToString(u.Username)]; ok {
				m.Groups = append(m.Groups, g)
			}
		}
	}
	list := make([]Member, 0, len(users))
	for _, u := range users {
		m := by[u]
		m.Role = roleOf(m.Groups)
		list = append(list, *m)
	}
	slices.SortFunc(list, func(x, y Member) int { return cmp.Compare(x.Email, y.Email) })
	return list, nil
}

// groupMembers returns the members of group g.
func (a *Pool) groupMembers(ctx context.Context, g Role) ([]types.UserType, error) {
	var users []types.UserType
	p := cip.NewListUsersInGroupPaginator(a.client, &cip.ListUsersInGroupInput{
		UserPoolId: aws.String(a.pool), GroupName: aws.String(string(g)), Limit: aws.Int32(listLimit)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, cognitoErr("list the group "+string(g), err)
		}
		users = append(users, out.Users...)
	}
	return users, nil
}

// member builds a Member from what Cognito says of a user.
func member(user string, attrs []types.AttributeType, enabled bool, status types.UserStatusType, created, changed *time.Time) Member {
	m := Member{User: user, Enabled: enabled, Status: string(status), Created: aws.ToTime(created), Changed: aws.ToTime(changed)}
	for _, at := range attrs {
		if aws.ToString(at.Name) == "email" {
			m.Email = strings.ToLower(aws.ToString(at.Value))
		}
	}
	return m
}

// Get returns the account of email, with its groups: one AdminGetUser and
// one AdminListGroupsForUser.
func (a *Pool) Get(ctx context.Context, email string) (Member, error) {
	email, err := ParseEmail(email)
	if err != nil {
		return Member{}, err
	}
	out, err := a.client.AdminGetUser(ctx, &cip.AdminGetUserInput{UserPoolId: aws.String(a.pool), Username: aws.String(email)})
	if err != nil {
		return Member{}, cognitoErr("read the account", err)
	}
	m := member(aws.ToString(out.Username), out.UserAttributes, out.Enabled, out.UserStatus, out.UserCreateDate, out.UserLastModifiedDate)
	gs, err := a.client.AdminListGroupsForUser(ctx, &cip.AdminListGroupsForUserInput{UserPoolId: aws.String(a.pool), Username: aws.String(m.User)})
	if err != nil {
		return Member{}, cognitoErr("read the account's groups", err)
	}
	for _, g := range gs.Groups {
		if r := Role(aws.ToString(g.GroupName)); slices.Contains(groups, r) {
			m.Groups = append(m.Groups, r)
		}
	}
	m.Role = roleOf(m.Groups)
	return m, nil
}

// Invite creates the account of email in role (admin or operator), on
// behalf of by. Cognito emails the person a temporary password (valid as
// long as the pool's TemporaryPasswordValidityDays; locally cognito-local
// prints the message in its log instead); their first sign-in sets their
// own. An account that exists already is a conflict: change its role
// instead. When adding to the group fails, the account exists with the
// role none (no rights) and the error says so.
func (a *Pool) Invite(ctx context.Context, by, email string, role Role) (Member, error) {
	email, err := ParseEmail(email)
	if err != nil {
		return Member{}, err
	}
	if role != Admin && role != Operator {
		return Member{}, stampduty.Invalid([]stampduty.FieldError{{Path: "role", Message: "role must be admin or operator"}})
	}
	out, err := a.client.AdminCreateUser(ctx, &cip.AdminCreateUserInput{
		UserPoolId: aws.String(a.pool), Username: aws.String(email),
		UserAttributes: []types.AttributeType{
			{Name: aws.String("email"), Value: aws.String(email)},
			{Name: aws.String("email_verified"), Value: aws.String("true")},
		},
		DesiredDeliveryMediums: []types.DeliveryMediumType{types.DeliveryMediumTypeEmail},
	})
	if err != nil {
		return Member{}, cognitoErr("invite "+email, err)
	}
	u := out.User
	m := member(aws.ToString(u.Username), u.Attributes, u.Enabled, u.UserStatus, u.UserCreateDate, u.UserLastModifiedDate)
	if err := a.addToGroup(ctx, m.User, role); err != nil {
		a.log(ctx, slog.LevelError, "invite", by, email, "role", None, "wanted", role, "error", err.Error())
		return m, &stampduty.Error{Code: stampduty.ErrorCode(err), Message: "invited " + email + " without a role: give it one with a role change", Err: err}
	}
	m.Groups, m.Role = []Role{role}, role
	a.log(ctx, slog.LevelInfo, "invite", by, email, "role", role)
	return m, nil
}

// Changed is what a role change, disable or enable did.
type Changed struct {
	Member
	// From is the role before a role change.
	From Role
	// SignedOut is true when the person's refresh tokens were revoked
	// everywhere (AdminUserGlobalSignOut).
	SignedOut bool
}

// Demotion reports whether the change took rights away (a lower role).
func (c Changed) Demotion() bool { return c.Role.rank() < c.From.rank() }

// SetRole gives the person of email the role to (admin, operator or none),
// on behalf of by. The steps are ordered so that a failure halfway never
// leaves more rights than the new role's once a step has been taken:
// first it leaves the groups that grant more than to (a demotion takes
// effect at its first call), then it joins to's group, then it leaves the
// groups that grant less. Demoting an enabled admin is refused when no
// other enabled admin would remain (see lastAdmin). A demotion also signs
// the person out everywhere, so that their next tokens carry the new
// groups (the ones they hold stay valid until they expire: 15 minutes).
func (a *Pool) SetRole(ctx context.Context, by, email string, to Role) (Changed, error) {
	to, err := ParseRole(string(to))
	if err != nil {
		return Changed{}, err
	}
	m, err := a.Get(ctx, email)
	if err != nil {
		return Changed{}, err
	}
	c := Changed{Member: m, From: m.Role}
	demotesAdmin := slices.Contains(m.Groups, Admin) && to != Admin
	if demotesAdmin && m.Enabled {
		if err := a.lastAdmin(ctx, m, "demote"); err != nil {
			return c, err
		}
	}
	// Leave the groups above to, join to's, leave those below.
	for _, g := range groups {
		if g.rank() > to.rank() && slices.Contains(m.Groups, g) {
			if err := a.removeFromGroup(ctx, m.User, g); err != nil {
				return c, a.failed(ctx, "role", by, m.Email, err, "to", to)
			}
		}
	}
	if to != None && !slices.Contains(m.Groups, to) {
		if err := a.addToGroup(ctx, m.User, to); err != nil {
			return c, a.failed(ctx, "role", by, m.Email, err, "to", to)
		}
	}
	for _, g := range groups {
		if g.rank() < to.rank() && slices.Contains(m.Groups, g) {
			if err := a.removeFromGroup(ctx, m.User, g); err != nil {
				return c, a.failed(ctx, "role", by, m.Email, err, "to", to)
			}
		}
	}
	c.Groups, c.Role = nil, to
	if to != None {
		c.Groups = []Role{to}
	}
	if demotesAdmin && m.Enabled {
		undo := func() error {
			if err := a.addToGroup(ctx, m.User, Admin); err != nil {
				return err
			}
			if to != None && !slices.Contains(m.Groups, to) {
				return a.removeFromGroup(ctx, m.User, to)
			}
			return nil
		}
		if err := a.stillAnAdmin(ctx, m, undo); err != nil {
			return c, err
		}
	}
	if c.Demotion() {
		if c.SignedOut, err = a.signOut(ctx, m.User); err != nil {
			return c, a.failed(ctx, "role", by, m.Email, err, "to", to)
		}
	}
	a.log(ctx, slog.LevelInfo, "role", by, m.Email, "from", c.From, "to", to, "signed_out", c.SignedOut)
	return c, nil
}

// Disable disables the account of email, on behalf of by, and signs the
// person out everywhere (AdminUserGlobalSignOut revokes their refresh
// tokens; the access and id tokens they hold stay valid for API
// Gateway's JWT authorizer until they expire, 15 minutes). A disabled
// person cannot sign in (on AWS InitiateAuth answers NotAuthorizedException
// "User is disabled."). Disabling the last enabled admin is refused.
// Disabling a disabled account changes nothing and signs out again.
func (a *Pool) Disable(ctx context.Context, by, email string) (Changed, error) {
	m, err := a.Get(ctx, email)
	if err != nil {
		return Changed{}, err
	}
	c := Changed{Member: m, From: m.Role}
	isAdmin := m.Enabled && slices.Contains(m.Groups, Admin)
	if isAdmin {
		if err := a.lastAdmin(ctx, m, "disable"); err != nil {
			return c, err
		}
	}
	if _, err := a.client.AdminDisableUser(ctx, &cip.AdminDisableUserInput{UserPoolId: aws.String(a.pool), Username: aws.String(m.User)}); err != nil {
		return c, a.failed(ctx, "disable", by, m.Email, cognitoErr("disable "+m.Email, err))
	}
	c.Enabled = false
	if isAdmin {
		if err := a.stillAnAdmin(ctx, m, func() error {
			_, err := a.client.AdminEnableUser(ctx, &cip.AdminEnableUserInput{UserPoolId: aws.String(a.pool), Username: aws.String(m.User)})
			return cognitoErr("enable "+m.Email+" again", err)
		}); err != nil {
			return c, err
		}
	}
	if c.SignedOut, err = a.signOut(ctx, m.User); err != nil {
		return c, a.failed(ctx, "disable", by, m.Email, err)
	}
	a.log(ctx, slog.LevelInfo, "disable", by, m.Email, "role", m.Role, "signed_out", c.SignedOut)
	return c, nil
}

// Enable enables the account of email again, on behalf of by, with the
// role it had; the person signs in with their password as before.
func (a *Pool) Enable(ctx context.Context, by, email string) (Changed, error) {
	m, err := a.Get(ctx, email)
	if err != nil {
		return Changed{}, err
	}
	c := Changed{Member: m, From: m.Role}
	if _, err := a.client.AdminEnableUser(ctx, &cip.AdminEnableUserInput{UserPoolId: aws.String(a.pool), Username: aws.String(m.User)}); err != nil {
		return c, a.failed(ctx, "enable", by, m.Email, cognitoErr("enable "+m.Email, err))
	}
	c.Enabled = true
	a.log(ctx, slog.LevelInfo, "enable", by, m.Email, "role", m.Role)
	return c, nil
}

// failed logs a change that failed and returns err.
func (a *Pool) failed(ctx context.Context, action, by, email string, err error, args ...any) error {
	a.log(ctx, slog.LevelError, action, by, email, append(args, "error", err.Error())...)
	return err
}

// log writes one line of a change: the action, who did it (by), to whom.
// Cognito keeps no record of who made a change (CloudTrail names the
// caller's IAM role, the console function's), so this line is the record.
func (a *Pool) log(ctx context.Context, level slog.Level, action, by, email string, args ...any) {
	a.opts.Log.Log(ctx, level, "staff", append([]any{"action", action, "by", by, "email", email}, args...)...)
}
