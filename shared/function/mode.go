package function

import (
	"net/http"
	"strings"

	"stampduty/shared/auth"
	"stampduty/shared/stampduty"
)

// The values of the mode query parameter (test-mode.md): a caller's reads
// name the world they mean, which must be the token's.
const (
	ModeLive = "live"
	ModeTest = "test"
)

// CheckMode checks the mode query parameter of a caller's read of orders
// (the list, a one-order read) against the mode of owner, the token's
// owner key: absent, or the token's own mode ("live" for a live token,
// "test" for a test token), it changes nothing (nil). The other mode is
// EFORBIDDEN (403), answered before anything is read: a token reads its
// own world only, and a caller that asks for the other one has the wrong
// token, which an empty list would hide. Any other value, the parameter
// given more than once, or in Strapi's bracket forms (mode[0]=test), is
// EINVALID naming mode: a caller who meant a mode never gets the other
// world's answer by a spelling read as no mode.
func CheckMode(r *http.Request, owner string) error {
	q := r.URL.Query()
	const msg = `mode must be "live" or "test", given once`
	invalid := &stampduty.Error{Code: stampduty.EINVALID, Message: msg, Fields: []stampduty.FieldError{{Path: "mode", Message: msg}}}
	for k := range q {
		if strings.HasPrefix(k, "mode[") {
			return invalid
		}
	}
	vals, ok := q["mode"]
	if !ok {
		return nil
	}
	if len(vals) != 1 || (vals[0] != ModeLive && vals[0] != ModeTest) {
		return invalid
	}
	switch _, live := stampduty.CallerOf(owner); {
	case live && vals[0] == ModeTest:
		return stampduty.Errorf(stampduty.EFORBIDDEN, "Forbidden: a live token reads live data only; use a test token (%s…) for mode=test", auth.TestPrefix)
	case !live && vals[0] == ModeLive:
		return stampduty.Errorf(stampduty.EFORBIDDEN, "Forbidden: a test token reads test data only; use a live token for mode=live")
	}
	return nil
}
