package demosite

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The site behaviours an adapter may get wrong (the switches from
// rewrite_text on, docs/demosite.md "Site behaviours").

// Signature is what the rewrite_text switch "signature" appends.
const Signature = "\n— sent from demosite"

// CreatedPrefix is what the rewrite_text switch "prefix" puts in front,
// with the text in quotes after it, as a wiki names a new page's summary.
const CreatedPrefix = "Created page with "

// Categories are the categories the late_panel switch's panel offers.
var Categories = []string{"news", "notes"}

var linkRE = regexp.MustCompile(`https?://[^\s]+`)

// Rewrite is the text the site shows for text under the rewrite_text
// switch's value how ("" leaves it as it is):
//   - signature: Signature appended;
//   - shorten_links: every http(s) URL replaced by https://dmo.st/ and 8
//     hex digits of its SHA-256;
//   - curly_quotes: ' becomes ’, and " becomes “ at the start or after
//     white space or an opening bracket, else ”;
//   - collapse_whitespace: every run of white space (newlines too) one
//     space, none at either end;
//   - prefix: CreatedPrefix, then the text in “ ”.
func Rewrite(how, text string) string {
	switch how {
	case "signature":
		return text + Signature
	case "shorten_links":
		return linkRE.ReplaceAllStringFunc(text, func(u string) string {
			sum := sha256.Sum256([]byte(u))
			return "https://dmo.st/" + hex.EncodeToString(sum[:4])
		})
	case "curly_quotes":
		var b strings.Builder
		prev := ' '
		for _, r := range text {
			switch r {
			case '\'':
				b.WriteRune('’')
			case '"':
				if unicode.IsSpace(prev) || strings.ContainsRune("([{", prev) {
					b.WriteRune('“')
				} else {
					b.WriteRune('”')
				}
			default:
				b.WriteRune(r)
			}
			prev = r
		}
		return b.String()
	case "collapse_whitespace":
		return strings.Join(strings.Fields(text), " ")
	case "prefix":
		return CreatedPrefix + "“" + text + "”"
	}
	return text
}

// shownFor is the Shown of a post with text committed under f: the
// rewrite, or "" when it changes nothing.
func shownFor(f Faults, text string) string {
	if s := Rewrite(f.RewriteText, text); s != text {
		return s
	}
	return ""
}

// permalinkPath is the path of post id's permalink under the
// permalink_shape switch.
func permalinkPath(f Faults, id int64) string {
	if f.PermalinkShape == "query" {
		return "/post?id=" + strconv.FormatInt(id, 10)
	}
	return "/p/" + strconv.FormatInt(id, 10)
}

// zoneLayout is how the time_zone switch shows a time.
const zoneLayout = "2006-01-02 15:04:05.000"

// display is the text of a post's <time> under f.
func display(f Faults, t time.Time) string {
	if f.TimeZone != "" {
		if loc, err := time.LoadLocation(f.TimeZone); err == nil {
			return t.In(loc).Format(zoneLayout)
		}
	}
	return t.UTC().Format("Jan 2, 2006 15:04 UTC")
}

// compact reports whether compact_replies leaves field out of a reply.
func compact(f Faults, field string) bool {
	for _, p := range strings.Split(f.CompactReplies, ",") {
		if p == field {
			return true
		}
	}
	return false
}

// category is the form's category, when it is one of Categories.
func category(v string) string {
	for _, c := range Categories {
		if v == c {
			return c
		}
	}
	return ""
}
