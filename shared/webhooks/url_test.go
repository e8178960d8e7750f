package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"stampduty/shared/stampduty"
)

// fakeResolver answers from a table and counts its lookups.
type fakeResolver struct {
	mu      sync.Mutex
	hosts   map[string][]string
	err     error
	lookups int
}

func (f *fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	if f.err != nil {
		return nil, f.err
	}
	ips, ok := f.hosts[strings.TrimSuffix(host, ".")] // as a real resolver, a final dot is the same name
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, ip := range ips {
		out = append(out, netip.MustParseAddr(ip))
	}
	return out, nil
}

func (f *fakeResolver) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lookups
}

// TestKind: the range a refused address is named by in the caller's
// message, and that every address named is one the guard refuses.
func TestKind(t *testing.T) {
	cases := []struct {
		addr, kind string
	}{
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"10.0.0.1", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"fd00:ec2::254", "private"}, // AWS's IPv6 metadata address
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"169.254.169.254", "link-local (cloud metadata)"}, // AWS, GCP, Azure metadata
		{"169.254.170.2", "link-local (cloud metadata)"},   // ECS task metadata
		{"fe80::1", "link-local (cloud metadata)"},
		{"fe80::1%eth0", "scoped"},
		{"100.64.0.1", "shared (CGNAT)"},
		{"100.100.100.200", "shared (CGNAT)"}, // Alibaba's metadata
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "reserved"},
		{"240.0.0.1", "reserved"},
		{"192.0.0.170", "reserved"},
		{"198.18.0.1", "reserved"},
		{"192.0.2.1", "reserved"},
		{"2001:db8::1", "reserved"},
		{"fec0::1", "reserved"},
		{"100::1", "reserved"},
		{"::7f00:1", "IPv4-embedding IPv6"},
		{"::ffff:0:7f00:1", "IPv4-embedding IPv6"},
		{"64:ff9b::808:808", "IPv4-embedding IPv6"},
		{"64:ff9b:1::a00:1", "IPv4-embedding IPv6"},
		{"2002:808:808::1", "IPv4-embedding IPv6"},
		{"2001::1", "IPv4-embedding IPv6"},
	}
	for _, tc := range cases {
		a := netip.MustParseAddr(tc.addr)
		if got := kind(a); got != tc.kind {
			t.Errorf("kind(%s) = %q, want %q", tc.addr, got, tc.kind)
		}
		if tc.kind != "loopback" && awsGuardian.SafeAddr(a.Unmap()) == nil && a.Zone() == "" {
			t.Errorf("%s is named %q but the guard allows it", tc.addr, tc.kind)
		}
	}
}

// embedded are the IPv6 forms that carry an IPv4 address: each makes the
// form's address carrying v4.
var embedded = map[string]func(v4 [4]byte) string{
	"Mapped":        func(b [4]byte) string { return fmt.Sprintf("::ffff:%d.%d.%d.%d", b[0], b[1], b[2], b[3]) },
	"Translated":    func(b [4]byte) string { return fmt.Sprintf("::ffff:0:%02x%02x:%02x%02x", b[0], b[1], b[2], b[3]) },
	"Compatible":    func(b [4]byte) string { return fmt.Sprintf("::%02x%02x:%02x%02x", b[0], b[1], b[2], b[3]) },
	"NAT64":         func(b [4]byte) string { return fmt.Sprintf("64:ff9b::%02x%02x:%02x%02x", b[0], b[1], b[2], b[3]) },
	"NAT64LocalUse": func(b [4]byte) string { return fmt.Sprintf("64:ff9b:1::%02x%02x:%02x%02x", b[0], b[1], b[2], b[3]) },
	"6to4":          func(b [4]byte) string { return fmt.Sprintf("2002:%02x%02x:%02x%02x::1", b[0], b[1], b[2], b[3]) },
	// Teredo: 2001:0:<server IPv4>:<flags>:<port ^ ffff>:<client IPv4 ^ ffffffff>.
	"TeredoServer": func(b [4]byte) string {
		return fmt.Sprintf("2001:0:%02x%02x:%02x%02x::f7f7:f7f7", b[0], b[1], b[2], b[3])
	},
	"TeredoClient": func(b [4]byte) string {
		return fmt.Sprintf("2001:0:808:808:0:fffe:%02x%02x:%02x%02x", ^b[0], ^b[1], ^b[2], ^b[3])
	},
}

// TestEmbeddedIPv4: every IPv6 form that carries an IPv4 address is
// refused when a loopback, link-local (metadata) or private address is
// inside, at registration and at connect time, on AWS and locally (where
// only the IPv4-mapped form of loopback, which is loopback, is allowed).
// The forms other than IPv4-mapped are refused whatever is inside: no
// Lambda outside a VPC can reach them (see awsGuardian).
func TestEmbeddedIPv4(t *testing.T) {
	inside := map[string][4]byte{
		"Loopback": {127, 0, 0, 1},
		"Metadata": {169, 254, 169, 254},
		"Private":  {10, 0, 0, 1},
		"Public":   {8, 8, 8, 8},
	}
	for form, embed := range embedded {
		for what, v4 := range inside {
			addr := netip.MustParseAddr(embed(v4))
			t.Run(form+what, func(t *testing.T) {
				mappedPublic := form == "Mapped" && what == "Public"
				mappedLoopback := form == "Mapped" && what == "Loopback"
				res := &fakeResolver{hosts: map[string][]string{"hooks.example.com": {addr.String()}}}
				for _, g := range []Guard{{Resolver: res}, {Local: true, Resolver: res}} {
					wantOK := mappedPublic || (mappedLoopback && g.Local)
					for _, u := range []string{"https://[" + addr.String() + "]/hooks", "https://hooks.example.com/hooks"} {
						err := g.CheckURL(context.Background(), u)
						if wantOK {
							if err != nil {
								t.Errorf("local=%v CheckURL(%s) for %s = %v, want allowed", g.Local, u, addr, err)
							}
							continue
						}
						var b *BlockedError
						if got := stampduty.ErrorCode(err); got != stampduty.EINVALID || !errors.As(err, &b) {
							t.Errorf("local=%v CheckURL(%s) for %s = %v, want an EINVALID refusal of the address", g.Local, u, addr, err)
						}
					}
					err := Deliverer{Guard: g}.checkDialed(netip.AddrPortFrom(addr, 443).String(), "https")
					if wantOK != (err == nil) {
						t.Errorf("local=%v connect to %s: %v, want allowed %v", g.Local, addr, err, wantOK)
					}
				}
			})
		}
	}
}

// TestRuntimeAPI: the Lambda Runtime API is refused even where loopback is
// allowed, by any loopback address at its port, at registration and at
// connect time; other loopback ports are not.
func TestRuntimeAPI(t *testing.T) {
	res := &fakeResolver{hosts: map[string][]string{"localhost": {"127.0.0.1", "::1"}}}
	for _, api := range []string{"127.0.0.1:9001", "localhost:9001", "[::1]:9001"} {
		g := Guard{Local: true, Resolver: res, RuntimeAPI: api}
		for _, u := range []string{"http://127.0.0.1:9001/2018-06-01/runtime/invocation/next", "http://127.0.0.2:9001/", "http://localhost:9001/", "http://[::1]:9001/", "https://127.0.0.1:9001/"} {
			assertInvalid(t, g.CheckURL(context.Background(), u), "url", "url must not point to a Lambda Runtime API address")
		}
		for _, address := range []string{"127.0.0.1:9001", "[::1]:9001", "[::ffff:127.0.0.1]:9001"} {
			var b *BlockedError
			if err := (Deliverer{Guard: g}).checkDialed(address, "http"); !errors.As(err, &b) || b.Kind != kindRuntimeAPI {
				t.Errorf("runtime API %s: connect to %s = %v, want refused as the Runtime API", api, address, err)
			}
		}
		if err := g.CheckURL(context.Background(), "http://127.0.0.1:9002/"); err != nil {
			t.Errorf("runtime API %s: another loopback port refused: %v", api, err)
		}
	}
	t.Run("Unreadable", func(t *testing.T) {
		g := Guard{Local: true, RuntimeAPI: "nonsense"}
		if err := g.CheckURL(context.Background(), "http://127.0.0.1:8080/"); err == nil {
			t.Error("an unreadable runtime API address allowed loopback")
		}
	})
}

// urlGuards returns the guard on AWS and the guard of a local stack, both
// resolving names from one table of public, private, metadata and other
// addresses.
func urlGuards() (aws, local Guard) {
	res := &fakeResolver{hosts: map[string][]string{
		"hooks.example.com":    {"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
		"localhost":            {"127.0.0.1", "::1"},
		"internal.example.com": {"10.0.0.7"},
		"mixed.example.com":    {"93.184.215.14", "10.0.0.7"},
		"metadata.example.com": {"169.254.169.254"},
		"mapped.example.com":   {"::ffff:169.254.169.254"},
		"v6meta.example.com":   {"fd00:ec2::254"},
		"cgnat.example.com":    {"100.64.1.1"},
		"empty.example.com":    {},
	}}
	return Guard{Resolver: res}, Guard{Local: true, Resolver: res}
}

// longURL is an https URL of exactly MaxURLLength characters.
func longURL() string {
	return "https://hooks.example.com/" + strings.Repeat("a", MaxURLLength-len("https://hooks.example.com/"))
}

// TestCheckURL: https URLs of public hosts are allowed, and locally plain
// http to loopback too.
func TestCheckURL(t *testing.T) {
	aws, local := urlGuards()
	long := longURL()
	ok := map[string]struct {
		guard Guard
		url   string
	}{
		"HTTPSName":             {aws, "https://hooks.example.com/stampduty?x=1"},
		"HTTPSPublicIPv4":       {aws, "https://93.184.215.14/hooks"},
		"HTTPSPublicIPv6":       {aws, "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:8443/hooks"},
		"UpperCaseScheme":       {aws, "HTTPS://hooks.example.com/"},
		"TrailingDotName":       {aws, "https://hooks.example.com./"},
		"AtTheLengthLimit":      {aws, long},
		"LocalHTTPLoopback":     {local, "http://127.0.0.1:8080/hooks"},
		"LocalHTTPLocalhost":    {local, "http://localhost:8080/hooks"},
		"LocalHTTPIPv6Loopback": {local, "http://[::1]:8080/hooks"},
		"LocalHTTPSLoopback":    {local, "https://localhost/hooks"},
		"LocalHTTPSPublic":      {local, "https://hooks.example.com/"},
	}
	for name, tc := range ok {
		t.Run(name, func(t *testing.T) {
			if err := tc.guard.CheckURL(context.Background(), tc.url); err != nil {
				t.Errorf("CheckURL(%q) = %v, want nil", tc.url, err)
			}
		})
	}
}

// TestCheckURLRefuses: each refused URL is an EINVALID error of the url
// field with the message that names what is wrong with it.
func TestCheckURLRefuses(t *testing.T) {
	aws, local := urlGuards()
	long := longURL()
	const (
		msgNotAURL     = "url must be an absolute URL, e.g. https://example.com/hooks"
		msgTooLong     = "url must be at most 2048 characters"
		msgHTTPS       = "url must use https"
		msgLocalHTTP   = "url must use https; plain http is allowed only to a loopback address of a local stack"
		msgUserInfo    = "url must not contain a user name or password"
		msgFragment    = "url must not have a fragment"
		msgNoHost      = "url must have a host"
		msgPort        = "url must have a port from 1 to 65535"
		msgBadHost     = "url must have a valid host: an IP address or a DNS name (international names in their xn-- form)"
		msgLoopback    = "url must not point to a loopback address"
		msgPrivate     = "url must not point to a private address"
		msgMetadata    = "url must not point to a link-local (cloud metadata) address"
		msgScoped      = "url must not point to a scoped address"
		msgCGNAT       = "url must not point to a shared (CGNAT) address"
		msgUnspecified = "url must not point to an unspecified address"
		msgMulticast   = "url must not point to a multicast address"
		msgReserved    = "url must not point to a reserved address"
		msgEmbedding   = "url must not point to an IPv4-embedding IPv6 address"
		msgNoResolve   = "url's host name does not resolve"
	)
	bad := map[string]struct {
		guard Guard
		url   string
		msg   string
	}{
		"Empty":                       {aws, "", msgNotAURL},
		"NotAURL":                     {aws, "hooks.example.com/stampduty", msgNotAURL},
		"Relative":                    {aws, "/hooks", msgNotAURL},
		"Spaces":                      {aws, " https://hooks.example.com/", msgNotAURL},
		"ControlCharacter":            {aws, "https://hooks.example.com/\n", msgNotAURL},
		"Opaque":                      {aws, "https:hooks.example.com", msgNotAURL},
		"TooLong":                     {aws, long + "a", msgTooLong},
		"TooLongInCharactersNotBytes": {aws, "https://hooks.example.com/" + strings.Repeat("é", MaxURLLength), msgTooLong},
		"PlainHTTPOnAWS":              {aws, "http://hooks.example.com/", msgHTTPS},
		"PlainHTTPLoopbackOnAWS":      {aws, "http://127.0.0.1:8080/", msgHTTPS},
		"OtherScheme":                 {aws, "ftp://hooks.example.com/", msgHTTPS},
		"JavaScript":                  {aws, "javascript://hooks.example.com/", msgHTTPS},
		"LocalPlainHTTPPublic":        {local, "http://hooks.example.com/", msgLocalHTTP},
		"LocalPlainHTTPPrivate":       {local, "http://10.0.0.1/", msgLocalHTTP},
		"UserInfo":                    {aws, "https://user:pass@hooks.example.com/", msgUserInfo},
		"UserOnly":                    {aws, "https://user@hooks.example.com/", msgUserInfo},
		"Fragment":                    {aws, "https://hooks.example.com/#x", msgFragment},
		"EmptyFragment":               {aws, "https://hooks.example.com/#", msgFragment},
		"NoHost":                      {aws, "https:///hooks", msgNoHost},
		"PortOnly":                    {aws, "https://:443/hooks", msgNoHost},
		"PortZero":                    {aws, "https://hooks.example.com:0/", msgPort},
		"PortTooLarge":                {aws, "https://hooks.example.com:65536/", msgPort},
		"ShortIPv4":                   {aws, "https://127.1/", msgBadHost},
		"DecimalIPv4":                 {aws, "https://2130706433/", msgBadHost},
		"HexIPv4":                     {aws, "https://0x7f.0.0.1/", msgBadHost},
		"OctalIPv4":                   {aws, "https://0177.0.0.1/", msgBadHost},
		"Underscore":                  {aws, "https://hooks_1.example.com/", msgBadHost},
		"Unicode":                     {aws, "https://bücher.example/", msgBadHost},
		"EmptyLabel":                  {aws, "https://hooks..example.com/", msgBadHost},
		"HyphenLabel":                 {aws, "https://-hooks.example.com/", msgBadHost},
		"LongLabel":                   {aws, "https://" + strings.Repeat("a", 64) + ".example.com/", msgBadHost},
		"LoopbackIPv4":                {aws, "https://127.0.0.1/", msgLoopback},
		"LoopbackIPv6":                {aws, "https://[::1]/", msgLoopback},
		"Localhost":                   {aws, "https://localhost/", msgLoopback},
		"MappedLoopback":              {aws, "https://[::ffff:127.0.0.1]/", msgLoopback},
		"Private10":                   {aws, "https://10.1.2.3/", msgPrivate},
		"Private172":                  {aws, "https://172.20.0.1/", msgPrivate},
		"Private192":                  {aws, "https://192.168.0.10/", msgPrivate},
		"PrivateIPv6":                 {aws, "https://[fd12::1]/", msgPrivate},
		"ResolvesPrivate":             {aws, "https://internal.example.com/", msgPrivate},
		"ResolvesPrivateAmongPublic":  {aws, "https://mixed.example.com/", msgPrivate},
		"LocalStillRefusesPrivate":    {local, "https://internal.example.com/", msgPrivate},
		"Metadata":                    {aws, "https://169.254.169.254/latest/meta-data/", msgMetadata},
		"MetadataLocal":               {local, "https://169.254.169.254/", msgMetadata},
		"ResolvesMetadata":            {aws, "https://metadata.example.com/", msgMetadata},
		"ResolvesMappedMetadata":      {aws, "https://mapped.example.com/", msgMetadata},
		"MetadataIPv6":                {aws, "https://[fd00:ec2::254]/", msgPrivate},
		"ResolvesMetadataIPv6":        {aws, "https://v6meta.example.com/", msgPrivate},
		"MappedMetadata":              {aws, "https://[::ffff:a9fe:a9fe]/", msgMetadata},
		"TranslatedMetadata":          {aws, "https://[::ffff:0:a9fe:a9fe]/", msgEmbedding},
		"TranslatedLoopback":          {aws, "https://[::ffff:0:7f00:1]/", msgEmbedding},
		"TranslatedLoopbackLocal":     {local, "http://[::ffff:0:7f00:1]:8080/", msgLocalHTTP},
		"NAT64LoopbackLocal":          {local, "https://[64:ff9b::7f00:1]/", msgEmbedding},
		"LinkLocalIPv6":               {aws, "https://[fe80::1]/", msgMetadata},
		"ScopedIPv6":                  {aws, "https://[fe80::1%25eth0]/", msgScoped},
		"CGNAT":                       {aws, "https://100.64.0.1/", msgCGNAT},
		"ResolvesCGNAT":               {aws, "https://cgnat.example.com/", msgCGNAT},
		"Unspecified":                 {aws, "https://0.0.0.0/", msgUnspecified},
		"UnspecifiedIPv6":             {aws, "https://[::]/", msgUnspecified},
		"Multicast":                   {aws, "https://224.0.0.1/", msgMulticast},
		"Broadcast":                   {aws, "https://255.255.255.255/", msgReserved},
		"NoSuchHost":                  {aws, "https://nowhere.example.com/", msgNoResolve},
		"NoAddresses":                 {aws, "https://empty.example.com/", msgNoResolve},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			err := tc.guard.CheckURL(context.Background(), tc.url)
			assertInvalid(t, err, "url", tc.msg)
		})
	}
}

// TestCheckURLResolving: a refusal keeps the address it refused (and does
// not show it to the caller), a resolver that is down makes the check
// unavailable, a literal address is not looked up, and the zero Guard
// resolves with net.DefaultResolver.
func TestCheckURLResolving(t *testing.T) {
	aws, _ := urlGuards()
	t.Run("AddressRefusalKeepsTheCause", func(t *testing.T) {
		err := aws.CheckURL(context.Background(), "https://internal.example.com/")
		var b *BlockedError
		if !errors.As(err, &b) {
			t.Fatalf("CheckURL = %v, want it to wrap a *BlockedError", err)
		}
		if got, want := b.Addr, netip.MustParseAddr("10.0.0.7"); got != want {
			t.Errorf("blocked address = %s, want %s", got, want)
		}
		if msg := stampduty.ErrorMessage(err); strings.Contains(msg, "10.0.0.7") || strings.Contains(msg, "internal.example.com") {
			t.Errorf("caller-facing message %q repeats the URL or its address", msg)
		}
	})
	t.Run("ResolverDownIsUnavailable", func(t *testing.T) {
		down := Guard{Resolver: &fakeResolver{err: &net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}}}
		err := down.CheckURL(context.Background(), "https://hooks.example.com/")
		if got, want := stampduty.ErrorCode(err), stampduty.EUNAVAILABLE; got != want {
			t.Errorf("code = %s, want %s (%v)", got, want, err)
		}
	})
	t.Run("LiteralIPNeedsNoLookup", func(t *testing.T) {
		r := &fakeResolver{}
		if err := (Guard{Resolver: r}).CheckURL(context.Background(), "https://93.184.215.14/"); err != nil {
			t.Fatal(err)
		}
		if got := r.count(); got != 0 {
			t.Errorf("%d lookups for a literal address, want 0", got)
		}
	})
	t.Run("DefaultResolverIsNets", func(t *testing.T) {
		if got, want := (Guard{}).resolver(), Resolver(net.DefaultResolver); got != want {
			t.Errorf("zero Guard resolves with %v, want net.DefaultResolver", got)
		}
	})
}
