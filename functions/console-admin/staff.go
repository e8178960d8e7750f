package main

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"stampduty/shared/config"
	"stampduty/shared/function"
	"stampduty/shared/function/staffauth"
	"stampduty/shared/jsonobj"
	"stampduty/shared/staff"
	"stampduty/shared/stampduty"
	"stampduty/shared/tracing"
)

// staffAdmin is the staff's workflows (staff.Pool).
type staffAdmin interface {
	List(ctx context.Context) ([]staff.Member, error)
	Invite(ctx context.Context, by, email string, role staff.Role) (staff.Member, error)
	SetRole(ctx context.Context, by, email string, to staff.Role) (staff.Changed, error)
	Disable(ctx context.Context, by, email string) (staff.Changed, error)
	Enable(ctx context.Context, by, email string) (staff.Changed, error)
}

// staffPool returns the staff's workflows on the pool STAFF_USER_POOL_ID
// names (the template's !Ref StaffUserPool), with the function's own
// credentials and region, as store.Open reads them. COGNITO_ENDPOINT,
// declared empty in the template, is set only by a local runtime
// (config.Env.Endpoint refuses it elsewhere): the local Cognito, which
// does not serve AdminUserGlobalSignOut, so that call is left out there
// (staff.Options.SkipGlobalSignOut) and never on AWS.
//
// The pool's change lines (staff.Options.Log) are not written: they name
// the person changed and the admin by email, and no log line of the
// service holds an email. Who did what is the request's own line (the
// route, its status, and the admin by their pool's sub) with CloudTrail's
// record of the admin API's calls, which names the account changed by its
// user name (its sub on AWS).
func staffPool(env *config.Env) *staff.Pool {
	cfg := aws.Config{
		Region: env.Require("AWS_REGION"),
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(
			env.Require("AWS_ACCESS_KEY_ID"), env.Require("AWS_SECRET_ACCESS_KEY"), env.Get("AWS_SESSION_TOKEN"))),
		HTTPClient: &http.Client{Timeout: 5 * time.Second},
	}
	endpoint := env.Endpoint("COGNITO_ENDPOINT")
	if endpoint != "" {
		cfg.BaseEndpoint = aws.String(endpoint)
	}
	tracing.Instrument(&cfg.APIOptions)
	return staff.New(cfg, env.Require("STAFF_USER_POOL_ID"), staff.Options{SkipGlobalSignOut: endpoint != ""})
}

// member is one staff account as the console shows it: the email (the
// person), their role (admin, operator, or none: signs in and may do
// nothing), whether the account is enabled, and Cognito's status
// (FORCE_CHANGE_PASSWORD until the invitation's first sign-in, then
// CONFIRMED). SignedOut, on a change only, says whether the person's
// sessions were ended everywhere (never locally: the local Cognito cannot).
type member struct {
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	Enabled   bool      `json:"enabled"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
	SignedOut *bool     `json:"signedOut,omitempty"`
}

// The staff routes' answers: the list, one account.
type (
	staffResponse  = response[[]member]
	memberResponse struct {
		Data member `json:"data"`
	}
)

// staffRoutes are the staff's admin routes. The person changed is named in
// the body ({"email": …}), never in the path: an email is personal data,
// which no URL holds.
func (h *handler) staffRoutes() []function.Path {
	return []function.Path{
		{Method: http.MethodGet, Pattern: "/api/console/staff", Serve: staffauth.AsAdmin(h.listStaff)},
		{Method: http.MethodPost, Pattern: "/api/console/staff", Serve: staffauth.AsAdmin(h.invite)},
		{Method: http.MethodPost, Pattern: "/api/console/staff/role", Serve: staffauth.AsAdmin(h.setRole)},
		{Method: http.MethodPost, Pattern: "/api/console/staff/disable", Serve: staffauth.AsAdmin(h.disable)},
		{Method: http.MethodPost, Pattern: "/api/console/staff/enable", Serve: staffauth.AsAdmin(h.enable)},
	}
}

// listStaff answers every account of the pool, by email (staff.Pool.List:
// one ListUsers per 60 accounts, one ListUsersInGroup per 60 members of
// each role group).
func (h *handler) listStaff(r *http.Request, _ string) (any, error) {
	list, err := h.staff.List(r.Context())
	if err != nil {
		return nil, private(err)
	}
	out := staffResponse{Data: make([]member, 0, len(list))}
	for _, m := range list {
		out.Data = append(out.Data, shown(m, nil))
	}
	return out, nil
}

// invite creates the account of the body's email with its role (admin or
// operator), on behalf of the admin signed in: Cognito emails the person
// a temporary password. An email already in the pool is 409.
func (h *handler) invite(r *http.Request, by string) (any, error) {
	b, err := readStaffBody(r, true)
	if err != nil {
		return nil, err
	}
	if b.role != staff.Admin && b.role != staff.Operator {
		return nil, stampduty.Invalid([]stampduty.FieldError{{Path: "role", Message: "role must be admin or operator"}})
	}
	m, err := h.staff.Invite(r.Context(), by, b.email, b.role)
	if err != nil {
		return nil, private(err)
	}
	return function.Status{Code: http.StatusCreated, Body: memberResponse{Data: shown(m, nil)}}, nil
}

// setRole gives the body's email the body's role (admin, operator or
// none). Demoting the last enabled admin is 409, nothing changed.
func (h *handler) setRole(r *http.Request, by string) (any, error) {
	b, err := readStaffBody(r, true)
	if err != nil {
		return nil, err
	}
	return staffChanged(h.staff.SetRole(r.Context(), by, b.email, b.role))
}

// disable disables the account of the body's email and signs the person
// out everywhere (on AWS). Disabling the last enabled admin is 409.
func (h *handler) disable(r *http.Request, by string) (any, error) {
	b, err := readStaffBody(r, false)
	if err != nil {
		return nil, err
	}
	return staffChanged(h.staff.Disable(r.Context(), by, b.email))
}

// enable enables the account of the body's email again, with its role.
func (h *handler) enable(r *http.Request, by string) (any, error) {
	b, err := readStaffBody(r, false)
	if err != nil {
		return nil, err
	}
	return staffChanged(h.staff.Enable(r.Context(), by, b.email))
}

// staffChanged answers a change with the account as it now is.
func staffChanged(c staff.Changed, err error) (any, error) {
	if err != nil {
		return nil, private(err)
	}
	return memberResponse{Data: shown(c.Member, &c.SignedOut)}, nil
}

// shown is m as the console shows it.
func shown(m staff.Member, signedOut *bool) member {
	return member{Email: m.Email, Role: string(m.Role), Enabled: m.Enabled, Status: m.Status, CreatedAt: m.Created.UTC(), SignedOut: signedOut}
}

// staffBody is a staff change's body: the person's email and, for an
// invitation or a role change, the role.
type staffBody struct {
	email string
	role  staff.Role
}

// readStaffBody reads {"email": "…"} and, when withRole, {"role": "…"}
// too, each a string; another member, or one missing, is 400 naming it.
// The email is checked as the workflow checks it (staff.ParseEmail), the
// role as staff.ParseRole, so that every refusal of the body names its
// field before Cognito is called.
func readStaffBody(r *http.Request, withRole bool) (staffBody, error) {
	members, err := function.ReadObject(r)
	if err != nil {
		return staffBody{}, err
	}
	var (
		b        staffBody
		bad      []stampduty.FieldError
		seen     = map[string]bool{}
		email    string
		roleText string
	)
	for _, m := range members {
		switch {
		case m.Key != "email" && (m.Key != "role" || !withRole):
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: m.Key + " is not a field of this request"})
		case m.Value.Kind != jsonobj.String:
			bad = append(bad, stampduty.FieldError{Path: m.Key, Message: m.Key + " must be a string"})
		case m.Key == "email":
			email, seen["email"] = m.Value.Text, true
		default:
			roleText, seen["role"] = m.Value.Text, true
		}
	}
	badAt := func(path string) bool {
		for _, f := range bad {
			if f.Path == path {
				return true
			}
		}
		return false
	}
	if !badAt("email") {
		if b.email, err = staff.ParseEmail(email); err != nil {
			bad = append(bad, fieldsOf(err)...)
		}
	}
	if withRole && !badAt("role") {
		if !seen["role"] {
			bad = append(bad, stampduty.FieldError{Path: "role", Message: "role is required"})
		} else if b.role, err = staff.ParseRole(roleText); err != nil {
			bad = append(bad, fieldsOf(err)...)
		}
	}
	if bad != nil {
		return staffBody{}, stampduty.Invalid(bad)
	}
	return b, nil
}

// fieldsOf returns the failing fields of an EINVALID error.
func fieldsOf(err error) []stampduty.FieldError {
	var e *stampduty.Error
	if errors.As(err, &e) {
		return e.Fields
	}
	return []stampduty.FieldError{{Path: "", Message: err.Error()}}
}

// anEmail matches what may be an email address in an error's text.
var anEmail = regexp.MustCompile(`[^\s@:"'<>(),;]+@[^\s@:"'<>(),;]+`)

// private returns err with every email in its text replaced, when it is a
// fault (5xx): the request's log line holds a fault's cause, and no log
// line holds an email. The workflows name the account in their errors; a
// refusal (4xx) keeps its message for the admin, and is logged by its kind
// only.
func private(err error) error {
	var e *stampduty.Error
	if !errors.As(err, &e) || function.NewErrorBody(err).Error.Status < 500 {
		return err
	}
	out := &stampduty.Error{Code: e.Code, Message: anEmail.ReplaceAllString(e.Message, "[email]"), Fields: e.Fields}
	if e.Err != nil {
		out.Err = errors.New(anEmail.ReplaceAllString(e.Err.Error(), "[email]"))
	}
	return out
}
