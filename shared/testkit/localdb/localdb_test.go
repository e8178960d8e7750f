package localdb

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stampduty/shared/testkit/localserver"
)

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// occupiedEngine starts a dynalite with one table, Occupant, standing for
// another local stack's data.
func occupiedEngine(t *testing.T) (*localserver.Server, *dynamodb.Client) {
	t.Helper()
	ctx := context.Background()
	other, err := Start(ctx, moduleRoot(t), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Stop)
	client := Client(other.Endpoint)
	if _, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("Occupant"),
		BillingMode:          types.BillingModePayPerRequest,
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
	}); err != nil {
		t.Fatal(err)
	}
	return other, client
}

// checkUntouched fails t unless the engine still answers with only its table.
func checkUntouched(t *testing.T, client *dynamodb.Client) {
	t.Helper()
	out, err := client.ListTables(context.Background(), &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatalf("the other engine no longer answers: %v", err)
	}
	if got, want := out.TableNames, []string{"Occupant"}; !slices.Equal(got, want) {
		t.Errorf("the other engine's tables = %v, want %v", got, want)
	}
}

func TestStart(t *testing.T) {
	ctx := context.Background()
	root := moduleRoot(t)

	t.Run("RefusesAnAddressAnotherEngineHolds", func(t *testing.T) {
		other, client := occupiedEngine(t)
		addr := strings.TrimPrefix(other.Endpoint, "http://")
		s, err := Start(ctx, root, addr, nil)
		if err == nil {
			s.Stop()
			t.Fatalf("Start(%s) succeeded on another engine's address, want ErrAddrInUse", addr)
		}
		if !errors.Is(err, localserver.ErrAddrInUse) {
			t.Errorf("Start(%s) = %v, want ErrAddrInUse", addr, err)
		}
		checkUntouched(t, client)
	})

	t.Run("RefusesAnAddressAnyListenerHolds", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		s, err := Start(ctx, root, l.Addr().String(), nil)
		if err == nil {
			s.Stop()
			t.Fatal("Start succeeded on an address in use")
		}
		if !errors.Is(err, localserver.ErrAddrInUse) {
			t.Errorf("Start(%s) = %v, want ErrAddrInUse", l.Addr(), err)
		}
	})

	t.Run("FreePortWhenNoneGiven", func(t *testing.T) {
		s, err := Start(ctx, root, "127.0.0.1:0", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		if strings.HasSuffix(s.Endpoint, ":0") {
			t.Errorf("Endpoint = %s, want a real port", s.Endpoint)
		}
		if _, err := Client(s.Endpoint).ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil {
			t.Error(err)
		}
	})
}
