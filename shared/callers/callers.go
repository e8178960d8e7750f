// Package callers is the admins' workflows over the callers of the API:
// list them with their tokens and orders, create one, issue a token for
// one (shown once), revoke a token. stampctl's `callers` and `token`
// commands run them; the console's endpoints will run the same.
//
// A caller has its own record (store.Tokens, in the tokens table under
// `caller#<owner>`), so that it exists before its first token (the
// console creates a caller, then issues its token), its name is checked
// and taken once (a second create of the name is a conflict, so a typo
// makes no second caller silently), and who created it and when is kept.
// Callers from before records are their tokens' owners: they are listed
// all the same, and get a record when stampctl issues them a token.
package callers

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
)

// Store is the tokens table with the callers' records (store.Tokens).
type Store interface {
	Everything(ctx context.Context) ([]auth.Caller, []auth.Token, error)
	CreateCaller(ctx context.Context, c auth.Caller) error
	Caller(ctx context.Context, owner string) (auth.Caller, error)
	Create(ctx context.Context, t auth.Token) error
	Revoke(ctx context.Context, id string, now time.Time) (auth.Token, error)
}

// Orders counts a caller's orders (store.Orders.Count: the caller's order
// counter, one Query of two small items, 1 RCU, never a scan).
type Orders interface {
	Count(ctx context.Context, owner string) (int, error)
}

// Admin runs the callers' workflows.
type Admin struct {
	Tokens Store
	Orders Orders
	Hasher *auth.Hasher
	Now    func() time.Time
}

// Summary is a caller as the list shows it: its record (CreatedAt zero and
// Recorded false for a caller from before records), how many of its tokens
// are active and revoked, and how many orders it has: its live orders
// only, as every live figure counts (test-mode.md); its test orders are
// numbered under its test principal's key (stampduty.TestOwnerOf), which the list
// does not read.
type Summary struct {
	auth.Caller
	Recorded        bool
	Active, Revoked int
	Orders          int
}

// countsAtOnce is how many order counts List reads at the same time.
const countsAtOnce = 8

// List returns every caller, by owner: those with a record and every
// owner of a token. One Scan of the tokens table, then one order count per
// caller (1 RCU each), countsAtOnce at a time.
func (a *Admin) List(ctx context.Context) ([]Summary, error) {
	cs, ts, err := a.Tokens.Everything(ctx)
	if err != nil {
		return nil, err
	}
	by := map[string]*Summary{}
	get := func(owner string) *Summary {
		if s, ok := by[owner]; ok {
			return s
		}
		s := &Summary{Caller: auth.Caller{Owner: owner}}
		by[owner] = s
		return s
	}
	for _, c := range cs {
		s := get(c.Owner)
		s.Caller, s.Recorded = c, true
	}
	for _, t := range ts {
		s := get(t.Owner)
		if t.Revoked() {
			s.Revoked++
		} else {
			s.Active++
		}
	}
	out := make([]Summary, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(x, y Summary) int { return cmp.Compare(x.Owner, y.Owner) })
	var (
		wg    sync.WaitGroup
		sem   = make(chan struct{}, countsAtOnce)
		mu    sync.Mutex
		first error
	)
	for i := range out {
		if !auth.ValidOwner(out[i].Owner) {
			continue // a stray record: no orders can be its
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			n, err := a.Orders.Count(ctx, out[i].Owner)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = err
			}
			out[i].Orders = n
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, nil
}

// checkBy refuses an actor that cannot name who acts.
func checkBy(by string) error {
	if !stampduty.ValidActor(by) {
		return stampduty.Errorf(stampduty.EINVALID, "who acts must be 1 to %d printable ASCII characters without spaces (an email)",
			stampduty.MaxActorLength)
	}
	return nil
}

// checkOwner refuses a name no caller can have.
func checkOwner(owner string) error {
	if !auth.ValidOwner(owner) {
		return stampduty.Errorf(stampduty.EINVALID, "a caller's name (owner) is 1 to 64 ASCII letters, digits, '.', '_' or '-'")
	}
	return nil
}

// Create creates the caller owner, as by; ECONFLICT when it exists.
func (a *Admin) Create(ctx context.Context, by, owner string) (auth.Caller, error) {
	if err := checkBy(by); err != nil {
		return auth.Caller{}, err
	}
	if err := checkOwner(owner); err != nil {
		return auth.Caller{}, err
	}
	c := auth.Caller{Owner: owner, CreatedAt: a.Now().UTC(), CreatedBy: by}
	return c, a.Tokens.CreateCaller(ctx, c)
}

// Issue issues a new token for the caller owner, as by, and returns the
// token itself (to be shown once: only its keyed hash is stored) and its
// record. With test, the token is a test token (auth.TestPrefix), which
// works as the caller's test principal (stampduty.TestOwnerOf) and sees only its
// test data. A caller without a record is ENOTFOUND: create it first.
func (a *Admin) Issue(ctx context.Context, by, owner string, test bool) (string, auth.Token, error) {
	if err := checkBy(by); err != nil {
		return "", auth.Token{}, err
	}
	if err := checkOwner(owner); err != nil {
		return "", auth.Token{}, err
	}
	if _, err := a.Tokens.Caller(ctx, owner); err != nil {
		if stampduty.ErrorCode(err) == stampduty.ENOTFOUND {
			return "", auth.Token{}, stampduty.Errorf(stampduty.ENOTFOUND, "no caller %s: create it first", owner)
		}
		return "", auth.Token{}, err
	}
	newToken := a.Hasher.NewToken
	if test {
		newToken = a.Hasher.NewTestToken
	}
	secret, hash, err := newToken()
	if err != nil {
		return "", auth.Token{}, stampduty.Internal(err)
	}
	t := auth.Token{Hash: hash, Owner: owner, CreatedAt: a.Now().UTC(), CreatedBy: by, Test: test}
	if err := a.Tokens.Create(ctx, t); err != nil {
		return "", auth.Token{}, err
	}
	return secret, t, nil
}

// TokensOf returns the tokens of the caller owner, oldest first, revoked
// ones included (one Scan of the tokens table, as List). A name no caller
// has, neither a record nor a token, is ENOTFOUND.
func (a *Admin) TokensOf(ctx context.Context, owner string) ([]auth.Token, error) {
	if err := checkOwner(owner); err != nil {
		return nil, err
	}
	cs, ts, err := a.Tokens.Everything(ctx)
	if err != nil {
		return nil, err
	}
	out := []auth.Token{}
	for _, t := range ts {
		if t.Owner == owner {
			out = append(out, t)
		}
	}
	if len(out) == 0 && !slices.ContainsFunc(cs, func(c auth.Caller) bool { return c.Owner == owner }) {
		return nil, stampduty.Errorf(stampduty.ENOTFOUND, "no caller %s", owner)
	}
	return out, nil
}

// Revoke revokes the token whose ID is id (store.Tokens.Revoke): it stops
// working everywhere within auth.CacheTTL (5 seconds), the time a
// function's authenticator keeps a lookup. Revoking a revoked token
// changes nothing.
func (a *Admin) Revoke(ctx context.Context, id string) (auth.Token, error) {
	return a.Tokens.Revoke(ctx, id, a.Now().UTC())
}

// Known returns nil when owner is a caller: one with a record (one
// GetItem), else one from before records that has a token (one Scan, as
// TokensOf); ENOTFOUND "no caller <owner>" otherwise.
func (a *Admin) Known(ctx context.Context, owner string) error {
	if err := checkOwner(owner); err != nil {
		return err
	}
	_, err := a.Tokens.Caller(ctx, owner)
	if stampduty.ErrorCode(err) != stampduty.ENOTFOUND {
		return err
	}
	_, err = a.TokensOf(ctx, owner)
	return err
}
