package stampduty

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"strings"
)

// An order's documentId may carry the number its caller's order is stored
// under (its seq), so that a caller's orders can be read by key from their
// documentIds alone (one BatchGetItem for filters[documentId][$in]). Such an
// id is still 24 characters matching ^[a-z][0-9a-z]{23}$: its first
// seqIDRandom characters come from crypto/rand as ever (about 72 bits, so an
// id cannot be guessed), and the last seqIDTail encode the seq with a check,
// masked by a hash of the random part so that consecutive orders' ids share
// nothing visible. Anyone who knows this scheme can read the seq back: the
// caller's own order count, which its list shows it anyway. An id made
// before (all 24 characters random) decodes only by chance (1 in 32,768, the
// check), so a reader of an id must still compare the stored documentId.
const (
	seqIDRandom = 14
	seqIDTail   = DocumentIDLength - seqIDRandom
	seqIDCheck  = 15 // bits of check below the seq in the tail's value
)

// seqIDSpace is 36^seqIDTail, the number of values the tail can take.
var seqIDSpace = func() uint64 {
	n := uint64(1)
	for range seqIDTail {
		n *= 36
	}
	return n
}()

// MaxIDSeq is the largest seq a documentId can carry (about 1.1e11).
var MaxIDSeq = int64(seqIDSpace>>seqIDCheck) - 1

// WithSeq returns doc, a documentId from NewDocumentID, with its tail
// replaced by the encoding of seq: the same random part, so the ids are one
// order's (SameOrderID). A seq outside 1..MaxIDSeq leaves doc as it is.
func WithSeq(doc string, seq int64) string {
	if len(doc) != DocumentIDLength || seq < 1 || seq > MaxIDSeq {
		return doc
	}
	mask, check := seqIDMask(doc[:seqIDRandom])
	v := (uint64(seq)<<seqIDCheck | check) + mask
	tail := strconv.FormatUint(v%seqIDSpace, 36)
	return doc[:seqIDRandom] + strings.Repeat("0", seqIDTail-len(tail)) + tail
}

// IDSeq returns the seq that documentId doc carries (see WithSeq), and
// false when it carries none: not a documentId, or one made without a seq
// (but for 1 in 32,768 of those, whose decoded seq then holds another
// order or none).
func IDSeq(doc string) (int64, bool) {
	if len(doc) != DocumentIDLength || doc[0] < 'a' || doc[0] > 'z' {
		return 0, false
	}
	tail := doc[seqIDRandom:]
	if strings.TrimLeft(tail, "0123456789abcdefghijklmnopqrstuvwxyz") != "" {
		return 0, false
	}
	enc, err := strconv.ParseUint(tail, 36, 64)
	if err != nil || enc >= seqIDSpace {
		return 0, false
	}
	mask, check := seqIDMask(doc[:seqIDRandom])
	v := (enc + seqIDSpace - mask) % seqIDSpace
	seq := int64(v >> seqIDCheck)
	if v&(1<<seqIDCheck-1) != check || seq < 1 {
		return 0, false
	}
	return seq, true
}

// SameOrderID reports whether documentIds a and b name the same order: equal,
// or the same random part with any tail (an id before and after WithSeq).
func SameOrderID(a, b string) bool {
	return a == b || len(a) == DocumentIDLength && len(b) == DocumentIDLength && a[:seqIDRandom] == b[:seqIDRandom]
}

// seqIDMask returns the mask (below seqIDSpace) and the check of random.
func seqIDMask(random string) (mask, check uint64) {
	h := sha256.Sum256([]byte(random))
	return binary.BigEndian.Uint64(h[:8]) % seqIDSpace, uint64(binary.BigEndian.Uint16(h[8:10])) & (1<<seqIDCheck - 1)
}
