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

	"code.dny.dev/ssrf"

	"stampduty/shared/stampduty"
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
	// RuntimeAPI is the host:port of the Lambda Runtime API
	// (AWS_LAMBDA_RUNTIME_API), which no webhook may reach, even where
	// loopback is allowed: a POST there could answer or fail another
	// invocation of the function. Empty means none.
	RuntimeAPI string
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
	if strings.ContainsRune("aeiouAEIOU", rune(kind[0])) {
		return "an " + kind + " address"
	}
	return "a " + kind + " address"
}

// The decision which addresses a webhook may reach is code.dny.dev/ssrf's,
// whose ranges are generated from IANA's special-purpose registries: every
// special-purpose IPv4 range, and every IPv6 address outside global unicast
// (2000::/3) or in a special-purpose range within it. Being an allow-list
// for IPv6, it refuses every IPv6 form that carries an IPv4 address without
// having to know the form: IPv4-compatible (::/96), IPv4-translated
// (::ffff:0:0:0/96), NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16)
// and Teredo (2001::/32, with its server and obfuscated client addresses),
// whatever IPv4 address is inside, a public one too. No receiver is lost by
// that: the functions run outside a VPC, where Lambda has no IPv6 route at
// all, so such an address can never be a working receiver, and a NAT64 or
// 6to4 relay's own filtering is out of our hands. An IPv4-mapped address
// (::ffff:0:0/96) is the one exception: it is judged as the IPv4 address it
// is, since a socket connecting to it connects to that address over IPv4,
// and Go's resolver may return A records in that form.
//
// A hand-written list was tried and missed IPv4-translated addresses: an
// allow-list kept in step with IANA is the sounder rule. What stays ours is
// what the library cannot know: loopback for a local stack, plain http to
// loopback only, the Lambda Runtime API, and the name of a refused range in
// the caller's message (kind).
var (
	awsGuardian   = ssrf.New(ssrf.WithAnyPort())
	localGuardian = ssrf.New(ssrf.WithAnyPort(),
		ssrf.WithAllowedV4Prefixes(netip.MustParsePrefix("127.0.0.0/8")),
		ssrf.WithAllowedV6Prefixes(netip.MustParsePrefix("::1/128")))
)

// Ranges that kind names beyond what netip.Addr's methods tell.
var (
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	cgnat       = netip.MustParsePrefix("100.64.0.0/10")
	// embedding are the IPv6 ranges whose addresses carry an IPv4 address.
	embedding = [...]netip.Prefix{
		netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated)
		netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (SIIT)
		netip.MustParsePrefix("64:ff9b::/96"),    // NAT64, well-known prefix
		netip.MustParsePrefix("64:ff9b:1::/48"),  // NAT64, local-use prefix
		netip.MustParsePrefix("2002::/16"),       // 6to4
		netip.MustParsePrefix("2001::/32"),       // Teredo
	}
)

// kind names the range of a refused address for the caller's message
// ("url must not point to a private address"); it decides nothing. Ranges
// it does not name are "reserved" (documentation, benchmarking, broadcast,
// IETF assignments, site-local and the rest of IANA's registries).
func kind(a netip.Addr) string {
	switch {
	case a.Zone() != "":
		return "scoped"
	case a.IsUnspecified() || thisNetwork.Contains(a):
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate(): // 10/8, 172.16/12, 192.168/16, fc00::/7 (AWS's fd00:ec2::254 too)
		return "private"
	case a.IsLinkLocalUnicast(): // 169.254/16 (AWS's, GCP's, Azure's, ECS's metadata), fe80::/10
		return "link-local (cloud metadata)"
	case cgnat.Contains(a): // Alibaba's metadata too
		return "shared (CGNAT)"
	case a.IsMulticast():
		return "multicast"
	}
	for _, p := range embedding {
		if p.Contains(a) {
			return "IPv4-embedding IPv6"
		}
	}
	return "reserved"
}

// kindRuntimeAPI is the kind of the Lambda Runtime API's address.
const kindRuntimeAPI = "Lambda Runtime API"

// allowed returns nil when a request to url scheme scheme may reach ap,
// else the *BlockedError that refuses it.
func (g Guard) allowed(ap netip.AddrPort, scheme string) error {
	a := ap.Addr()
	if a.Zone() != "" || !a.IsValid() {
		return &BlockedError{Addr: a, Kind: "scoped"}
	}
	a = a.Unmap()
	guardian := awsGuardian
	if g.Local {
		guardian = localGuardian
	}
	switch {
	case guardian.SafeAddr(a) != nil:
		return &BlockedError{Addr: a, Kind: kind(a)}
	case g.runtimeAPI(netip.AddrPortFrom(a, ap.Port())):
		return &BlockedError{Addr: a, Kind: kindRuntimeAPI}
	case scheme == "http" && !a.IsLoopback():
		return &BlockedError{Addr: a, Kind: "public"} // plain http reaches loopback only
	}
	return nil
}

// runtimeAPI reports whether ap is the Lambda Runtime API's address (see
// Guard.RuntimeAPI): its address, or, when that is a loopback address or a
// name, any loopback address, at its port. An address g cannot read
// refuses every loopback address.
func (g Guard) runtimeAPI(ap netip.AddrPort) bool {
	if g.RuntimeAPI == "" {
		return false
	}
	host, port, err := net.SplitHostPort(g.RuntimeAPI)
	p, perr := strconv.ParseUint(port, 10, 16)
	switch {
	case err != nil || perr != nil:
		return ap.Addr().IsLoopback()
	case ap.Port() != uint16(p):
		return false
	}
	if h, err := netip.ParseAddr(host); err == nil && !h.Unmap().IsLoopback() {
		return ap.Addr() == h.Unmap()
	}
	return ap.Addr().IsLoopback()
}

// CheckURL checks the URL of a registration: at most MaxURLLength
// characters, absolute, https (plain http only to loopback, only in local
// mode), a host and no user name or password, no fragment, and a host that
// is, or resolves only to, addresses g allows. A rule broken is an EINVALID
// *stampduty.Error on the path "url"; a resolver failure other than "no such
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
	port := defaultPort[u.Scheme]
	if p := u.Port(); p != "" {
		n, _ := strconv.ParseUint(p, 10, 16) // parse checked it
		port = uint16(n)
	}
	for _, a := range addrs {
		if err := g.allowed(netip.AddrPortFrom(a, port), u.Scheme); err != nil {
			var b *BlockedError
			errors.As(err, &b)
			e := invalid("url", urlAddrMessage(b, u.Scheme))
			e.Err = err
			return e
		}
	}
	return nil
}

// defaultPort is the port of a URL of each scheme that names none.
var defaultPort = map[string]uint16{"https": 443, "http": 80}

// urlAddrMessage is the message of a URL refused for its address.
func urlAddrMessage(b *BlockedError, scheme string) string {
	if b.Kind == "public" || (scheme == "http" && b.Kind != "loopback" && b.Kind != kindRuntimeAPI) {
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
		return nil, stampduty.Unavailable(fmt.Errorf("resolve webhook host: %w", err))
	case len(addrs) == 0:
		return nil, invalid("url", "url's host name does not resolve")
	}
	return addrs, nil
}
