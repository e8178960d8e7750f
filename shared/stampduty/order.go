package stampduty

import (
	"regexp"
	"strings"

	"stampduty/shared/duty"
)

// The fields of a create-order body, in the order their errors are reported.
const (
	fAmount = iota
	fConsiderationPrice
	fDescription
	fPurpose
	fState
	fPaidBy
	fPurchasedBy
	fFirstPartyMobileNumber
	fFirstPartyName
	fSecondPartyName
	fFirstPartyAddress
	fSecondPartyAddress
	fFirstPartyPan
	fSecondPartyPan
	fQuantity
	numOrderFields
)

// orderFieldNames are the JSON names of the create-order fields, by index.
var orderFieldNames = [numOrderFields]string{
	"amount",
	"considerationPrice",
	"description",
	"purpose",
	"state",
	"paidBy",
	"purchasedBy",
	"firstPartyMobileNumber",
	"firstPartyName",
	"secondPartyName",
	"firstPartyAddress",
	"secondPartyAddress",
	"firstPartyPan",
	"secondPartyPan",
	"quantity",
}

// orderFieldIndex returns the index of a create-order field, -1 for an
// unknown key. The comparison is case-sensitive.
func orderFieldIndex(key string) int {
	switch key {
	case "amount":
		return fAmount
	case "considerationPrice":
		return fConsiderationPrice
	case "description":
		return fDescription
	case "purpose":
		return fPurpose
	case "state":
		return fState
	case "paidBy":
		return fPaidBy
	case "purchasedBy":
		return fPurchasedBy
	case "firstPartyMobileNumber":
		return fFirstPartyMobileNumber
	case "firstPartyName":
		return fFirstPartyName
	case "secondPartyName":
		return fSecondPartyName
	case "firstPartyAddress":
		return fFirstPartyAddress
	case "secondPartyAddress":
		return fSecondPartyAddress
	case "firstPartyPan":
		return fFirstPartyPan
	case "secondPartyPan":
		return fSecondPartyPan
	case "quantity":
		return fQuantity
	}
	return -1
}

// OrderBody is a create-order body as the edge decoded it: the value of
// each field, Absent when it was not sent, and the names that are not
// fields. PurposeState and Validate check it.
type OrderBody struct {
	fields  [numOrderFields]Value
	unknown []string // names that are not create-order fields, in body order
	// duty holds the fields of duty rules (duty-rules.md §8): the inputs
	// of §3 but amount and considerationPrice, instrumentDate and
	// dutyRule, by name.
	duty map[string]Value
}

// dutyField reports whether name is a create-order field of duty rules
// that is not one of the contract's table.
func dutyField(name string) bool {
	switch name {
	case "amount", "considerationPrice":
		return false
	case "instrumentDate", "dutyRule":
		return true
	}
	return duty.IsNumericInput(name) || duty.IsEnumInput(name)
}

// OrderRequest is a validated create-order body with the defaults applied:
// Description "N/A" when absent or blank, PurchasedBy, addresses and PANs ""
// when absent, Purpose trimmed, Quantity 1 when absent or null. Amount and
// ConsiderationPrice are in 0..MaxAmount; Quantity in 1..MaxQuantity.
type OrderRequest struct {
	Amount, ConsiderationPrice, Quantity                                 int64
	Description, Purpose, State, PaidBy, PurchasedBy                     string
	FirstPartyMobileNumber, FirstPartyName, SecondPartyName              string
	FirstPartyAddress, SecondPartyAddress, FirstPartyPan, SecondPartyPan string
	// AmountSent says amount was sent: an article with rules of its own
	// computes it (duty-rules.md §8), and checks it only when sent.
	AmountSent bool
	// Inputs are the inputs for the article's rules, read in their form;
	// InputErrors the ones whose form is refused, reported with what the
	// rule says of the others. Inputs.Date is the instrumentDate sent, ""
	// when none was.
	Inputs      duty.Request
	InputErrors []FieldError
	// DutyRule is the hash of the rule a quote named, "" when not sent.
	DutyRule string
}

// NewOrderBody sorts the decoded fields of a create-order body into its
// fields (names compared case-sensitively) and its unknown names. A name
// given more than once keeps its first value and is listed once; the edge
// refuses such bodies before.
func NewOrderBody(fields []Field) *OrderBody {
	b := &OrderBody{}
	listed := map[string]bool{} // the unknown names so far
	for _, f := range fields {
		switch idx := orderFieldIndex(f.Name); {
		case idx < 0 && dutyField(f.Name):
			if b.duty == nil {
				b.duty = map[string]Value{}
			}
			if _, ok := b.duty[f.Name]; !ok {
				b.duty[f.Name] = f.Value
			}
		case idx >= 0 && b.fields[idx].Kind == Absent:
			b.fields[idx] = f.Value
		case idx < 0 && !listed[f.Name]:
			listed[f.Name] = true
			b.unknown = append(b.unknown, f.Name)
		}
	}
	return b
}

// PurposeState returns the trimmed purpose and the state when both are
// strings (ok), for the article lookup that comes before validation. When no
// article can have them — the purpose breaks the purpose rules (checkPurpose,
// or it escapes a lone surrogate) or the state is not one of States — err is the ENOTFOUND error the lookup
// would answer, decided here without one, so that nothing but a possible
// article key ever reaches the store or its cache.
func (r *OrderBody) PurposeState() (purpose, state string, ok bool, err error) {
	p, s := r.fields[fPurpose], r.fields[fState]
	if p.Kind != String || s.Kind != String {
		return "", "", false, nil
	}
	return articleKey(p.Text, s.Text, p.LoneSurrogate)
}

// ValidArticleKey reports whether an article could have this purpose and
// state: the purpose is trimmed and passes checkPurpose, and the state is one
// of States.
func ValidArticleKey(purpose, state string) bool {
	return checkPurpose(purpose) == "" && strings.TrimSpace(purpose) == purpose && ValidState(state)
}

// NotFoundPurpose is the ENOTFOUND error of a (purpose, state) no article has.
func NotFoundPurpose(purpose string) error {
	return Errorf(ENOTFOUND, "Purpose with the name: %s cannot be found.", purpose)
}

// Validate checks every field against the contract and returns the request
// with defaults applied. It reports every failing field at once, one message
// per field, in the order of the contract's table and then the unknown keys
// in body order, as an EINVALID *Error built by Invalid. For an article
// whose rules are not legacy (schedule), amount and considerationPrice may
// be left out (duty-rules.md §8). The inputs of duty rules whose form
// fails are returned in InputErrors when nothing else fails, for the
// rule's own problems to join them.
func (r *OrderBody) Validate(schedule bool) (OrderRequest, error) {
	var (
		req  OrderRequest
		errs []FieldError
	)
	fail := func(idx int, msg string) {
		errs = append(errs, FieldError{Path: orderFieldNames[idx], Message: orderFieldNames[idx] + msg})
	}
	req.Inputs = duty.Request{Numbers: map[string]int64{}, Enums: map[string]string{}, Malformed: map[string]bool{}}
	inputErr := map[int]bool{} // indexes in errs of the inputs' form errors

	var msg string
	for _, f := range [...]struct {
		idx      int
		dst      *int64
		tooLarge string
	}{{fAmount, &req.Amount, msgAboveMaxAmount}, {fConsiderationPrice, &req.ConsiderationPrice, msgConsiderationTooLong}} {
		v := r.fields[f.idx]
		if schedule && (v.Kind == Absent || v.Kind == Null) {
			continue
		}
		if *f.dst, msg = amountValue(v, f.tooLarge); msg != "" {
			inputErr[len(errs)] = true
			fail(f.idx, msg)
			continue
		}
		req.Inputs.Numbers[orderFieldNames[f.idx]] = *f.dst
	}
	_, req.AmountSent = req.Inputs.Numbers["amount"]
	// The string fields in the contract's order: how each is read, then how
	// the value read is checked.
	for _, f := range [...]struct {
		idx   int
		dst   *string
		read  func(r *OrderBody, idx int) (string, string)
		check func(s string) string
	}{
		{fDescription, &req.Description, (*OrderBody).optionalString, checkDescription},
		{fPurpose, &req.Purpose, (*OrderBody).trimmedText, checkPurpose},
		{fState, &req.State, (*OrderBody).requiredString, checkState},
		{fPaidBy, &req.PaidBy, (*OrderBody).requiredString, checkPaidBy},
		{fPurchasedBy, &req.PurchasedBy, (*OrderBody).optionalText, checkFreeText},
		{fFirstPartyMobileNumber, &req.FirstPartyMobileNumber, (*OrderBody).requiredString, checkMobile},
		{fFirstPartyName, &req.FirstPartyName, (*OrderBody).requiredString, checkName},
		{fSecondPartyName, &req.SecondPartyName, (*OrderBody).requiredString, checkName},
		{fFirstPartyAddress, &req.FirstPartyAddress, (*OrderBody).optionalString, checkAddress},
		{fSecondPartyAddress, &req.SecondPartyAddress, (*OrderBody).optionalString, checkAddress},
		{fFirstPartyPan, &req.FirstPartyPan, (*OrderBody).optionalString, checkPAN},
		{fSecondPartyPan, &req.SecondPartyPan, (*OrderBody).optionalString, checkPAN},
	} {
		if *f.dst, msg = f.read(r, f.idx); msg == "" {
			msg = f.check(*f.dst)
		}
		if msg != "" {
			fail(f.idx, msg)
		}
	}
	if req.Quantity, msg = quantityValue(r.fields[fQuantity]); msg != "" {
		fail(fQuantity, msg)
	}
	r.dutyFields(&req, &errs, inputErr)
	for _, key := range r.unknown {
		errs = append(errs, FieldError{Path: key, Message: key + msgNotAllowed})
	}
	if len(errs) > len(inputErr) {
		return OrderRequest{}, Invalid(errs)
	}
	for i, e := range errs {
		if inputErr[i] {
			req.InputErrors = append(req.InputErrors, e)
			req.Inputs.Malformed[e.Path] = true
		}
	}
	// A blank description, absent or null among them, is N/A.
	if strings.Trim(req.Description, " ") == "" {
		req.Description = "N/A"
	}
	return req, nil
}

// The messages of Validate, after the field name.
const (
	msgRequired      = " is a required field"
	msgMustBeString  = " must be a string"
	msgMustBeInteger = " must be an integer"
	// msgConsiderationTooLong is the message of a consideration price above MaxAmount.
	msgConsiderationTooLong = " must have at most 15 digits"
	msgNotNegative          = " must be greater than or equal to 0"
	msgNotEmpty             = " must not be empty"
	msgState                = " must be one of the states or union territories of India"
	msgPaidBy               = " must be one of: First Party, Second Party"
	msgMobile               = " must be exactly 10 digits"
	msgFreeTextLen          = " must be at most 200 characters"
	msgUnprintable          = " must not contain control, format, bidirectional, zero-width or line separator characters"
	msgDescriptionLen       = " must be at most 100 characters"
	msgDescriptionSet       = " may only contain letters, digits, spaces and ! # @ $ * ( ) - + ; : , . ? /"
	msgNameLen              = " must be at most 40 characters"
	msgNameSet              = " may only contain letters, digits and spaces"
	msgAddressLen           = " must be at most 120 characters"
	msgAddressSet           = " may only contain letters, digits, spaces and . / : , - \\"
	msgPAN                  = " must be empty or a PAN: 5 capital letters, 4 digits, 1 capital letter"
	msgQuantity             = " must be an integer from 1 to 20"
)

// MaxQuantity is the most papers one order may ask for (papers.md).
const MaxQuantity = 20

// quantityValue reads the optional number of papers: absent or null is 1
// (as the other optional fields treat null as absent); otherwise a JSON
// integer (2.0 and 2e0 are 2, as for amounts) from 1 to MaxQuantity. Every
// other value, a string "2" and a boolean among them, is msgQuantity.
func quantityValue(v Value) (int64, string) {
	if v.Kind == Absent || v.Kind == Null {
		return 1, ""
	}
	if i, msg := integerValue(v); msg == "" && i >= 1 && i <= MaxQuantity {
		return i, ""
	}
	return 0, msgQuantity
}

// requiredString reads a required string field.
func (r *OrderBody) requiredString(idx int) (string, string) {
	switch v := r.fields[idx]; v.Kind {
	case Absent, Null:
		return "", msgRequired
	case String:
		return v.Text, ""
	}
	return "", msgMustBeString
}

// trimmedText reads a required free text without leading and trailing white
// space (the purpose).
func (r *OrderBody) trimmedText(idx int) (string, string) {
	s, msg := r.requiredString(idx)
	return r.freeText(idx, strings.TrimSpace(s), msg)
}

// optionalText reads an optional free text.
func (r *OrderBody) optionalText(idx int) (string, string) {
	s, msg := r.optionalString(idx)
	return r.freeText(idx, s, msg)
}

// freeText returns the read (s, msg) of free-text field idx, except that a
// lone UTF-16 surrogate, which cannot be stored as sent, is msgUnprintable.
func (r *OrderBody) freeText(idx int, s, msg string) (string, string) {
	if msg == "" && r.fields[idx].LoneSurrogate {
		return "", msgUnprintable
	}
	return s, msg
}

// optionalString reads an optional string field; absent and null give "".
func (r *OrderBody) optionalString(idx int) (string, string) {
	switch v := r.fields[idx]; v.Kind {
	case Absent, Null:
		return "", ""
	case String:
		return v.Text, ""
	}
	return "", msgMustBeString
}

// inputValue reads v, the value sent for the input of duty rules called
// name (duty-rules.md §3), into in: a numeric input an integer in
// 0..MaxAmount, read as a create reads considerationPrice (amount as it
// reads amount), an enum input a string. It returns the message after the
// name when the value's form is refused, and reads nothing then.
func inputValue(name string, v Value, in *duty.Request) string {
	if duty.IsEnumInput(name) {
		if v.Kind != String {
			return msgMustBeString
		}
		in.Enums[name] = v.Text
		return ""
	}
	tooLarge := msgConsiderationTooLong
	if name == "amount" {
		tooLarge = msgAboveMaxAmount
	}
	n, msg := amountValue(v, tooLarge)
	if msg == "" {
		in.Numbers[name] = n
	}
	return msg
}

// hashPattern is a rule version's hash (duty-rules.md §7).
var hashPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// dutyFields reads the body's fields of duty rules into req: the inputs
// of §3 (numeric ones as considerationPrice is read, enum ones strings),
// instrumentDate (a date) and dutyRule (a hash). Each failing one is
// appended to errs; the inputs' indexes are marked in inputErr.
func (r *OrderBody) dutyFields(req *OrderRequest, errs *[]FieldError, inputErr map[int]bool) {
	fail := func(name, msg string, input bool) {
		if input {
			inputErr[len(*errs)] = true
		}
		*errs = append(*errs, FieldError{Path: name, Message: name + msg})
	}
	for _, name := range duty.InputNames() {
		v, ok := r.duty[name]
		if !ok || name == "amount" || name == "considerationPrice" || v.Kind == Null {
			continue
		}
		if msg := inputValue(name, v, &req.Inputs); msg != "" {
			fail(name, msg, true)
		}
	}
	if v, ok := r.duty["instrumentDate"]; ok && v.Kind != Null {
		if _, err := duty.ParseDate(v.Text); v.Kind != String || err != nil {
			fail("instrumentDate", " must be a date (YYYY-MM-DD)", true)
		} else {
			req.Inputs.Date = v.Text
		}
	}
	if v, ok := r.duty["dutyRule"]; ok && v.Kind != Null {
		if v.Kind != String || !hashPattern.MatchString(v.Text) {
			fail("dutyRule", " must be the hash of a quote's duty rule: sha256: and 64 hex digits", false)
		} else {
			req.DutyRule = v.Text
		}
	}
}
