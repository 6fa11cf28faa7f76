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
	found, _ := s.queryToken(r)
	return found
}

// queryToken reports whether the query holds a token, and whose it is
// ("" when the value is no token of browserop's, as with ?token=guess).
func (s *server) queryToken(r *http.Request) (found bool, whose Role) {
	if r.URL.RawQuery == "" {
		return false, ""
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
	see := func(role Role) {
		found = true
		if role != "" {
			whose = role
		}
	}
	for name, vals := range q {
		if contains(tokenQueryNames, strings.ToLower(name)) {
			see("")
		}
		if role := s.tokens.match(name); role != "" {
			see(role)
		}
		for _, v := range vals {
			v = strings.TrimSpace(v)
			if role := s.tokens.match(v); role != "" {
				see(role)
			}
			if scheme, tok, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "Bearer") {
				if role := s.tokens.match(strings.TrimSpace(tok)); role != "" {
					see(role)
				}
			}
		}
	}
	return found, whose
}

// warnTokenInQuery logs what a person should do about a token sent in a
// URL: rotate it only when it really is one of browserop's tokens.
func (s *server) warnTokenInQuery(r *http.Request) {
	_, whose := s.queryToken(r)
	switch whose {
	case RoleUser:
		s.log.Warn("api: the user token was sent in a URL query string and refused; a URL ends up in shell history and proxy logs, "+
			"so treat it as exposed and rotate: stop browserop, delete the token file, start it again", "method", r.Method)
	case RoleAgent:
		s.log.Warn("api: the agent token was sent in a URL query string and refused; treat it as exposed and rotate: stop browserop, "+
			"delete the token file, start it again, and give agents the new agent token", "method", r.Method)
	default:
		s.log.Warn("api: a token-like query parameter was refused; its value is not a browserop token, so nothing needs rotating",
			"method", r.Method)
	}
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
