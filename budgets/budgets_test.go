package budgets_test

import (
	"errors"
	"testing"
	"time"

	"github.com/browserop/browserop/budgets"
	"github.com/stretchr/testify/require"
)

func TestNewPolicy(t *testing.T) {
	t.Parallel()
	day := 24 * time.Hour
	t.Run("OK", func(t *testing.T) {
		p, err := budgets.NewPolicy(map[string]budgets.FormatLimit{
			budgets.PostText: {Max: 8, Window: day},
			budgets.Like:     {Max: 50, Window: day},
		}, map[string]budgets.GroupLimit{
			"original": {Formats: []string{budgets.Thread, budgets.PostText, budgets.PostImage, budgets.PostText}, Max: 10, Window: day},
		})
		require.NoError(t, err)
		names := func(ls []budgets.Limit) []string {
			var out []string
			for _, l := range ls {
				out = append(out, l.Name)
			}
			return out
		}
		require.Equal(t, []string{"post_text", "original"}, names(p.For(budgets.PostText)))
		require.Equal(t, []string{"original"}, names(p.For(budgets.Thread)))
		require.Equal(t, []string{"like"}, names(p.For(budgets.Like)))
		require.Empty(t, p.For(budgets.Follow))
		require.Empty(t, p.For(""))
		require.Equal(t, []string{"post_image", "post_text", "thread"}, p.For(budgets.Thread)[0].Formats, "group formats sorted, deduplicated")
	})
	for name, tc := range map[string]struct {
		formats map[string]budgets.FormatLimit
		groups  map[string]budgets.GroupLimit
		want    string
	}{
		"UnknownFormat":     {formats: map[string]budgets.FormatLimit{"post_txt": {Max: 1, Window: day}}, want: `format "post_txt" is unknown`},
		"NegativeLimit":     {formats: map[string]budgets.FormatLimit{"like": {Max: -1, Window: day}}, want: "limit must be >= 0"},
		"ZeroWindow":        {formats: map[string]budgets.FormatLimit{"like": {Max: 1}}, want: "window must be positive"},
		"EmptyGroup":        {groups: map[string]budgets.GroupLimit{"g": {Max: 1, Window: day}}, want: "lists no formats"},
		"GroupUnknownFmt":   {groups: map[string]budgets.GroupLimit{"g": {Formats: []string{"story"}, Max: 1, Window: day}}, want: `format "story" is unknown`},
		"GroupNamedAsFmt":   {groups: map[string]budgets.GroupLimit{"like": {Formats: []string{"like"}, Max: 1, Window: day}}, want: "has the name of a format"},
		"GroupNegativeSize": {groups: map[string]budgets.GroupLimit{"g": {Formats: []string{"like"}, Max: -2, Window: day}}, want: "limit must be >= 0"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := budgets.NewPolicy(tc.formats, tc.groups)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	p, err := budgets.NewPolicy(map[string]budgets.FormatLimit{budgets.Reply: {Max: 2, Window: time.Hour}},
		map[string]budgets.GroupLimit{"social": {Formats: []string{budgets.Reply, budgets.Like}, Max: 3, Window: time.Hour}})
	require.NoError(t, err)
	counts := map[string][2]int{}
	count := func(l budgets.Limit) (int, int, error) { c := counts[l.Name]; return c[0], c[1], nil }

	require.NoError(t, p.Check(budgets.Reply, count))
	counts["reply"] = [2]int{1, 1}
	err = p.Check(budgets.Reply, count)
	require.ErrorIs(t, err, budgets.ErrExhausted, "in-flight actions count")
	var ex *budgets.Exhausted
	require.True(t, errors.As(err, &ex))
	require.Equal(t, "reply", ex.Usage.Limit.Name)
	require.Contains(t, err.Error(), "reply allows 2 per 1h0m0s, 1 used and 1 in flight")

	counts = map[string][2]int{"social": {3, 0}}
	err = p.Check(budgets.Like, count)
	require.True(t, errors.As(err, &ex))
	require.Equal(t, "social", ex.Usage.Limit.Name, "a group limit applies to each of its formats")

	boom := errors.New("disk on fire")
	err = p.Check(budgets.Like, func(budgets.Limit) (int, int, error) { return 0, 0, boom })
	require.ErrorIs(t, err, boom)

	zero, err := budgets.NewPolicy(map[string]budgets.FormatLimit{budgets.Follow: {Max: 0, Window: time.Hour}}, nil)
	require.NoError(t, err)
	require.ErrorIs(t, zero.Check(budgets.Follow, func(budgets.Limit) (int, int, error) { return 0, 0, nil }), budgets.ErrExhausted,
		"a limit of 0 forbids the format")
	require.Equal(t, 0, budgets.Usage{Limit: budgets.Limit{Max: 1}, Used: 3}.Remaining())
}
