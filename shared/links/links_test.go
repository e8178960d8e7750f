package links

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLinks(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	s, err := NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	l := Link{Key: "certificates/" + strings.Repeat("o", 24) + "/" + strings.Repeat("y", 24), Name: strings.Repeat("(", 100),
		Mime: "application/pdf", Expires: now.Add(15 * time.Minute)}
	tok := s.Token(l)
	t.Run("RoundTrip", func(t *testing.T) {
		got, err := s.Open(tok, now)
		if err != nil || got != l {
			t.Fatalf("Open = %+v, %v; want %+v", got, err, l)
		}
	})
	t.Run("Short", func(t *testing.T) {
		// The largest file name and key: far shorter than an S3 address
		// signed with a session token (2,277 characters).
		if got := len(tok); got > 300 {
			t.Errorf("token of %d characters, want at most 300", got)
		}
	})
	t.Run("ErrExpired", func(t *testing.T) {
		if _, err := s.Open(tok, l.Expires); !errors.Is(err, ErrLink) {
			t.Errorf("at its expiry: %v, want ErrLink", err)
		}
	})
	t.Run("ErrAnotherKey", func(t *testing.T) {
		other, _ := NewSigner([]byte(strings.Repeat("x", 32)))
		if _, err := other.Open(tok, now); !errors.Is(err, ErrLink) {
			t.Errorf("under another key: %v, want ErrLink", err)
		}
	})
	t.Run("ErrAltered", func(t *testing.T) {
		for i := range len(tok) {
			c := byte('A')
			if tok[i] == 'A' {
				c = 'B'
			}
			bad := tok[:i] + string(c) + tok[i+1:]
			if got, err := s.Open(bad, now); err == nil && got != l {
				t.Fatalf("altered at %d: opened as %+v", i, got)
			}
		}
		for _, bad := range []string{"", "x", tok[:20], tok + "A", "!" + tok[1:]} {
			if _, err := s.Open(bad, now); !errors.Is(err, ErrLink) {
				t.Errorf("Open(%.30q) = %v, want ErrLink", bad, err)
			}
		}
	})
	t.Run("ErrShortKey", func(t *testing.T) {
		if _, err := NewSigner(key[:31]); err == nil {
			t.Error("a 31-byte key was taken")
		}
	})
}

func TestBase(t *testing.T) {
	ctx := context.Background()
	if got := Base(ctx); got != "" {
		t.Errorf("Base of a context without one = %q, want empty", got)
	}
	ctx = WithBase(ctx, "https://api.example.com/")
	if got, want := Base(ctx), "https://api.example.com"; got != want {
		t.Errorf("Base = %q, want %q", got, want)
	}
	s, err := NewSigner([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	l := Link{Key: "documents/a", Name: "a.pdf", Mime: "application/pdf", Expires: time.Unix(1_800_000_000, 0)}
	if got, want := s.URL(Base(ctx), l), "https://api.example.com/api/files/"+s.Token(l); got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
}
