package authority_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/authority"
)

type site struct {
	name    string
	origins []string
}

func (s site) Name() string      { return s.name }
func (s site) Origins() []string { return s.origins }

var demo = site{"demo", []string{"http://127.0.0.1:8787"}}

func TestDomainMatch(t *testing.T) {
	cases := []struct {
		pattern, host string
		want          bool
	}{
		{"example.com", "example.com", true},
		{"example.com", "evil.example.com", false},
		{"example.com", "a.b.example.com", false},
		{"example.com", "notexample.com", false},
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "a.b.example.com", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "evilexample.com", false},
		{"127.0.0.1", "127.0.0.1", true},
		{"127.0.0.1", "evil.127.0.0.1", false},
		{"::1", "::1", true},
		{"[::1]", "::1", true},
		{"localhost", "a.localhost", false},
	}
	for _, c := range cases {
		d, err := authority.ParseDomain(c.pattern)
		require.NoError(t, err, c.pattern)
		require.Equal(t, c.want, d.Match(c.host), "%s matches %s", c.pattern, c.host)
	}
}

func TestParseDomainRefuses(t *testing.T) {
	for _, bad := range []string{"", "*", "*.com", "*.127.0.0.1", "evil.127.0.0.1", "a.*.com", "Example.com", "https://example.com",
		"example.com:443", "example.com/", "exa mple.com", "-a.com", "example.com.", "a..b", "fe80::1%eth0", "*.*.example.com"} {
		_, err := authority.ParseDomain(bad)
		require.ErrorIs(t, err, authority.ErrInvalid, "%q", bad)
	}
	for _, bad := range []string{"", "evil.127.0.0.1", "*.example.com", "a_b.com"} {
		_, err := authority.ParseHost(bad)
		require.ErrorIs(t, err, authority.ErrInvalid, "host %q", bad)
	}
	h, err := authority.ParseHost("Example.COM.")
	require.NoError(t, err)
	require.Equal(t, "example.com", h)
}

func TestWithin(t *testing.T) {
	cases := []struct {
		inner, outer string
		want         bool
	}{
		{"a.example.com", "*.example.com", true},
		{"*.a.example.com", "*.example.com", true},
		{"*.example.com", "*.example.com", true},
		{"example.com", "*.example.com", false},
		{"*.example.com", "example.com", false},
		{"evil.example.com", "example.com", false},
		{"127.0.0.1", "127.0.0.1", true},
	}
	for _, c := range cases {
		i, err := authority.ParseDomain(c.inner)
		require.NoError(t, err)
		o, err := authority.ParseDomain(c.outer)
		require.NoError(t, err)
		require.Equal(t, c.want, i.Within(o), "%s within %s", c.inner, c.outer)
	}
}

func TestCeiling(t *testing.T) {
	t.Run("EmptyIsTheSitesAndNoGrants", func(t *testing.T) {
		c, err := authority.NewCeiling(nil, []authority.Site{demo})
		require.NoError(t, err)
		require.NoError(t, c.CheckContract([]string{"127.0.0.1"}))
		require.ErrorIs(t, c.CheckContract([]string{"evil.127.0.0.1"}), authority.ErrInvalid)
		require.ErrorIs(t, c.CheckContract([]string{"localhost"}), authority.ErrDenied)
		_, err = c.CheckGrant("127.0.0.1")
		require.ErrorIs(t, err, authority.ErrDenied)
		require.ErrorContains(t, err, "authority.ceiling")
	})
	t.Run("Configured", func(t *testing.T) {
		c, err := authority.NewCeiling([]string{"127.0.0.1", "*.media.example"}, []authority.Site{demo})
		require.NoError(t, err)
		d, err := c.CheckGrant("cdn.media.example")
		require.NoError(t, err)
		require.Equal(t, "cdn.media.example", d.String())
		_, err = c.CheckGrant("media.example")
		require.ErrorIs(t, err, authority.ErrDenied)
		_, err = authority.NewCeiling([]string{"ok.test", "*"}, nil)
		require.ErrorContains(t, err, "authority.ceiling[1]")
	})
}

func TestCheck(t *testing.T) {
	c, err := authority.NewCeiling([]string{"127.0.0.1", "*.media.example"}, nil)
	require.NoError(t, err)
	task := authority.Task{Capabilities: []string{"post", "like"}, Domains: []string{"127.0.0.1"}}
	require.NoError(t, c.Check(task, demo, "", "post"))
	require.NoError(t, c.Check(task, demo, "http://127.0.0.1:8787/p/1", "like"))
	require.ErrorIs(t, c.Check(task, demo, "", "follow"), authority.ErrDenied)
	require.ErrorIs(t, c.Check(task, demo, "http://cdn.media.example/p/1", "like"), authority.ErrDenied, "not granted")
	task.Grants = []string{"cdn.media.example"}
	require.NoError(t, c.Check(task, demo, "http://cdn.media.example/p/1", "like"))
	require.ErrorIs(t, c.Check(task, demo, "javascript:alert(1)", "like"), authority.ErrInvalid)

	// Narrowed: the grant and the site's host leave the ceiling.
	narrow, err := authority.NewCeiling([]string{"example.com"}, nil)
	require.NoError(t, err)
	err = narrow.Check(task, demo, "", "post")
	require.ErrorIs(t, err, authority.ErrDenied)
	require.ErrorContains(t, err, "outside the ceiling")
	// With no ceiling configured, grants no longer count.
	none, err := authority.NewCeiling(nil, []authority.Site{demo})
	require.NoError(t, err)
	require.ErrorIs(t, none.Check(task, demo, "http://cdn.media.example/p/1", "like"), authority.ErrDenied)
}

func TestCheckResult(t *testing.T) {
	require.NoError(t, authority.CheckResult(demo, "", "http://127.0.0.1:8787/p/3"))
	require.NoError(t, authority.CheckResult(demo, "https://other.example/p/1", "https://other.example/p/9"))
	err := authority.CheckResult(demo, "", "https://evil.example/p/1")
	require.ErrorIs(t, err, authority.ErrInvalid)
	require.ErrorContains(t, err, "not on the action's site")
	require.ErrorIs(t, authority.CheckResult(demo, "", "ftp://127.0.0.1/x"), authority.ErrInvalid)
}

func FuzzParseDomain(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com", "127.0.0.1", "::1", "a..b", "*."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := authority.ParseDomain(s)
		if err != nil {
			return
		}
		again, err := authority.ParseDomain(d.String())
		if err != nil || again != d {
			t.Fatalf("%q parses to %q, which does not parse back: %v", s, d, err)
		}
	})
}
