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

// ValidState reports whether s is exactly (case-sensitively) one of states.
func ValidState(s string) bool {
	_, ok := stateSet[s]
	return ok
}
