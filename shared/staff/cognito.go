package staff

// This file holds the Cognito calls the workflows share (groups, global
// sign-out) and how Cognito's errors map onto the service's error kinds.

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	"github.com/aws/smithy-go"

	"stampduty/shared/stampduty"
)

// signOut revokes the refresh tokens of user everywhere, unless
// SkipGlobalSignOut; it reports whether it did.
func (a *Pool) signOut(ctx context.Context, user string) (bool, error) {
	if a.opts.SkipGlobalSignOut {
		return false, nil
	}
	if _, err := a.client.AdminUserGlobalSignOut(ctx, &cip.AdminUserGlobalSignOutInput{UserPoolId: aws.String(a.pool), Username: aws.String(user)}); err != nil {
		return false, cognitoErr("sign out everywhere", err)
	}
	return true, nil
}

func (a *Pool) addToGroup(ctx context.Context, user string, g Role) error {
	_, err := a.client.AdminAddUserToGroup(ctx, &cip.AdminAddUserToGroupInput{UserPoolId: aws.String(a.pool), Username: aws.String(user), GroupName: aws.String(string(g))})
	return cognitoErr("add to the group "+string(g), err)
}

func (a *Pool) removeFromGroup(ctx context.Context, user string, g Role) error {
	_, err := a.client.AdminRemoveUserFromGroup(ctx, &cip.AdminRemoveUserFromGroupInput{UserPoolId: aws.String(a.pool), Username: aws.String(user), GroupName: aws.String(string(g))})
	return cognitoErr("remove from the group "+string(g), err)
}

// cognitoErr maps an error of Cognito's API onto the service's error
// kinds, what said of the operation; nil stays nil.
func cognitoErr(what string, err error) error {
	if err == nil {
		return nil
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		// No answer from Cognito (a network failure, a deadline).
		return &stampduty.Error{Code: stampduty.EUNAVAILABLE, Message: "Service Unavailable", Err: fmt.Errorf("%s: %w", what, err)}
	}
	wrap := func(code stampduty.Code, msg string) error {
		return &stampduty.Error{Code: code, Message: msg, Err: fmt.Errorf("%s: %w", what, err)}
	}
	switch ae.ErrorCode() {
	case "UsernameExistsException", "AliasExistsException":
		return wrap(stampduty.ECONFLICT, "a staff account with this email exists already")
	case "UserNotFoundException":
		return wrap(stampduty.ENOTFOUND, "no staff account has this email")
	case "InvalidParameterException":
		return wrap(stampduty.EINVALID, "Cognito refused the request: "+ae.ErrorMessage())
	case "TooManyRequestsException", "LimitExceededException", "InternalErrorException", "ThrottlingException":
		return wrap(stampduty.EUNAVAILABLE, "Service Unavailable")
	}
	return &stampduty.Error{Code: stampduty.EINTERNAL, Message: "Internal Server Error", Err: fmt.Errorf("%s: %w", what, err)}
}
