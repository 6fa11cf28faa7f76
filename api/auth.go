package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// tokenSet holds the SHA-256 of each token, so every comparison is
// constant-time over equal-length values whatever is presented.
type tokenSet struct {
	user, agent [sha256.Size]byte
	hasAgent    bool
}

func newTokenSet(user, agent string) tokenSet {
	return tokenSet{user: sha256.Sum256([]byte(user)), agent: sha256.Sum256([]byte(agent)), hasAgent: agent != ""}
}

// match returns the role of token, or "" when it is neither. Both hashes
// are always compared.
func (t tokenSet) match(token string) Role {
	h := sha256.Sum256([]byte(token))
	u := subtle.ConstantTimeCompare(h[:], t.user[:])
	a := subtle.ConstantTimeCompare(h[:], t.agent[:])
	switch {
	case token == "":
		return ""
	case u == 1:
		return RoleUser
	case a == 1 && t.hasAgent:
		return RoleAgent
	}
	return ""
}

// authenticate reads the bearer token of the Authorization header.
func (s *server) authenticate(r *http.Request) (Role, *apiError) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return "", apiErrorf(http.StatusUnauthorized, "unauthorized", "a bearer token is required: Authorization: Bearer <token>")
	}
	scheme, token, ok := strings.Cut(vals[0], " ")
	if len(vals) > 1 || !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", apiErrorf(http.StatusUnauthorized, "unauthorized", "the Authorization header must be one bearer token: Authorization: Bearer <token>")
	}
	role := s.tokens.match(strings.TrimSpace(token))
	if role == "" {
		return "", apiErrorf(http.StatusUnauthorized, "unauthorized", "the token is not valid")
	}
	return role, nil
}

// tokenQueryNames are query parameters that carry credentials in other
// APIs; browserop refuses them whatever their value.
var tokenQueryNames = []string{"token", "access_token", "bearer", "bearer_token", "auth", "authorization",
	"api_key", "apikey", "key", "id_token"}

// tokenInQuery reports whether the URL carries a token: a credential-like
// parameter name, or any name or value equal to one of the tokens.
func (s *server) tokenInQuery(r *http.Request) bool {
	if r.URL.RawQuery == "" {
		return false
	}
	// Parsed pairs, and the raw pieces too: a malformed query may still
	// hold one.
	q, _ := url.ParseQuery(r.URL.RawQuery)
	for _, part := range strings.FieldsFunc(r.URL.RawQuery, func(c rune) bool { return c == '&' || c == ';' || c == '=' }) {
		if p, err := url.QueryUnescape(part); err == nil {
			part = p
		}
		q.Add(part, "")
	}
	found := false
	for name, vals := range q {
		if contains(tokenQueryNames, strings.ToLower(name)) || s.tokens.match(name) != "" {
			found = true
		}
		for _, v := range vals {
			v = strings.TrimSpace(v)
			if s.tokens.match(v) != "" {
				found = true
			}
			if scheme, tok, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "Bearer") && s.tokens.match(strings.TrimSpace(tok)) != "" {
				found = true
			}
		}
	}
	return found
}

// loopbackHost reports whether host (no port) is localhost or a loopback
// address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackHostHeader checks a Host header: a loopback name or address,
// with any port; an IPv6 address in brackets.
func loopbackHostHeader(h string) bool {
	if h == "" {
		return false
	}
	host := h
	if strings.HasPrefix(h, "[") {
		end := strings.Index(h, "]")
		if end < 0 {
			return false
		}
		host = h[1:end]
		if rest := h[end+1:]; rest != "" && (!strings.HasPrefix(rest, ":") || !digits(rest[1:])) {
			return false
		}
		return net.ParseIP(host) != nil && net.ParseIP(host).IsLoopback()
	}
	if i := strings.LastIndex(h, ":"); i >= 0 {
		if strings.Count(h, ":") > 1 || !digits(h[i+1:]) {
			return false
		}
		host = h[:i]
	}
	return loopbackHost(host)
}

func digits(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// loopbackOrigin checks an Origin header: an http(s) origin on a loopback
// host. "null" (sandboxed frames, file: pages) is not.
func loopbackOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	return loopbackHostHeader(u.Host)
}
