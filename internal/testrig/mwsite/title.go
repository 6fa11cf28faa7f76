package mwsite

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// namespaces are the site's namespace names and aliases, lower-cased with
// spaces, and their numbers: MediaWiki's canonical English names, and the
// project namespace under the wiki's name too.
var namespaces = map[string]int{
	"talk":           1,
	"user":           2,
	"user talk":      3,
	"project":        4,
	"project talk":   5,
	"file":           6,
	"image":          6,
	"file talk":      7,
	"image talk":     7,
	"mediawiki":      8,
	"mediawiki talk": 9,
	"template":       10,
	"template talk":  11,
	"help":           12,
	"help talk":      13,
	"category":       14,
	"category talk":  15,

	strings.ToLower(Name):           4,
	strings.ToLower(Name) + " talk": 5,

	// The namespaces of no pages: Special:Contributions, Media:File.png.
	"special": -1,
	"media":   -2,
}

// normalize turns underscores into spaces, runs of spaces into one and
// trims them, as MediaWiki does to a title or a user name.
func normalize(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "_", " ")), " ")
}

// ucfirst capitalises the first letter of s, as MediaWiki does to every
// title ($wgCapitalLinks) and user name. (MediaWiki's own capitalisation
// differs for a few letters, such as ß; tests use none.)
func ucfirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// UserName returns MediaWiki's name for the account login: spaces for
// underscores, the first letter capitalised ("alice_b" is "Alice b"). An
// IP address stays as it is.
func UserName(login string) string { return ucfirst(normalize(login)) }

// splitTitle returns title's namespace number and its database key (the
// name after the namespace, first letter capitalised, underscores for
// spaces): "talk:foo bar" is 1, "Foo_bar". It refuses an empty title,
// characters titles cannot have, and the namespaces of no pages.
func splitTitle(title string) (int, string, error) {
	t := normalize(strings.TrimPrefix(strings.TrimSpace(title), ":"))
	if strings.ContainsAny(t, "#<>[]|{}\n") {
		return 0, "", fmt.Errorf("mwsite: title %q has a character titles cannot have", title)
	}
	ns := 0
	if i := strings.IndexByte(t, ':'); i > 0 {
		if n, ok := namespaces[strings.ToLower(strings.TrimSpace(t[:i]))]; ok {
			ns, t = n, strings.TrimSpace(t[i+1:])
		}
	}
	if ns < 0 {
		return 0, "", fmt.Errorf("mwsite: title %q is in a namespace of no pages", title)
	}
	if t == "" {
		return 0, "", fmt.Errorf("mwsite: title %q names no page", title)
	}
	return ns, strings.ReplaceAll(ucfirst(t), " ", "_"), nil
}

// wikiURLEncode escapes a title for index.php?title= as MediaWiki does
// (wfUrlencode): underscores for spaces, and ;@$!*(),/~: kept.
func wikiURLEncode(title string) string {
	t := strings.ReplaceAll(normalize(title), " ", "_")
	return keptInURLs.Replace(url.QueryEscape(t))
}

// keptInURLs undoes the escapes wfUrlencode does not make.
var keptInURLs = strings.NewReplacer("%3B", ";", "%40", "@", "%24", "$", "%21", "!", "%2A", "*",
	"%28", "(", "%29", ")", "%2C", ",", "%2F", "/", "%7E", "~", "%3A", ":")
