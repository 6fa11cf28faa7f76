package demosite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // the time_zone switch's zones on machines without tzdata
)

// ErrUnknownFault is returned (wrapped) by [Faults.Set] and by decoding JSON
// when a fault name is not one of [FaultNames].
var ErrUnknownFault = errors.New("unknown fault")

// ErrBadFaultValue is returned (wrapped) by [Faults.Set], [Faults.Validate]
// and by decoding JSON when a fault's value cannot be used.
var ErrBadFaultValue = errors.New("bad fault value")

// Faults are the switches that make the demosite misbehave. The zero value is
// a well-behaved site. The JSON names (also the names [Faults.Set] and the
// `--fault name=value` flags take) are in the struct tags; durations are
// written as Go duration strings such as "3s" or "250ms". See
// docs/demosite.md for the exact behaviour of each switch.
type Faults struct {
	// EditorAppend pre-fills the compose and reply editors with the saved
	// draft [Draft] and keeps it in front of whatever is filled in, so a
	// replacing fill ends up as Draft+text.
	EditorAppend bool `json:"editor_append"`
	// VisibilityDelay hides a new post or reply from timelines, reply lists
	// and its own permalink (404) until this long after it was committed.
	VisibilityDelay time.Duration `json:"visibility_delay"`
	// DropAfterCommit makes every mutation POST commit and then close the
	// connection without a usable response (one byte that is not HTTP, so
	// that Chrome does not resend the POST).
	DropAfterCommit bool `json:"drop_after_commit"`
	// HangAfterCommit makes every mutation POST commit and then never
	// answer, until the client goes away or the server closes.
	HangAfterCommit bool `json:"hang_after_commit"`
	// Error500AfterCommit makes every mutation POST commit and then answer
	// 500 with h1#server-error.
	Error500AfterCommit bool `json:"error_500_after_commit"`
	// Slow delays every response (except the oracle's) by this long.
	Slow time.Duration `json:"slow"`
	// SessionExpired makes every request behave as if nobody were signed in.
	SessionExpired bool `json:"session_expired"`
	// Captcha answers every signed-in request with 403 and
	// div#captcha-challenge.
	Captcha bool `json:"captcha"`
	// RateLimit answers every signed-in request, mutations included, with 429
	// and h1#rate-limited; nothing is committed.
	RateLimit bool `json:"rate_limit"`
	// Restricted answers every signed-in request with 403 and
	// div#account-restricted.
	Restricted bool `json:"restricted"`
	// SwitchAccount, when not empty, is the handle every signed-in session
	// silently acts as and shows.
	SwitchAccount string `json:"switch_account"`
	// OffsiteRedirect, when not empty, is an absolute http(s) URL every
	// mutation POST redirects (303) to, committing nothing.
	OffsiteRedirect string `json:"offsite_redirect"`
	// Injection adds text aimed at an agent to timelines and permalink
	// pages, visible and hidden, and one post by mallory claiming to be
	// from alice.
	Injection bool `json:"injection"`
	// RefuseDuplicates makes the JSON API (POST /api/posts) refuse, with
	// 409, a post whose text the same account already posted (a post or a
	// reply, seeded ones included) within [DuplicateWindow] by the site's
	// clock, as X and Bluesky do. Forms are not affected.
	RefuseDuplicates bool `json:"refuse_duplicates"`
	// UploadFail makes every upload (POST /media) answer 500 with a JSON
	// error and store nothing, so the composer's slot shows failed.
	UploadFail bool `json:"upload_fail"`
	// UploadDelay holds every upload's answer this long, after its checks
	// and before anything is stored; an upload whose client goes away
	// meanwhile stores nothing.
	UploadDelay time.Duration `json:"upload_delay"`
	// DropAlt stores the alt text of every image attached to a post or
	// reply as "", whatever the form sent.
	DropAlt bool `json:"drop_alt"`
	// Reencode re-encodes every uploaded PNG or GIF as JPEG: the site stores
	// and serves type jpeg (.jpg), while the effect's SHA256 stays that of
	// the bytes uploaded. JPEG and WebP uploads are stored as they are.
	Reencode bool `json:"reencode"`

	// The switches below are site behaviours an adapter may get wrong:
	// each is how some real site shows or takes things, and the bundled
	// demo adapter is written for the site with them off.

	// RewriteText rewrites the text of every post and reply committed while
	// it is on, as sites do on save; the page shows the rewritten text for
	// good (the switch is read at the submission), while the effect keeps
	// the text as submitted (Effect.Shown has the rewrite). One of
	// [Rewrites]: "signature", "shorten_links", "curly_quotes",
	// "collapse_whitespace", "prefix".
	RewriteText string `json:"rewrite_text"`
	// TimelineNewest, when above 0, makes the home and profile timelines
	// show only this many newest items, on one page, without a next link
	// and with data-complete="false": a list that silently stops.
	TimelineNewest int `json:"timeline_newest"`
	// ResendAfterCommit makes a post or reply form's submission commit and
	// then answer 307 to its own URL, so that the browser sends the same
	// submission again (as it does after a dropped connection); the site
	// recognises the resend by its submission id and answers it 409 with
	// an edit-conflict message, committing nothing more.
	ResendAfterCommit bool `json:"resend_after_commit"`
	// Theme renames list items: with "cards", every item of a timeline or a
	// reply list is an article.card (not article.post). The permalink's
	// own article.post#post stays.
	Theme string `json:"theme"`
	// CompactReplies shows replies in lists as compact items without some
	// fields where a full item has them: a comma list of "author" (no
	// data-author, the author as span.author), "time" (no <time>, a
	// span.when) and "text" (the text in p.post-summary, not div.post-text).
	CompactReplies string `json:"compact_replies"`
	// TimeZone, an IANA zone name, shows every <time>'s text in that zone
	// as "2006-01-02 15:04:05.000", without naming the zone; the datetime
	// attribute stays RFC 3339 in UTC.
	TimeZone string `json:"time_zone"`
	// PermalinkShape "query" links every post as /post?id=N (the id in the
	// query) instead of /p/N, and redirects there after a post or reply;
	// /p/N is still served.
	PermalinkShape string `json:"permalink_shape"`
	// FlatReplies attaches a reply to a reply to the thread's root post, as
	// a comment system without threading does.
	FlatReplies bool `json:"flat_replies"`
	// LateList draws timelines and reply lists this long after the page
	// loaded: until then the page shows an empty, complete list and
	// <body data-ready="false">.
	LateList time.Duration `json:"late_list"`
	// LatePanel adds a category panel (div#category-panel) to the compose
	// and reply forms, drawn this long after the page loaded.
	LatePanel time.Duration `json:"late_panel"`

	// PersonEdits is the person typing into the compose or reply editor
	// while its images upload: the moment a file is chosen in the form
	// (after the text was filled and read back, before the click), the
	// page appends [PersonEdit] to the editor's text, with an input event.
	PersonEdits bool `json:"person_edits"`
}

// Rewrites are the values of the rewrite_text switch.
var Rewrites = []string{"signature", "shorten_links", "curly_quotes", "collapse_whitespace", "prefix"}

// Themes are the values of the theme switch ("" is the classic one).
var Themes = []string{"cards"}

// PermalinkShapes are the values of the permalink_shape switch ("" is
// /p/N).
var PermalinkShapes = []string{"query"}

// CompactFields are the fields compact_replies may leave out.
var CompactFields = []string{"author", "time", "text"}

// faultField describes one switch of Faults, found by reflection so that the
// struct stays the only list of switches.
type faultField struct {
	name  string
	index int
	kind  string // "bool", "duration", "int", "string"
}

var faultFields = func() []faultField {
	t := reflect.TypeFor[Faults]()
	fields := make([]faultField, 0, t.NumField())
	for i := range t.NumField() {
		sf := t.Field(i)
		var kind string
		switch {
		case sf.Type == reflect.TypeFor[time.Duration]():
			kind = "duration"
		case sf.Type.Kind() == reflect.Bool:
			kind = "bool"
		case sf.Type.Kind() == reflect.String:
			kind = "string"
		case sf.Type.Kind() == reflect.Int:
			kind = "int"
		default:
			panic("demosite: fault field " + sf.Name + " has an unsupported type")
		}
		fields = append(fields, faultField{name: sf.Tag.Get("json"), index: i, kind: kind})
	}
	return fields
}()

func lookupFault(name string) (faultField, bool) {
	for _, f := range faultFields {
		if f.name == name {
			return f, true
		}
	}
	return faultField{}, false
}

// FaultNames returns the name of every fault switch, in declaration order.
func FaultNames() []string {
	names := make([]string, len(faultFields))
	for i, f := range faultFields {
		names[i] = f.name
	}
	return names
}

func unknownFault(name string) error {
	return fmt.Errorf("%w %q (known: %s)", ErrUnknownFault, name, strings.Join(FaultNames(), ", "))
}

// Set sets the switch called name from its text form, as the CLI flag
// `--fault name=value` gives it: booleans take strconv.ParseBool forms
// ("true", "false", "1", "0"), durations take Go durations ("3s", "250ms",
// "0"), counts take whole numbers ("0" is off), switch_account takes an
// account handle, offsite_redirect an absolute http(s) URL, time_zone an
// IANA zone name and the other string switches one of their listed values;
// an empty value turns a string switch off. Set returns
// an error wrapping [ErrUnknownFault] for an unknown name and
// [ErrBadFaultValue] for a value that does not fit, and then changes nothing.
func (f *Faults) Set(name, value string) error {
	ff, ok := lookupFault(name)
	if !ok {
		return unknownFault(name)
	}
	next := *f
	v := reflect.ValueOf(&next).Elem().Field(ff.index)
	switch ff.kind {
	case "bool":
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("fault %s: %w: %q is not a boolean (use true or false)", name, ErrBadFaultValue, value)
		}
		v.SetBool(b)
	case "duration":
		d, err := time.ParseDuration(value)
		if err != nil {
			return fmt.Errorf("fault %s: %w: %q is not a duration (use e.g. 3s or 250ms)", name, ErrBadFaultValue, value)
		}
		v.SetInt(int64(d))
	case "int":
		n, err := strconv.Atoi(value)
		if err != nil {
			return fmt.Errorf("fault %s: %w: %q is not a whole number", name, ErrBadFaultValue, value)
		}
		v.SetInt(int64(n))
	case "string":
		v.SetString(value)
	}
	if err := next.validateField(ff); err != nil {
		return err
	}
	*f = next
	return nil
}

// Validate reports whether every switch holds a usable value: durations are
// not negative, switch_account is empty or an account, offsite_redirect is
// empty or an absolute http(s) URL. The error wraps [ErrBadFaultValue] and
// names the switch.
func (f Faults) Validate() error {
	for _, ff := range faultFields {
		if err := f.validateField(ff); err != nil {
			return err
		}
	}
	return nil
}

func (f Faults) validateField(ff faultField) error {
	v := reflect.ValueOf(f).Field(ff.index)
	switch ff.kind {
	case "duration":
		if v.Int() < 0 {
			return fmt.Errorf("fault %s: %w: %s is negative", ff.name, ErrBadFaultValue, time.Duration(v.Int()))
		}
	case "int":
		if v.Int() < 0 {
			return fmt.Errorf("fault %s: %w: %d is negative", ff.name, ErrBadFaultValue, v.Int())
		}
	case "string":
		s := v.String()
		if s == "" {
			return nil
		}
		switch ff.name {
		case "switch_account":
			if !isAccount(s) {
				return fmt.Errorf("fault %s: %w: %q is not an account (use one of %s)", ff.name, ErrBadFaultValue, s, strings.Join(Accounts(), ", "))
			}
		case "offsite_redirect":
			u, err := url.Parse(s)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("fault %s: %w: %q is not an absolute http(s) URL", ff.name, ErrBadFaultValue, s)
			}
		case "rewrite_text":
			return oneOf(ff.name, s, Rewrites)
		case "theme":
			return oneOf(ff.name, s, Themes)
		case "permalink_shape":
			return oneOf(ff.name, s, PermalinkShapes)
		case "compact_replies":
			for _, part := range strings.Split(s, ",") {
				if err := oneOf(ff.name, part, CompactFields); err != nil {
					return err
				}
			}
		case "time_zone":
			if _, err := time.LoadLocation(s); err != nil || s == "Local" {
				return fmt.Errorf("fault %s: %w: %q is not an IANA time zone name such as America/New_York", ff.name, ErrBadFaultValue, s)
			}
		}
	}
	return nil
}

func oneOf(name, v string, allowed []string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return fmt.Errorf("fault %s: %w: %q is not one of %s", name, ErrBadFaultValue, v, strings.Join(allowed, ", "))
}

// Active returns the names of the switches that are on, in declaration order.
func (f Faults) Active() []string {
	var on []string
	v := reflect.ValueOf(f)
	for _, ff := range faultFields {
		if !v.Field(ff.index).IsZero() {
			on = append(on, ff.name)
		}
	}
	return on
}

// MarshalJSON writes every switch, in declaration order, with durations as
// Go duration strings.
func (f Faults) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	v := reflect.ValueOf(f)
	for i, ff := range faultFields {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, _ := json.Marshal(ff.name)
		buf.Write(key)
		buf.WriteByte(':')
		var val any
		switch ff.kind {
		case "bool":
			val = v.Field(ff.index).Bool()
		case "duration":
			val = time.Duration(v.Field(ff.index).Int()).String()
		case "int":
			val = v.Field(ff.index).Int()
		case "string":
			val = v.Field(ff.index).String()
		}
		b, err := json.Marshal(val)
		if err != nil {
			return nil, err
		}
		buf.Write(b)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads a JSON object of switches. Switches it does not mention
// keep their value; an unknown name fails with an error wrapping
// [ErrUnknownFault] that names it, a value of the wrong type or out of range
// with one wrapping [ErrBadFaultValue]. Durations are Go duration strings or
// integer nanoseconds. On error f is unchanged.
func (f *Faults) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("faults: %w: want a JSON object: %v", ErrBadFaultValue, err)
	}
	if raw == nil {
		return fmt.Errorf("faults: %w: want a JSON object, got null", ErrBadFaultValue)
	}
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	sort.Strings(names)
	next := *f
	v := reflect.ValueOf(&next).Elem()
	for _, name := range names {
		ff, ok := lookupFault(name)
		if !ok {
			return unknownFault(name)
		}
		msg := raw[name]
		field := v.Field(ff.index)
		switch ff.kind {
		case "bool":
			var b bool
			if err := json.Unmarshal(msg, &b); err != nil {
				return fmt.Errorf("fault %s: %w: %s is not a boolean", name, ErrBadFaultValue, msg)
			}
			field.SetBool(b)
		case "duration":
			var s string
			var n int64
			if err := json.Unmarshal(msg, &s); err == nil {
				d, err := time.ParseDuration(s)
				if err != nil {
					return fmt.Errorf("fault %s: %w: %q is not a duration (use e.g. \"3s\")", name, ErrBadFaultValue, s)
				}
				field.SetInt(int64(d))
			} else if err := json.Unmarshal(msg, &n); err == nil {
				field.SetInt(n)
			} else {
				return fmt.Errorf("fault %s: %w: %s is not a duration (use e.g. \"3s\")", name, ErrBadFaultValue, msg)
			}
		case "int":
			var n int
			if err := json.Unmarshal(msg, &n); err != nil {
				return fmt.Errorf("fault %s: %w: %s is not a whole number", name, ErrBadFaultValue, msg)
			}
			field.SetInt(int64(n))
		case "string":
			var s string
			if err := json.Unmarshal(msg, &s); err != nil {
				return fmt.Errorf("fault %s: %w: %s is not a string", name, ErrBadFaultValue, msg)
			}
			field.SetString(s)
		}
	}
	if err := next.Validate(); err != nil {
		return err
	}
	*f = next
	return nil
}
