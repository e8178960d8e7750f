package main

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"stampduty/shared/testkit/localserver"
)

// The default ports, which LOCAL_PORT_OFFSET moves all at once.
const (
	defaultAPIPort = 3000
	defaultDBPort  = 8000
	defaultS3Port  = 9000
	// cognito-local's own default port.
	defaultCognitoPort = 9229
)

// addrs are where the stack listens, before DYNAMODB_ENDPOINT or
// S3_ENDPOINT are taken into account.
type addrs struct {
	api, db, s3, cognito string
	offset               int
}

// localAddrs reads LOCAL_ADDR, LOCAL_DYNAMODB_ADDR, LOCAL_S3_ADDR and
// LOCAL_COGNITO_ADDR, each defaulting to 127.0.0.1 on its default port
// plus LOCAL_PORT_OFFSET: one variable moves a second stack's four ports,
// and a variable of its own still moves one of them.
func localAddrs(getenv func(string) string) (addrs, error) {
	var a addrs
	if v := getenv("LOCAL_PORT_OFFSET"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || defaultCognitoPort+n > 65535 {
			return a, fmt.Errorf("LOCAL_PORT_OFFSET=%q is not a whole number from 0 to %d", v, 65535-defaultCognitoPort)
		}
		a.offset = n
	}
	port := func(p int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p+a.offset)) }
	a.api = cmp.Or(getenv("LOCAL_ADDR"), port(defaultAPIPort))
	a.db = cmp.Or(getenv("LOCAL_DYNAMODB_ADDR"), port(defaultDBPort))
	a.s3 = cmp.Or(getenv("LOCAL_S3_ADDR"), port(defaultS3Port))
	a.cognito = cmp.Or(getenv("LOCAL_COGNITO_ADDR"), port(defaultCognitoPort))
	return a, nil
}

// busy is an address the stack listens on ("" for none), what listens
// there, and the variable that moves it.
type busy struct{ addr, what, variable string }

func (s *stack) apiBusy() busy { return busy{s.apiAddr, "the API", "LOCAL_ADDR"} }
func (s *stack) dbBusy() busy  { return busy{s.dbAddr, "the local DynamoDB", "LOCAL_DYNAMODB_ADDR"} }
func (s *stack) s3Busy() busy  { return busy{s.s3Addr, "the local S3", "LOCAL_S3_ADDR"} }
func (s *stack) cognitoBusy() busy {
	return busy{s.cognitoAddr, "the local Cognito", "LOCAL_COGNITO_ADDR"}
}

// checkAddrs fails, before anything starts, when an address the stack
// needs cannot be listened on; it names every such address, so that a
// second `make local` beside a first says at once everything to set.
func (s *stack) checkAddrs() error {
	var taken []busy
	var errs []error
	for _, l := range []busy{s.apiBusy(), s.dbBusy(), s.s3Busy(), s.cognitoBusy()} {
		if l.addr == "" {
			continue
		}
		if err := localserver.CheckFree(l.addr); errors.Is(err, localserver.ErrAddrInUse) {
			taken = append(taken, l)
		} else if err != nil {
			errs = append(errs, fmt.Errorf("%s=%s: %w", l.variable, l.addr, err))
		}
	}
	if len(taken) > 0 {
		errs = append(errs, s.inUse(taken...))
	}
	return errors.Join(errs...)
}

// inUse says which addresses are taken and how to move each: by its own
// variable, or all the default ports at once by LOCAL_PORT_OFFSET.
func (s *stack) inUse(taken ...busy) error {
	var names, hints []string
	for _, l := range taken {
		names = append(names, fmt.Sprintf("%s (%s)", l.addr, l.what))
		hints = append(hints, fmt.Sprintf("  set %s to move %s, e.g. %s=%s", l.variable, l.what, l.variable, nextPort(l.addr)))
	}
	n := s.offset + 1
	hints = append(hints, fmt.Sprintf("  or set LOCAL_PORT_OFFSET=%d to move every default port by %d: API %d, DynamoDB %d, S3 %d, Cognito %d",
		n, n, defaultAPIPort+n, defaultDBPort+n, defaultS3Port+n, defaultCognitoPort+n))
	verb, list := "is", names[0]
	if len(names) > 1 {
		verb, list = "are", strings.Join(names[:len(names)-1], ", ")+" and "+names[len(names)-1]
	}
	return fmt.Errorf("%s %s in use: is another `make local` or `make local-db` running?\n%s", list, verb, strings.Join(hints, "\n"))
}

// nextPort returns addr with the port after its own, for an example.
func nextPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n <= 0 || n >= 65535 {
		return "127.0.0.1:0"
	}
	return net.JoinHostPort(host, strconv.Itoa(n+1))
}
