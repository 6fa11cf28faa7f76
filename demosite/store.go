package demosite

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Password is the password of every account.
const Password = "demo-password"

// accounts are the fixed accounts of the site. mallory exists so that the
// injected content of the injection fault has a real author page.
var accounts = []string{"alice", "bob", "carol", "mallory"}

// Accounts returns the handles of every account, in a fixed order.
func Accounts() []string { return slices.Clone(accounts) }

func isAccount(handle string) bool { return slices.Contains(accounts, handle) }

// The kinds of [Effect].
const (
	EffectPost     = "post"
	EffectReply    = "reply"
	EffectLike     = "like"
	EffectUnlike   = "unlike"
	EffectFollow   = "follow"
	EffectUnfollow = "unfollow"
)

// Effect is one committed side effect, as the site saw it.
type Effect struct {
	// Seq numbers effects from 1 in commit order; Reset starts again at 1.
	Seq int `json:"seq"`
	// Kind is one of EffectPost, EffectReply, EffectLike, EffectUnlike,
	// EffectFollow or EffectUnfollow.
	Kind string `json:"kind"`
	// Author is the account that caused the effect (the acting account, which
	// is the switch_account one when that fault is on).
	Author string `json:"author"`
	// PostID is the new post (post, reply) or the liked post (like, unlike);
	// 0 for follow and unfollow.
	PostID int64 `json:"post_id"`
	// ParentID is the post replied to (reply); 0 otherwise.
	ParentID int64 `json:"parent_id"`
	// Target is the followed handle (follow, unfollow) or the liked post id
	// in decimal (like, unlike); empty for post and reply.
	Target string `json:"target"`
	// Text is the stored text (post, reply); empty otherwise.
	Text string `json:"text"`
	// At is the commit time, UTC, at millisecond precision.
	At time.Time `json:"at"`
	// Media are the images attached to a post or reply, in slot order; nil
	// (and absent from the JSON) when it has none.
	Media []EffectMedia `json:"media,omitempty"`
	// Shown is the text as the site shows it, when the rewrite_text switch
	// rewrote it on save (absent otherwise: it shows Text).
	Shown string `json:"shown,omitempty"`
	// Category is the category the form chose (the late_panel switch's
	// panel); absent when none.
	Category string `json:"category,omitempty"`
}

// EffectMedia is one image attached to a post or reply, as the site stored
// it.
type EffectMedia struct {
	// SHA256 is the lowercase hex SHA-256 of the bytes as they were
	// uploaded, before the reencode fault changed them.
	SHA256 string `json:"sha256"`
	// Type is the stored type, one of "png", "jpeg", "gif", "webp": "jpeg"
	// for a PNG or GIF that the reencode fault re-encoded.
	Type string `json:"type"`
	// Alt is the stored alt text: "" when none was given, and always under
	// the drop_alt fault.
	Alt string `json:"alt"`
}

// post is a post or a reply.
type post struct {
	ID        int64
	Author    string
	ParentID  int64
	Text      string
	At        time.Time
	VisibleAt time.Time
	Seeded    bool
	// Media are the attached images in slot order; never changed after the
	// commit, so copies of a post may share the slice.
	Media []attachment
	// Shown is the text as shown, when rewrite_text rewrote it ("": Text).
	Shown    string
	Category string
}

// shownText is the text the site shows for the post.
func (p *post) shownText() string {
	if p.Shown != "" {
		return p.Shown
	}
	return p.Text
}

// postExtra is what a form's submission adds to a post: its text as the
// site rewrote it, its category, and the form's submission id.
type postExtra struct {
	Shown, Category, Submission string
}

func (p *post) visible(now time.Time) bool { return !now.Before(p.VisibleAt) }

var (
	errNoPost    = errors.New("no such post")
	errNoAccount = errors.New("no such account")
	errSelf      = errors.New("cannot follow yourself")
	errDuplicate = errors.New("duplicate text")
	errResent    = errors.New("submission already committed")
)

// store is the whole state of the site. Post ids are never reused, not even
// across reset, so a permalink from an earlier run never names a later post.
type store struct {
	mu       sync.Mutex
	lastID   int64
	posts    map[int64]*post
	likes    map[int64]map[string]bool // post id -> handles
	follows  map[string]map[string]bool
	effects  []Effect
	sessions map[string]string // token -> handle
	uploads  map[string]*upload
	// submissions are the form submission ids committed, with their post.
	submissions map[string]int64
}

func newStore() *store {
	st := &store{sessions: map[string]string{}}
	st.reset()
	return st
}

// reset drops content (uploads included) and effects; sessions survive so a signed-in browser
// stays signed in across test cases.
func (st *store) reset() {
	st.posts = map[int64]*post{}
	st.likes = map[int64]map[string]bool{}
	st.follows = map[string]map[string]bool{}
	st.effects = nil
	st.uploads = map[string]*upload{}
	st.submissions = map[string]int64{}
}

func (st *store) Reset() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.reset()
}

func (st *store) record(e Effect) {
	e.Seq = len(st.effects) + 1
	st.effects = append(st.effects, e)
}

func (st *store) Effects() []Effect {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Clone(st.effects)
}

func (st *store) newSession(handle string) string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	token := hex.EncodeToString(b[:])
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sessions[token] = handle
	return token
}

func (st *store) session(token string) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.sessions[token]
}

func (st *store) endSession(token string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.sessions, token)
}

// addPost commits a post (parentID 0) or a reply, with media attached in
// order. A reply needs a parent that is visible at now. Seeded posts record
// no effect and are visible at once.
func (st *store) addPost(author string, parentID int64, text string, media []attachment, at, visibleAt time.Time, seeded bool) (*post, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.addPostLocked(author, parentID, text, media, at, visibleAt, seeded, postExtra{})
}

// addSubmitted commits a form's post or reply as addPost does, with what
// the submission adds, and records its submission id. With refuseResent, a
// submission id already committed commits nothing: it returns errResent
// and a copy of the post that submission made. The check and the commit
// are one step.
func (st *store) addSubmitted(author string, parentID int64, text string, media []attachment, at, visibleAt time.Time, x postExtra, refuseResent bool) (*post, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if id, ok := st.submissions[x.Submission]; ok && refuseResent && x.Submission != "" {
		cp := *st.posts[id]
		return &cp, errResent
	}
	return st.addPostLocked(author, parentID, text, media, at, visibleAt, false, x)
}

// root returns the top-level post of the thread id is in.
func (st *store) root(id int64) int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	for range len(st.posts) {
		p, ok := st.posts[id]
		if !ok || p.ParentID == 0 {
			break
		}
		id = p.ParentID
	}
	return id
}

func (st *store) addPostLocked(author string, parentID int64, text string, media []attachment, at, visibleAt time.Time, seeded bool, x postExtra) (*post, error) {
	if parentID != 0 {
		parent, ok := st.posts[parentID]
		if !ok || (!seeded && !parent.visible(at)) {
			return nil, errNoPost
		}
	}
	st.lastID++
	p := &post{ID: st.lastID, Author: author, ParentID: parentID, Text: text, At: at, VisibleAt: visibleAt, Seeded: seeded, Media: slices.Clip(media),
		Shown: x.Shown, Category: x.Category}
	st.posts[p.ID] = p
	if x.Submission != "" {
		st.submissions[x.Submission] = p.ID
	}
	if !seeded {
		kind := EffectPost
		if parentID != 0 {
			kind = EffectReply
		}
		e := Effect{Kind: kind, Author: author, PostID: p.ID, ParentID: parentID, Text: text, At: at, Shown: x.Shown, Category: x.Category}
		for _, m := range media {
			e.Media = append(e.Media, EffectMedia{SHA256: m.SHA256, Type: m.Type, Alt: m.Alt})
		}
		st.record(e)
	}
	cp := *p
	return &cp, nil
}

// addPostOnce commits a top-level post as addPost does, unless author
// posted the same text (post or reply, seeded or not) at or after
// at-window: then it commits nothing and returns errDuplicate. A window of
// 0 never refuses. The check and the commit are one step, so two
// identical posts at once cannot both pass.
func (st *store) addPostOnce(author, text, shown string, at, visibleAt time.Time, window time.Duration) (*post, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if window > 0 {
		since := at.Add(-window)
		for _, p := range st.posts {
			if p.Author == author && p.Text == text && !p.At.Before(since) {
				return nil, errDuplicate
			}
		}
	}
	return st.addPostLocked(author, 0, text, nil, at, visibleAt, false, postExtra{Shown: shown})
}

// visiblePost returns a copy of the post with id if it is visible at now.
func (st *store) visiblePost(id int64, now time.Time) (post, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	p, ok := st.posts[id]
	if !ok || !p.visible(now) {
		return post{}, false
	}
	return *p, true
}

// newestFirst orders posts newest first; the id breaks ties so the order is
// total and stable between page loads.
func newestFirst(a, b *post) int {
	if c := b.At.Compare(a.At); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}

// timeline returns page (1-based) of the visible posts and replies by any of
// authors, newest first, and whether a later page exists.
func (st *store) timeline(authors map[string]bool, page, perPage int, now time.Time) ([]post, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	var all []*post
	for _, p := range st.posts {
		if authors[p.Author] && p.visible(now) {
			all = append(all, p)
		}
	}
	slices.SortFunc(all, newestFirst)
	start := (page - 1) * perPage
	if start >= len(all) {
		return nil, false
	}
	end := min(start+perPage, len(all))
	out := make([]post, 0, end-start)
	for _, p := range all[start:end] {
		out = append(out, *p)
	}
	return out, end < len(all)
}

// replies returns the visible direct replies to id, oldest first.
func (st *store) replies(id int64, now time.Time) []post {
	st.mu.Lock()
	defer st.mu.Unlock()
	var all []*post
	for _, p := range st.posts {
		if p.ParentID == id && p.visible(now) {
			all = append(all, p)
		}
	}
	slices.SortFunc(all, func(a, b *post) int { return newestFirst(b, a) })
	out := make([]post, len(all))
	for i, p := range all {
		out[i] = *p
	}
	return out
}

// setLike likes (on) or unlikes a visible post. It records an effect only
// when the state changed, and reports whether it did.
func (st *store) setLike(handle string, id int64, on bool, now time.Time) (bool, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	p, ok := st.posts[id]
	if !ok || !p.visible(now) {
		return false, errNoPost
	}
	set := st.likes[id]
	if set[handle] == on {
		return false, nil
	}
	if set == nil {
		set = map[string]bool{}
		st.likes[id] = set
	}
	kind := EffectUnlike
	if on {
		set[handle] = true
		kind = EffectLike
	} else {
		delete(set, handle)
	}
	st.record(Effect{Kind: kind, Author: handle, PostID: id, Target: strconv.FormatInt(id, 10), At: now})
	return true, nil
}

// likes returns the like count of id and whether handle likes it.
func (st *store) likeState(id int64, handle string) (int, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.likes[id]), st.likes[id][handle]
}

// setFollow follows (on) or unfollows target. It records an effect only when
// the state changed, and reports whether it did.
func (st *store) setFollow(handle, target string, on bool, now time.Time) (bool, error) {
	if !isAccount(target) {
		return false, errNoAccount
	}
	if handle == target {
		return false, errSelf
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	set := st.follows[handle]
	if set[target] == on {
		return false, nil
	}
	if set == nil {
		set = map[string]bool{}
		st.follows[handle] = set
	}
	kind := EffectUnfollow
	if on {
		set[target] = true
		kind = EffectFollow
	} else {
		delete(set, target)
	}
	st.record(Effect{Kind: kind, Author: handle, Target: target, At: now})
	return true, nil
}

func (st *store) following(handle, target string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.follows[handle][target]
}

// feed returns the set of authors on handle's home timeline: the account
// itself and everyone it follows.
func (st *store) feed(handle string) map[string]bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	authors := map[string]bool{handle: true}
	for h := range st.follows[handle] {
		authors[h] = true
	}
	return authors
}
