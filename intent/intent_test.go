package intent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/kind"
	"github.com/stretchr/testify/require"
)

// A request's JSON is the task ledger's record of it: it decodes and
// encodes again to the same bytes, so the same request stays the same
// intent.
func TestRequestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		`{"site":"demo","actor":"@alice","type":"post","text":"hi"}`,
		`{"site":"demo","actor":"alice","type":"reply","target":"http://127.0.0.1/p/1","text":"re","media":[{"file":"a.png","alt":"A","sha256":"ab","type":"png"}]}`,
		`{"site":"demo","actor":"alice","type":"thread","parts":["a","b"],"part_media":[[],[{"file":"b.png"}]]}`,
		`{"site":"demo","actor":"alice","type":"like","target":"http://127.0.0.1/p/1"}`,
		`{"site":"demo","actor":"alice","type":"follow","target":"http://127.0.0.1/u/bob"}`,
		`{"site":"demo","actor":"alice","type":"teleport"}`,
	} {
		var r intent.Request
		require.NoError(t, json.Unmarshal([]byte(raw), &r), raw)
		out, err := json.Marshal(r)
		require.NoError(t, err)
		require.Equal(t, raw, string(out))
	}
}

// A type is the kind of the actions it is performed as; its word is the
// one a request is written with.
func TestType(t *testing.T) {
	t.Parallel()
	for word, k := range map[string]kind.Kind{"post": kind.Post, "reply": kind.Reply, "thread": kind.ThreadPart,
		"like": kind.Like, "follow": kind.Follow} {
		typ := intent.ParseType(word)
		require.True(t, typ.Known(), word)
		require.Equal(t, k, typ.Kind, word)
		require.Equal(t, word, typ.String())
		require.Equal(t, word == "thread", typ.IsThread(), word)
	}
	require.Equal(t, intent.Thread, intent.ParseType("thread"))
	for _, word := range []string{"", "thread_part", "Post", "teleport"} {
		typ := intent.ParseType(word)
		require.False(t, typ.Known(), word)
		require.Equal(t, word, typ.String(), "an unknown word is kept as written")
	}
	var r intent.Request
	require.NoError(t, json.Unmarshal([]byte(`{"site":"demo","actor":"alice","type":"thread_part"}`), &r))
	require.Equal(t, "type", r.Check("part_media").Field, "the ledger's word for a thread part is no request type")
}

func TestCheck(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", intent.MaxTextRunes+1)
	m := []intent.Media{{File: "a.png"}}
	base := intent.Request{Site: "demo", Actor: "alice"}
	with := func(f func(*intent.Request)) intent.Request {
		r := base
		f(&r)
		return r
	}
	for _, ok := range []intent.Request{
		with(func(r *intent.Request) { r.Type, r.Text = intent.Post, "hi" }),
		with(func(r *intent.Request) { r.Type, r.Text, r.Media = intent.Post, "hi", m }),
		with(func(r *intent.Request) { r.Type, r.Text, r.Target = intent.Reply, "hi", "https://x.test/p/1" }),
		with(func(r *intent.Request) { r.Type, r.Parts = intent.Thread, []string{"a", "b"} }),
		with(func(r *intent.Request) {
			r.Type, r.Parts, r.Target, r.PartMedia = intent.Thread, []string{"a", "b"}, "http://x.test/p/1", [][]intent.Media{nil, m}
		}),
		with(func(r *intent.Request) { r.Type, r.Target = intent.Like, "http://x.test/p/1" }),
		with(func(r *intent.Request) { r.Type, r.Target = intent.Follow, "http://x.test/u/bob" }),
	} {
		require.Nil(t, ok.Check("part_media"), "%+v", ok)
	}
	for _, tt := range []struct {
		r            intent.Request
		field, error string
	}{
		{intent.Request{Actor: "a", Type: intent.Post, Text: "x"}, "site", "site is required"},
		{with(func(r *intent.Request) { r.Actor, r.Type, r.Text = "@", intent.Post, "x" }), "actor", "actor is required"},
		{with(func(r *intent.Request) { r.Type = intent.ParseType("teleport") }), "type", `type "teleport" is not one of post, reply, thread, like, follow`},
		{with(func(r *intent.Request) { r.Type, r.Text = intent.Reply, "x" }), "target", "a reply needs target"},
		{with(func(r *intent.Request) { r.Type, r.Text, r.Target = intent.Post, "x", "http://x.test/" }), "target", "a post takes no target"},
		{with(func(r *intent.Request) { r.Type, r.Parts, r.Target = intent.Thread, []string{"a", "b"}, "ftp://x" }), "target", "is not an absolute http(s) URL"},
		{with(func(r *intent.Request) { r.Type, r.Text = intent.Post, " " }), "text", "text is empty"},
		{with(func(r *intent.Request) { r.Type, r.Text = intent.Post, long }), "text", "longer than 10000"},
		{with(func(r *intent.Request) { r.Type, r.Text = intent.Post, "\xff" }), "text", "not valid UTF-8"},
		{with(func(r *intent.Request) { r.Type, r.Text, r.Parts = intent.Post, "x", []string{"a"} }), "parts", "takes text, not parts"},
		{with(func(r *intent.Request) { r.Type, r.Parts = intent.Thread, []string{"a"} }), "parts", "at least 2 parts, got 1"},
		{with(func(r *intent.Request) { r.Type, r.Parts = intent.Thread, []string{"a", ""} }), "parts", "parts[1] is empty"},
		{with(func(r *intent.Request) { r.Type, r.Text, r.Parts = intent.Thread, "x", []string{"a", "b"} }), "text", "takes parts, not text"},
		{with(func(r *intent.Request) { r.Type, r.Target, r.Text = intent.Like, "http://x.test/p/1", "x" }), "text", "a like takes no text"},
		{with(func(r *intent.Request) { r.Type, r.Parts, r.Media = intent.Thread, []string{"a", "b"}, m }), "media", "media per part (part_media)"},
		{with(func(r *intent.Request) { r.Type, r.Target, r.Media = intent.Follow, "http://x.test/u/b", m }), "media", "a follow takes no media"},
		{with(func(r *intent.Request) { r.Type, r.Text, r.PartMedia = intent.Post, "x", [][]intent.Media{m} }), "part_media", "only a thread does"},
		{with(func(r *intent.Request) {
			r.Type, r.Parts, r.PartMedia = intent.Thread, []string{"a", "b"}, [][]intent.Media{nil, nil, m}
		}), "part_media", "media for 3 parts, the thread has 2"},
	} {
		p := tt.r.Check("part_media")
		require.NotNil(t, p, tt.error)
		require.Equal(t, tt.field, p.Field, tt.error)
		require.ErrorContains(t, p, tt.error)
	}
	p := with(func(r *intent.Request) { r.Type, r.Parts, r.Media = intent.Thread, []string{"a", "b"}, m }).Check("parts")
	require.ErrorContains(t, p, "media per part (parts)", "the name per-part media have where the request was written")
}

// Normalized drops what does not change a request: trailing parts with
// no media, and empty lists. The actor is kept as written.
func TestNormalized(t *testing.T) {
	t.Parallel()
	m := []intent.Media{{File: "a.png"}}
	r := intent.Request{Actor: "@alice", Media: []intent.Media{}, PartMedia: [][]intent.Media{nil, m, {}, nil}}.Normalized()
	require.Equal(t, "@alice", r.Actor)
	require.Nil(t, r.Media)
	require.Equal(t, [][]intent.Media{nil, m}, r.PartMedia)
	require.Nil(t, intent.Request{PartMedia: [][]intent.Media{{}, nil}}.Normalized().PartMedia)
}

func TestEffects(t *testing.T) {
	t.Parallel()
	require.Equal(t, 3, intent.Request{Type: intent.Thread, Parts: []string{"a", "b", "c"}}.Effects())
	require.Equal(t, 1, intent.Request{Type: intent.Post, Text: "x"}.Effects())
	require.Equal(t, 1, intent.Request{Type: intent.Like}.Effects())
}

// Fields.Check names the field at fault and what is wrong with it, and
// takes fields that are right.
func TestFieldsCheck(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", intent.MaxFieldTextRune+1)
	many := make([]string, intent.MaxFieldItems+1)
	for i := range many {
		many[i] = strings.Repeat("t", i+1)
	}
	for _, tc := range []struct {
		f          intent.Fields
		field, err string
	}{
		{intent.Fields{"category": intent.Text("News"), "tags": intent.List("a", "b")}, "", ""},
		{intent.Fields{"Category": intent.Text("News")}, "Category", "must be lowercase letters"},
		{intent.Fields{"tags": intent.List()}, "tags", "tags is an empty list"},
		{intent.Fields{"tags": intent.List(many...)}, "tags", "lists 51 texts, at most 50"},
		{intent.Fields{"category": {Texts: []string{"a", "b"}}}, "category", "category is not one text"},
		{intent.Fields{"category": intent.Text(" ")}, "category", "entry field category is empty"},
		{intent.Fields{"category": intent.Text("News ")}, "category", "entry field category starts or ends with a space"},
		{intent.Fields{"tags": intent.List("a", " b")}, "tags", "entry field tags[1] starts or ends with a space"},
		{intent.Fields{"category": intent.Text("\xff")}, "category", "not valid UTF-8"},
		{intent.Fields{"category": intent.Text(long)}, "category", "longer than 200 characters"},
		{intent.Fields{"category": intent.Text("a\nb")}, "category", "a line break or a control character"},
		{intent.Fields{"tags": intent.List("a", "b", "a")}, "tags", `tags lists "a" twice`},
	} {
		field, err := tc.f.Check()
		require.Equal(t, tc.field, field, "%v", tc.f)
		if tc.err == "" {
			require.NoError(t, err)
			continue
		}
		require.ErrorContains(t, err, tc.err)
	}
}
