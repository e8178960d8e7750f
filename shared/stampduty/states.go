package stampduty

// states are the 28 states of India, then the 8 union territories, in the
// order the product decisions list them.
var states = [...]string{
	// States.
	"Andhra Pradesh",
	"Arunachal Pradesh",
	"Assam",
	"Bihar",
	"Chhattisgarh",
	"Goa",
	"Gujarat",
	"Haryana",
	"Himachal Pradesh",
	"Jharkhand",
	"Karnataka",
	"Kerala",
	"Madhya Pradesh",
	"Maharashtra",
	"Manipur",
	"Meghalaya",
	"Mizoram",
	"Nagaland",
	"Odisha",
	"Punjab",
	"Rajasthan",
	"Sikkim",
	"Tamil Nadu",
	"Telangana",
	"Tripura",
	"Uttar Pradesh",
	"Uttarakhand",
	"West Bengal",
	// Union territories.
	"Andaman and Nicobar Islands",
	"Chandigarh",
	"Dadra and Nagar Haveli and Daman and Diu",
	"Delhi",
	"Jammu and Kashmir",
	"Ladakh",
	"Lakshadweep",
	"Puducherry",
}

// stateSet answers ValidState.
var stateSet = func() map[string]struct{} {
	m := make(map[string]struct{}, len(states))
	for _, s := range states {
		m[s] = struct{}{}
	}
	return m
}()

// stateCodes are the official two-letter codes of the states, the part after
// "IN-" of their ISO 3166-2:IN codes as the standard has them since its 2023
// update (Chhattisgarh CG, Odisha OD, Telangana TS, Uttarakhand UK, the codes
// their vehicle registrations use; DH since the 2020 merger of Dadra and
// Nagar Haveli with Daman and Diu; LA for Ladakh since 2019). An e-stamp
// certificate number carries them after "IN-" (IN-KA… for Karnataka).
var stateCodes = map[string]string{
	"Andhra Pradesh":    "AP",
	"Arunachal Pradesh": "AR",
	"Assam":             "AS",
	"Bihar":             "BR",
	"Chhattisgarh":      "CG",
	"Goa":               "GA",
	"Gujarat":           "GJ",
	"Haryana":           "HR",
	"Himachal Pradesh":  "HP",
	"Jharkhand":         "JH",
	"Karnataka":         "KA",
	"Kerala":            "KL",
	"Madhya Pradesh":    "MP",
	"Maharashtra":       "MH",
	"Manipur":           "MN",
	"Meghalaya":         "ML",
	"Mizoram":           "MZ",
	"Nagaland":          "NL",
	"Odisha":            "OD",
	"Punjab":            "PB",
	"Rajasthan":         "RJ",
	"Sikkim":            "SK",
	"Tamil Nadu":        "TN",
	"Telangana":         "TS",
	"Tripura":           "TR",
	"Uttar Pradesh":     "UP",
	"Uttarakhand":       "UK",
	"West Bengal":       "WB",

	"Andaman and Nicobar Islands":              "AN",
	"Chandigarh":                               "CH",
	"Dadra and Nagar Haveli and Daman and Diu": "DH",
	"Delhi":             "DL",
	"Jammu and Kashmir": "JK",
	"Ladakh":            "LA",
	"Lakshadweep":       "LD",
	"Puducherry":        "PY",
}

// StateCode returns the official two-letter code of state (KA for
// Karnataka), and false when state is not one the service accepts.
func StateCode(state string) (string, bool) {
	code, ok := stateCodes[state]
	return code, ok
}

// ValidState reports whether s is exactly (case-sensitively) one of states.
func ValidState(s string) bool {
	_, ok := stateSet[s]
	return ok
}
