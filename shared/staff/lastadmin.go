package staff

// This file holds the last-admin rule: a change never leaves the pool
// without an enabled admin.

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"

	"stampduty/shared/stampduty"
)

// lastAdmin refuses (ECONFLICT) to take away m's admin rights (by
// demoting or disabling them) when no other enabled admin would remain.
// It counts the members of the admin group that are enabled, whatever
// their status (an invited admin signs in with the invitation), other
// than m: one ListUsersInGroup call per 60 admins.
//
// Cognito has no conditional write, so two admins removing themselves at
// once could both count the other; stillAnAdmin, after the change, closes
// that race.
func (a *Pool) lastAdmin(ctx context.Context, m Member, what string) error {
	n, err := a.otherAdmins(ctx, m.User)
	if err != nil {
		return err
	}
	if n == 0 {
		return stampduty.Errorf(stampduty.ECONFLICT, "cannot %s %s: they are the last enabled admin; make another person admin first", what, m.Email)
	}
	return nil
}

// otherAdmins counts the enabled admins other than user.
func (a *Pool) otherAdmins(ctx context.Context, user string) (int, error) {
	admins, err := a.groupMembers(ctx, Admin)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, u := range admins {
		if u.Enabled && aws.ToString(u.Username) != user {
			n++
		}
	}
	return n, nil
}

// stillAnAdmin counts the other enabled admins again after m lost their
// admin rights, and undoes that change when none remains: of two admins
// removing themselves at the same time, the later to count sees the
// other's change and undoes its own (as long as Cognito's reads follow
// its writes), so one admin always remains. The undo's own failure is
// returned, with the pool possibly left without an admin: stampctl (with
// IAM) can always make one.
func (a *Pool) stillAnAdmin(ctx context.Context, m Member, undo func() error) error {
	n, err := a.otherAdmins(ctx, m.User)
	if err != nil || n > 0 {
		return err
	}
	if err := undo(); err != nil {
		a.log(ctx, slog.LevelError, "undo", "", m.Email, "error", err.Error())
		return fmt.Errorf("%s was the last enabled admin after all and could not be restored: %w", m.Email, err)
	}
	return stampduty.Errorf(stampduty.ECONFLICT, "%s is the last enabled admin (another admin lost their rights at the same time): nothing changed", m.Email)
}
