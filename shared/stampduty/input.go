package stampduty

// Kind is what a request gave for one of its fields.
type Kind uint8

// The kinds of Value. Absent is a field that was not sent.
const (
	Absent Kind = iota
	Null
	String
	Number
	Bool
	// Other is any other value, such as a JSON object or array: never what
	// a field may be.
	Other
)

// Value is the value of one field of a request as the edge decoded it: a
// create-order body's, a catalogue article's. The domain validates these
// decoded values and never reads the bytes they came from.
type Value struct {
	Kind Kind
	// Text is a String's text, or a Number's literal exactly as sent, in
	// JSON's number grammar (200, 2e2, 0.07), which the domain checks.
	Text string
	// Bool is a Bool's value.
	Bool bool
	// LoneSurrogate reports a String that named a lone UTF-16 surrogate
	// (JSON's "\ud800"), which no UTF-8 text can hold: Text has U+FFFD in
	// its place, so it is not the text that was sent.
	LoneSurrogate bool
	// Raw is an Other's JSON text (an object or an array), as sent.
	Raw []byte
}

// Field is a named value of a request, in the order it was sent.
type Field struct {
	Name  string
	Value Value
}
