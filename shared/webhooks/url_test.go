package webhooks

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"stampduty/shared/rules"
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

func TestAddrKind(t *testing.T) {
	cases := []struct {
		addr, kind string
	}{
		{"93.184.215.14", ""},
		{"8.8.8.8", ""},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", ""},
		{"64:ff9b::808:808", ""}, // NAT64 of 8.8.8.8
		{"2002:808:808::1", ""},  // 6to4 of 8.8.8.8
		{"100.63.255.255", ""},   // just below CGNAT
		{"100.128.0.0", ""},      // just above CGNAT
		{"172.32.0.1", ""},       // just above 172.16/12
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
		{"64:ff9b:1::a00:1", "private"},
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
		{"192.0.2.1", "documentation"},
		{"2001:db8::1", "documentation"},
		{"2001::1", "reserved"}, // Teredo
		{"fec0::1", "reserved"},
		{"::7f00:1", "reserved"}, // IPv4-compatible 127.0.0.1
		// IPv4-mapped IPv6 forms are their IPv4 address.
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:169.254.169.254", "link-local (cloud metadata)"},
		{"::ffff:100.64.0.1", "shared (CGNAT)"},
		{"::ffff:8.8.8.8", ""},
		// NAT64 and 6to4 forms are checked by the IPv4 address they carry.
		{"64:ff9b::a9fe:a9fe", "link-local (cloud metadata)"},
		{"64:ff9b::7f00:1", "loopback"},
		{"2002:a00:1::1", "private"},
		{"2002:a9fe:a9fe::", "link-local (cloud metadata)"},
	}
	for _, tc := range cases {
		if got := addrKind(netip.MustParseAddr(tc.addr)); got != tc.kind {
			t.Errorf("addrKind(%s) = %q, want %q", tc.addr, got, tc.kind)
		}
	}
}

func TestCheckURL(t *testing.T) {
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
	aws := Guard{Resolver: res}
	local := Guard{Local: true, Resolver: res}
	long := "https://hooks.example.com/" + strings.Repeat("a", MaxURLLength-len("https://hooks.example.com/"))

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

	t.Run("AddressRefusalKeepsTheCause", func(t *testing.T) {
		err := aws.CheckURL(context.Background(), "https://internal.example.com/")
		var b *BlockedError
		if !errors.As(err, &b) {
			t.Fatalf("CheckURL = %v, want it to wrap a *BlockedError", err)
		}
		if got, want := b.Addr, netip.MustParseAddr("10.0.0.7"); got != want {
			t.Errorf("blocked address = %s, want %s", got, want)
		}
		if msg := rules.ErrorMessage(err); strings.Contains(msg, "10.0.0.7") || strings.Contains(msg, "internal.example.com") {
			t.Errorf("caller-facing message %q repeats the URL or its address", msg)
		}
	})
	t.Run("ResolverDownIsUnavailable", func(t *testing.T) {
		down := Guard{Resolver: &fakeResolver{err: &net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}}}
		err := down.CheckURL(context.Background(), "https://hooks.example.com/")
		if got, want := rules.ErrorCode(err), rules.EUNAVAILABLE; got != want {
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
