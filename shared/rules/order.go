package rules

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// maxBodyDepth is the deepest nesting a create-order body may have; the
// body object itself is at depth 1.
const maxBodyDepth = 32

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
	}
	return -1
}

// The messages of DecodeOrderRequest.
const (
	msgBodyNotUTF8    = "The body is not valid UTF-8"
	msgBodyNotJSON    = "The body is not valid JSON"
	msgBodyNotObject  = "The body must be a JSON object"
	msgBodyTooDeep    = "The body is nested too deeply"
	msgDuplicateField = " is given more than once"
)

// RawOrderRequest is a create-order body that is a well-formed JSON object,
// not yet validated. It keeps each member's JSON type and text.
type RawOrderRequest struct {
	fields  [numOrderFields]rawValue
	unknown []string // keys that are not create-order fields, in body order
}

// OrderRequest is a validated create-order body with the defaults applied:
// Description "N/A" when absent or blank, PurchasedBy, addresses and PANs ""
// when absent, Purpose trimmed.
type OrderRequest struct {
	Amount, ConsiderationPrice                                           int64
	Description, Purpose, State, PaidBy, PurchasedBy                     string
	FirstPartyMobileNumber, FirstPartyName, SecondPartyName              string
	FirstPartyAddress, SecondPartyAddress, FirstPartyPan, SecondPartyPan string
}

// DecodeOrderRequest reads a create-order body. It fails with an EINVALID
// *Error (message "Invalid data. …") when the body is not valid UTF-8, not
// valid JSON, not a JSON object, nested deeper than 32 levels, or gives a key
// more than once (keys compared after unescaping, case-sensitively). It does
// not check the fields: Validate does.
func DecodeOrderRequest(body []byte) (*RawOrderRequest, error) {
	if !utf8.Valid(body) {
		return nil, Invalid([]FieldError{{Path: "", Message: msgBodyNotUTF8}})
	}
	if !json.Valid(body) {
		return nil, Invalid([]FieldError{{Path: "", Message: msgBodyNotJSON}})
	}
	// One copy of the body; every field value is a substring of it.
	sc, ok := newObjectScanner(string(body), maxBodyDepth)
	if !ok {
		return nil, Invalid([]FieldError{{Path: "", Message: msgBodyNotObject}})
	}
	r := &RawOrderRequest{}
	var (
		dups      []FieldError
		knownDups [numOrderFields]bool
		seen      map[string]bool // unknown keys → reported as duplicate
	)
	for {
		key, escKey, val, more, err := sc.next()
		if errors.Is(err, errTooDeep) {
			return nil, Invalid([]FieldError{{Path: "", Message: msgBodyTooDeep}})
		}
		if err != nil {
			return nil, Invalid([]FieldError{{Path: "", Message: msgBodyNotJSON}})
		}
		if !more {
			break
		}
		if escKey {
			key = unescape(key)
		}
		if idx := orderFieldIndex(key); idx >= 0 {
			if r.fields[idx].kind == kindAbsent {
				r.fields[idx] = val
			} else if !knownDups[idx] {
				knownDups[idx] = true
				dups = append(dups, FieldError{Path: key, Message: key + msgDuplicateField})
			}
			continue
		}
		if seen == nil {
			seen = make(map[string]bool)
		}
		reported, dup := seen[key]
		switch {
		case !dup:
			seen[key] = false
			r.unknown = append(r.unknown, key)
		case !reported:
			seen[key] = true
			dups = append(dups, FieldError{Path: key, Message: key + msgDuplicateField})
		}
	}
	if len(dups) > 0 {
		return nil, Invalid(dups)
	}
	return r, nil
}

// PurposeState returns the trimmed purpose and the state when both are JSON
// strings, for the article lookup that comes before validation.
func (r *RawOrderRequest) PurposeState() (purpose, state string, ok bool) {
	p, s := r.fields[fPurpose], r.fields[fState]
	if p.kind != kindString || s.kind != kindString {
		return "", "", false
	}
	return strings.TrimSpace(p.str()), s.str(), true
}

// Validate checks every field against the contract and returns the request
// with defaults applied. It reports every failing field at once, one message
// per field, in the order of the contract's table and then the unknown keys
// in body order, as an EINVALID *Error built by Invalid.
func (r *RawOrderRequest) Validate() (OrderRequest, error) {
	var (
		req  OrderRequest
		errs []FieldError
	)
	fail := func(idx int, msg string) {
		errs = append(errs, FieldError{Path: orderFieldNames[idx], Message: orderFieldNames[idx] + msg})
	}

	var msg string
	if req.Amount, msg = r.integer(fAmount, " must be at most 999999999999999"); msg != "" {
		fail(fAmount, msg)
	}
	if req.ConsiderationPrice, msg = r.integer(fConsiderationPrice, " must have at most 15 digits"); msg != "" {
		fail(fConsiderationPrice, msg)
	}
	if req.Description, msg = r.optionalString(fDescription, "N/A"); msg == "" {
		msg = checkDescription(req.Description)
		if msg == "" && strings.Trim(req.Description, " ") == "" {
			req.Description = "N/A"
		}
	}
	if msg != "" {
		fail(fDescription, msg)
	}
	if req.Purpose, msg = r.requiredString(fPurpose); msg == "" {
		req.Purpose = strings.TrimSpace(req.Purpose)
		msg = checkPurpose(req.Purpose)
	}
	if msg != "" {
		fail(fPurpose, msg)
	}
	if req.State, msg = r.requiredString(fState); msg == "" && !ValidState(req.State) {
		msg = " must be one of the states or union territories of India"
	}
	if msg != "" {
		fail(fState, msg)
	}
	if req.PaidBy, msg = r.requiredString(fPaidBy); msg == "" && req.PaidBy != FirstParty && req.PaidBy != SecondParty {
		msg = " must be one of: First Party, Second Party"
	}
	if msg != "" {
		fail(fPaidBy, msg)
	}
	if req.PurchasedBy, msg = r.optionalString(fPurchasedBy, ""); msg == "" && hasControl(req.PurchasedBy) {
		msg = " must not contain control characters"
	}
	if msg != "" {
		fail(fPurchasedBy, msg)
	}
	if req.FirstPartyMobileNumber, msg = r.requiredString(fFirstPartyMobileNumber); msg == "" && !isMobile(req.FirstPartyMobileNumber) {
		msg = " must be exactly 10 digits"
	}
	if msg != "" {
		fail(fFirstPartyMobileNumber, msg)
	}
	if req.FirstPartyName, msg = r.requiredString(fFirstPartyName); msg == "" {
		msg = checkName(req.FirstPartyName)
	}
	if msg != "" {
		fail(fFirstPartyName, msg)
	}
	if req.SecondPartyName, msg = r.requiredString(fSecondPartyName); msg == "" {
		msg = checkName(req.SecondPartyName)
	}
	if msg != "" {
		fail(fSecondPartyName, msg)
	}
	if req.FirstPartyAddress, msg = r.optionalString(fFirstPartyAddress, ""); msg == "" {
		msg = checkAddress(req.FirstPartyAddress)
	}
	if msg != "" {
		fail(fFirstPartyAddress, msg)
	}
	if req.SecondPartyAddress, msg = r.optionalString(fSecondPartyAddress, ""); msg == "" {
		msg = checkAddress(req.SecondPartyAddress)
	}
	if msg != "" {
		fail(fSecondPartyAddress, msg)
	}
	if req.FirstPartyPan, msg = r.optionalString(fFirstPartyPan, ""); msg == "" && !isPANOrEmpty(req.FirstPartyPan) {
		msg = msgPAN
	}
	if msg != "" {
		fail(fFirstPartyPan, msg)
	}
	if req.SecondPartyPan, msg = r.optionalString(fSecondPartyPan, ""); msg == "" && !isPANOrEmpty(req.SecondPartyPan) {
		msg = msgPAN
	}
	if msg != "" {
		fail(fSecondPartyPan, msg)
	}
	for _, key := range r.unknown {
		errs = append(errs, FieldError{Path: key, Message: key + " is not an allowed field"})
	}
	if len(errs) > 0 {
		return OrderRequest{}, Invalid(errs)
	}
	return req, nil
}

// The messages of Validate, after the field name.
const (
	msgRequired       = " is a required field"
	msgMustBeString   = " must be a string"
	msgMustBeInteger  = " must be an integer"
	msgNotNegative    = " must be greater than or equal to 0"
	msgNotEmpty       = " must not be empty"
	msgNoControl      = " must not contain control characters"
	msgDescriptionLen = " must be at most 100 characters"
	msgDescriptionSet = " may only contain letters, digits, spaces and ! # @ $ * ( ) - + ; : , . ? /"
	msgNameLen        = " must be at most 40 characters"
	msgNameSet        = " may only contain letters, digits and spaces"
	msgAddressLen     = " must be at most 120 characters"
	msgAddressSet     = " may only contain letters, digits, spaces and . / : , - \\"
	msgPAN            = " must be empty or a PAN: 5 capital letters, 4 digits, 1 capital letter"
)

// integer reads a required integer field in 0..MaxAmount; tooLarge is the
// message for a value above it. It returns "" or the failing message
// (without the field name).
func (r *RawOrderRequest) integer(idx int, tooLarge string) (int64, string) {
	v := r.fields[idx]
	switch v.kind {
	case kindAbsent, kindNull:
		return 0, msgRequired
	case kindNumber:
	default:
		return 0, msgMustBeInteger
	}
	n, ok := scanNumber(v.raw)
	if !ok { // json.Valid accepted it, so this does not happen
		return 0, msgMustBeInteger
	}
	i, st := n.integer()
	switch st {
	case intNotInteger:
		return 0, msgMustBeInteger
	case intNegative:
		return 0, msgNotNegative
	case intTooLarge:
		return 0, tooLarge
	}
	return i, ""
}

// requiredString reads a required string field.
func (r *RawOrderRequest) requiredString(idx int) (string, string) {
	v := r.fields[idx]
	switch v.kind {
	case kindAbsent, kindNull:
		return "", msgRequired
	case kindString:
		return v.str(), ""
	}
	return "", msgMustBeString
}

// optionalString reads an optional string field; absent and null give def.
func (r *RawOrderRequest) optionalString(idx int, def string) (string, string) {
	v := r.fields[idx]
	switch v.kind {
	case kindAbsent, kindNull:
		return def, ""
	case kindString:
		return v.str(), ""
	}
	return "", msgMustBeString
}

// The characters each free-text field allows, as byte tables: ASCII letters
// and digits plus the listed symbols. Any byte of a non-ASCII character is
// outside every table.
var (
	descriptionChars = charTable(" !#@$*()-+;:,.?/")
	nameChars        = charTable(" ")
	addressChars     = charTable(" ./:,-\\")
)

// charTable returns the table of ASCII letters, digits and the given symbols.
func charTable(symbols string) *[256]bool {
	var t [256]bool
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for i := 0; i < len(symbols); i++ {
		t[symbols[i]] = true
	}
	return &t
}

// onlyChars reports whether every byte of s is in the table.
func onlyChars(s string, t *[256]bool) bool {
	for i := 0; i < len(s); i++ {
		if !t[s[i]] {
			return false
		}
	}
	return true
}

// checkDescription checks the length and characters of a description.
func checkDescription(s string) string {
	if utf8.RuneCountInString(s) > 100 {
		return msgDescriptionLen
	}
	if !onlyChars(s, descriptionChars) {
		return msgDescriptionSet
	}
	return ""
}

// checkPurpose checks a trimmed purpose.
func checkPurpose(s string) string {
	switch {
	case s == "":
		return msgNotEmpty
	case hasControl(s):
		return msgNoControl
	}
	return ""
}

// checkName checks a party name.
func checkName(s string) string {
	if strings.Trim(s, " ") == "" {
		return msgNotEmpty
	}
	if utf8.RuneCountInString(s) > 40 {
		return msgNameLen
	}
	if !onlyChars(s, nameChars) {
		return msgNameSet
	}
	return ""
}

// checkAddress checks a party address.
func checkAddress(s string) string {
	if utf8.RuneCountInString(s) > 120 {
		return msgAddressLen
	}
	if !onlyChars(s, addressChars) {
		return msgAddressSet
	}
	return ""
}

// hasControl reports a control character: U+0000–U+001F or U+007F–U+009F.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r <= 0x9f {
			return true
		}
	}
	return false
}

// isMobile reports exactly 10 ASCII digits.
func isMobile(s string) bool {
	if len(s) != 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// isPANOrEmpty reports "" or a PAN: ^[A-Z]{5}[0-9]{4}[A-Z]$.
func isPANOrEmpty(s string) bool {
	if s == "" {
		return true
	}
	if len(s) != 10 {
		return false
	}
	for i := 0; i < 10; i++ {
		c := s[i]
		upper := c >= 'A' && c <= 'Z'
		if i >= 5 && i < 9 && !isDigit(c) || (i < 5 || i == 9) && !upper {
			return false
		}
	}
	return true
}
