package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"stampduty/shared/rules"
)

// MaxURLLength is the longest webhook URL, in characters.
const MaxURLLength = 2048

// Resolver resolves host names to addresses. *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard decides which URLs and addresses webhooks may reach: on AWS, https
// to public addresses only; locally, also loopback addresses, by https or
// plain http (and plain http to nothing else). The zero Guard is AWS's,
// resolving through net.DefaultResolver.
type Guard struct {
	// Local allows loopback addresses, and plain http to them.
	Local bool
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
}

// resolver returns g's resolver.
func (g Guard) resolver() Resolver {
	if g.Resolver == nil {
		return net.DefaultResolver
	}
	return g.Resolver
}

// BlockedError is the refusal of an address a webhook must not reach.
type BlockedError struct {
	Addr netip.Addr
	// Kind names the range, e.g. "private", "loopback", "link-local".
	Kind string
}

// Error says which address was refused and why.
func (e *BlockedError) Error() string {
	return fmt.Sprintf("address %s is %s", e.Addr, article(e.Kind))
}

// article prefixes kind with "a" or "an".
func article(kind string) string {
	if strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind + " address"
	}
	return "a " + kind + " address"
}

// blocked is one range of addresses no webhook may reach.
type blocked struct {
	prefix netip.Prefix
	kind   string
}

// blockedRanges are the ranges webhooks may not reach (IANA's special-purpose
// registries, cloud metadata). IPv4-mapped IPv6 addresses are unmapped
// before the check; NAT64 and 6to4 addresses are checked by the IPv4 address
// they carry too. Loopback is allowed in local mode only.
var blockedRanges = [...]blocked{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("192.88.99.0/24"), "reserved"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"}, // with 255.255.255.255, broadcast
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "reserved"}, // IPv4-compatible, deprecated
	{netip.MustParsePrefix("64:ff9b:1::/48"), "private"},
	{netip.MustParsePrefix("100::/64"), "reserved"},
	{netip.MustParsePrefix("2001::/23"), "reserved"}, // Teredo, ORCHID and other IETF assignments
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("3fff::/20"), "documentation"},
	{netip.MustParsePrefix("fc00::/7"), "private"}, // unique local, fd00:ec2::254 (AWS metadata) too
	{netip.MustParsePrefix("fe80::/10"), "link-local (cloud metadata)"},
	{netip.MustParsePrefix("fec0::/10"), "reserved"}, // site-local, deprecated
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// embedded IPv6 ranges carry an IPv4 address, which is checked as well.
var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96") // the address is the last 4 bytes
	sixTo4 = netip.MustParsePrefix("2002::/16")    // the address is bytes 2–5
)

// addrKind returns the kind of range a falls in, "" when a is a public address.
func addrKind(a netip.Addr) string {
	if a.Zone() != "" {
		return "scoped"
	}
	a = a.Unmap()
	for _, b := range blockedRanges {
		if b.prefix.Contains(a) {
			return b.kind
		}
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return addrKind(netip.AddrFrom4([4]byte(b[12:16])))
	case sixTo4.Contains(a):
		return addrKind(netip.AddrFrom4([4]byte(b[2:6])))
	}
	return ""
}

// allowed returns nil when a request to url scheme scheme may reach a, else
// the *BlockedError that refuses it.
func (g Guard) allowed(a netip.Addr, scheme string) error {
	kind := addrKind(a)
	switch {
	case kind == "loopback" && g.Local:
		return nil
	case kind != "":
		return &BlockedError{Addr: a, Kind: kind}
	case scheme == "http":
		return &BlockedError{Addr: a, Kind: "public"} // plain http reaches loopback only
	}
	return nil
}

// CheckURL checks the URL of a registration: at most MaxURLLength
// characters, absolute, https (plain http only to loopback, only in local
// mode), a host and no user name or password, no fragment, and a host that
// is, or resolves only to, addresses g allows. A rule broken is an EINVALID
// *rules.Error on the path "url"; a resolver failure other than "no such
// host" is EUNAVAILABLE.
func (g Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := g.parse(raw)
	if err != nil {
		return err
	}
	addrs, err := g.resolve(ctx, u.Hostname())
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if err := g.allowed(a, u.Scheme); err != nil {
			var b *BlockedError
			errors.As(err, &b)
			e := invalid("url", urlAddrMessage(b, u.Scheme))
			e.Err = err
			return e
		}
	}
	return nil
}

// urlAddrMessage is the message of a URL refused for its address.
func urlAddrMessage(b *BlockedError, scheme string) string {
	if b.Kind == "public" || (scheme == "http" && b.Kind != "loopback") {
		return "url must use https; plain http is allowed only to a loopback address of a local stack"
	}
	return "url must not point to " + article(b.Kind)
}

// parse checks everything about raw that needs no resolving and returns it
// parsed.
func (g Guard) parse(raw string) (*url.URL, error) {
	if utf8.RuneCountInString(raw) > MaxURLLength {
		return nil, invalid("url", fmt.Sprintf("url must be at most %d characters", MaxURLLength))
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return nil, invalid("url", "url must be an absolute URL, e.g. https://example.com/hooks")
	}
	switch {
	case u.Scheme == "http" && !g.Local:
		return nil, invalid("url", "url must use https")
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, invalid("url", "url must use https")
	case u.User != nil:
		return nil, invalid("url", "url must not contain a user name or password")
	case u.Fragment != "" || strings.HasSuffix(raw, "#"):
		return nil, invalid("url", "url must not have a fragment")
	case u.Hostname() == "":
		return nil, invalid("url", "url must have a host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, invalid("url", "url must have a port from 1 to 65535")
		}
	}
	if _, err := netip.ParseAddr(u.Hostname()); err != nil && !validHostName(u.Hostname()) {
		return nil, invalid("url", "url must have a valid host: an IP address or a DNS name (international names in their xn-- form)")
	}
	return u, nil
}

// validHostName reports whether h is a DNS name of ASCII letters, digits and
// hyphens, at most 253 characters (a final dot aside), labels of 1 to 63
// characters not starting or ending with a hyphen, the last not all digits
// (so "127.1" or "2130706433", which some resolvers read as addresses, are
// not names).
func validHostName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return strings.Trim(labels[len(labels)-1], "0123456789") != ""
}

// resolve returns the addresses of host: host itself when it is an IP
// address, else what g's resolver answers.
func (g Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	addrs, err := g.resolver().LookupNetIP(ctx, "ip", host)
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		e := invalid("url", "url's host name does not resolve")
		e.Err = err
		return nil, e
	case err != nil:
		return nil, rules.Unavailable(fmt.Errorf("resolve webhook host: %w", err))
	case len(addrs) == 0:
		return nil, invalid("url", "url's host name does not resolve")
	}
	return addrs, nil
}
