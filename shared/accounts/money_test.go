package accounts_test

import (
	"testing"

	"stampduty/shared/accounts"
	"stampduty/shared/stampduty"
)

func TestParseMoney(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		sign accounts.Sign
		want accounts.Money
		ok   bool
	}{
		{"TwoDecimals", "125000.00", accounts.Unsigned, 12500000, true},
		{"Paise", "0.05", accounts.Unsigned, 5, true},
		{"Zero", "0.00", accounts.Unsigned, 0, true},
		{"FifteenDigits", "999999999999999.99", accounts.Unsigned, 99999999999999999, true},
		{"NegativeWhereSigned", "-40.50", accounts.Signed, -4050, true},
		{"NegativeWhereUnsigned", "-40.50", accounts.Unsigned, 0, false},
		{"SixteenDigits", "1000000000000000.00", accounts.Unsigned, 0, false},
		{"ThreeDecimals", "10.005", accounts.Unsigned, 0, false},
		{"OneDecimal", "10.5", accounts.Unsigned, 0, false},
		{"NoDecimals", "10", accounts.Unsigned, 0, false},
		{"LeadingZero", "010.00", accounts.Unsigned, 0, false},
		{"PlusSign", "+10.00", accounts.Signed, 0, false},
		{"Exponent", "1e3.00", accounts.Unsigned, 0, false},
		{"Spaces", " 10.00", accounts.Unsigned, 0, false},
		{"Empty", "", accounts.Unsigned, 0, false},
		{"BarePoint", ".50", accounts.Unsigned, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := accounts.ParseMoney("amount", tc.in, tc.sign)
			if tc.ok {
				if err != nil || got != tc.want {
					t.Errorf("ParseMoney(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
				}
				if got.String() != tc.in {
					t.Errorf("String() = %q, want %q back", got.String(), tc.in)
				}
				return
			}
			var e *stampduty.Error
			if err == nil || stampduty.ErrorCode(err) != stampduty.EINVALID {
				t.Fatalf("ParseMoney(%q) = %d, %v; want 400", tc.in, got, err)
			}
			if e = err.(*stampduty.Error); len(e.Fields) != 1 || e.Fields[0].Path != "amount" {
				t.Errorf("fields %+v, want the one naming amount", e.Fields)
			}
		})
	}
}

func TestIndian(t *testing.T) {
	for in, want := range map[accounts.Money]string{
		12000000:        "₹1,20,000.00",
		4550000:         "₹45,500.00",
		99900:           "₹999.00",
		100000:          "₹1,000.00",
		5:               "₹0.05",
		-4050:           "-₹40.50",
		100000000000000: "₹10,00,00,00,00,000.00",
	} {
		if got := in.Indian(); got != want {
			t.Errorf("%d paise: %q, want %q", in, got, want)
		}
	}
}

func TestEffects(t *testing.T) {
	// The ledger's table (accounts.md): what each type moves.
	for _, tc := range []struct {
		typ       string
		amount    accounts.Money
		bal, held accounts.Money
	}{
		{accounts.TypeCredit, 100, 100, 0},
		{accounts.TypeHold, 100, 0, 100},
		{accounts.TypeCharge, 100, -100, -100},
		{accounts.TypeRelease, 100, 0, -100},
		{accounts.TypeAdjustment, -4050, -4050, 0},
		{accounts.TypeAdjustment, 100, 100, 0},
	} {
		e := accounts.Entry{Type: tc.typ, Amount: tc.amount}
		if bal, held := e.Effects(); bal != tc.bal || held != tc.held {
			t.Errorf("%s %s moves %s/%s, want %s/%s", tc.typ, tc.amount, bal, held, tc.bal, tc.held)
		}
		tot := accounts.Totals{}.Add(tc.typ, tc.amount)
		if tot.Balance() != tc.bal || tot.Held() != tc.held {
			t.Errorf("%s %s: totals %+v make %s/%s, want %s/%s", tc.typ, tc.amount, tot, tot.Balance(), tot.Held(), tc.bal, tc.held)
		}
	}
}

func TestPaymentRequired(t *testing.T) {
	limit := accounts.Money(0)
	a := accounts.Account{Balance: 4550000, Limit: &limit}
	err := accounts.PaymentRequired(12000000, a)
	e, ok := err.(*stampduty.Error)
	if !ok || e.Code != stampduty.EPAYMENT {
		t.Fatalf("err = %v, want EPAYMENT", err)
	}
	if got, want := e.Message, "The order needs ₹1,20,000.00 and ₹45,500.00 is available. Top up the account or ask for a higher credit limit."; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if e.Shortfall == nil || e.Shortfall.Needed != "120000.00" || e.Shortfall.Available != "45500.00" {
		t.Errorf("shortfall %+v", e.Shortfall)
	}
}
