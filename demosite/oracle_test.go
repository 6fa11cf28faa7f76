package demosite_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/browserop/browserop/demosite"
	"github.com/stretchr/testify/require"
)

func TestOracleHTTP(t *testing.T) {
	t.Parallel()
	st := newSite(t, demosite.Faults{Injection: true})
	c := st.client(t)

	t.Run("Effects", func(t *testing.T) {
		res := c.get("/_oracle/effects")
		require.Equal(t, http.StatusOK, res.Status)
		require.Equal(t, "application/json", res.Header.Get("Content-Type"))
		require.JSONEq(t, `[]`, res.Body)

		st.as(t, "alice").compose("over http")
		res = c.get("/_oracle/effects")
		var got []demosite.Effect
		require.NoError(t, json.Unmarshal([]byte(res.Body), &got))
		require.Equal(t, st.Effects(), got)
		require.Contains(t, res.Body, `"post_id": 1`)
		require.Contains(t, res.Body, `"at": "2026-11-30T10:00:00.123Z"`)
	})

	t.Run("Faults", func(t *testing.T) {
		res := c.get("/_oracle/faults")
		require.Equal(t, http.StatusOK, res.Status)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(res.Body), &got))
		require.Len(t, got, len(demosite.FaultNames()))
		require.Equal(t, true, got["injection"])

		res = c.send(http.MethodPut, "/_oracle/faults", `{"captcha":true,"visibility_delay":"2s"}`)
		require.Equal(t, http.StatusOK, res.Status)
		require.Equal(t, demosite.Faults{Captcha: true, VisibilityDelay: 2 * time.Second}, st.Faults(), "PUT replaces every switch")

		res = c.send(http.MethodPatch, "/_oracle/faults", `{"switch_account":"carol"}`)
		require.Equal(t, http.StatusOK, res.Status)
		require.Equal(t, demosite.Faults{Captcha: true, VisibilityDelay: 2 * time.Second, SwitchAccount: "carol"}, st.Faults(), "PATCH merges")
	})

	t.Run("ErrUnknownFault", func(t *testing.T) {
		before := st.Faults()
		res := c.send(http.MethodPut, "/_oracle/faults", `{"captcha":true,"no_such_fault":true}`)
		require.Equal(t, http.StatusBadRequest, res.Status)
		require.Contains(t, res.Body, "no_such_fault")
		require.Equal(t, before, st.Faults(), "nothing changed")

		for _, body := range []string{`{"slow":"fast"}`, `{"switch_account":"zed"}`, `{"offsite_redirect":"/x"}`, `not json`} {
			res = c.send(http.MethodPut, "/_oracle/faults", body)
			require.Equal(t, http.StatusBadRequest, res.Status, body)
			require.Contains(t, res.Body, `"error"`, body)
		}
		require.Equal(t, before, st.Faults())
	})

	t.Run("Seed", func(t *testing.T) {
		require.NoError(t, st.SetFaults(demosite.Faults{}))
		n := len(st.Effects())
		res := c.send(http.MethodPost, "/_oracle/seed", `{"author":"bob","text":"older","at":"2026-11-01T08:00:00.5Z"}`)
		require.Equal(t, http.StatusCreated, res.Status)
		var created struct{ ID int64 }
		require.NoError(t, json.Unmarshal([]byte(res.Body), &created))
		require.Positive(t, created.ID)
		require.Len(t, st.Effects(), n, "seeding is not an effect")
		as := articles(c.get("/u/bob").Body)
		require.Len(t, as, 1)
		require.Equal(t, "older", as[0].Text)
		require.Equal(t, "2026-11-01T08:00:00.500Z", as[0].Datetime)

		res = c.send(http.MethodPost, "/_oracle/seed", `{"author":"bob","text":"seeded reply","parent_id":1}`)
		require.Equal(t, http.StatusCreated, res.Status)
		require.Len(t, articles(c.get("/u/bob").Body), 2)

		for _, body := range []string{`{"author":"zed","text":"x"}`, `{"author":"bob","text":"x","extra":1}`, `{"author":"bob","text":"x","parent_id":999}`} {
			res = c.send(http.MethodPost, "/_oracle/seed", body)
			require.Equal(t, http.StatusBadRequest, res.Status, body)
		}
	})

	t.Run("Reset", func(t *testing.T) {
		require.NotEmpty(t, st.Effects())
		res := c.send(http.MethodPost, "/_oracle/reset", "")
		require.Equal(t, http.StatusNoContent, res.Status)
		require.Empty(t, st.Effects())
		require.Equal(t, demosite.Faults{Injection: true}, st.Faults())
		for _, a := range articles(c.get("/u/bob").Body) {
			require.Equal(t, "mallory", a.Author, "only the injected post is left")
		}
	})

	t.Run("ErrMethodAndPath", func(t *testing.T) {
		require.Equal(t, http.StatusMethodNotAllowed, c.send(http.MethodPost, "/_oracle/effects", "").Status)
		require.Equal(t, http.StatusNotFound, c.get("/_oracle/nothing").Status)
	})
}
