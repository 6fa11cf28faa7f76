package demosite_test

import (
	"net/url"
	"testing"

	"github.com/browserop/browserop/demosite"
	"github.com/stretchr/testify/require"
)

// ?draft= starts the compose and reply editors with a draft, escaped as
// page text and kept as it is (no script guards it); without it they
// start empty, and editor_append's saved draft comes first.
func TestRestoredDraft(t *testing.T) {
	t.Parallel()
	st, alice := siteWithPost(t, demosite.Faults{})
	q := "?draft=" + url.QueryEscape(`the person's <b>unsent</b> draft`)
	compose := alice.get("/compose" + q).Body
	require.Contains(t, compose, "<textarea id=\"compose-text\" name=\"text\" rows=\"6\">\nthe person&#39;s &lt;b&gt;unsent&lt;/b&gt; draft</textarea>")
	require.NotContains(t, compose, "var D =", "nothing guards it")
	permalink := alice.get("/p/1" + q).Body
	require.Contains(t, permalink, "<textarea id=\"reply-text\" name=\"text\" rows=\"4\">\nthe person&#39;s &lt;b&gt;unsent&lt;/b&gt; draft</textarea>")
	require.Contains(t, alice.get("/compose").Body, "<textarea id=\"compose-text\" name=\"text\" rows=\"6\">\n</textarea>")

	require.NoError(t, st.SetFaults(demosite.Faults{EditorAppend: true}))
	require.Regexp(t, composeDraftRE, alice.get("/compose"+q).Body)
}
