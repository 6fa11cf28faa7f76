package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/browserop/browserop/ledger"
)

// GET and PUT /v1/config/cleanup: unknown until the person sets it, set
// with the user token to one of the three values and read back from the
// ledger under the daemon's profile; an agent token is refused and
// changes nothing; a value outside the three (unknown included) is a
// usage error and changes nothing.
func TestCleanupPreferenceEndpoint(t *testing.T) {
	e := newEnv(t).start()
	var set ledger.CleanupSetting
	r := e.do(req{method: "GET", path: "/v1/config/cleanup", token: e.user})
	want(t, r, http.StatusOK, "")
	r.into(t, &set)
	if set.Known() || set.Profile != testProfile || set.SetAt != nil {
		t.Fatalf("before anyone chose: %+v", set)
	}

	// The agent may neither read nor set it.
	want(t, e.do(req{method: "GET", path: "/v1/config/cleanup", token: e.agent}), http.StatusForbidden, "forbidden")
	want(t, e.do(req{method: "PUT", path: "/v1/config/cleanup", token: e.agent,
		body: CleanupRequest{Preference: "submitted_and_probe_blockers"}}), http.StatusForbidden, "forbidden")
	if got, _ := e.db.CleanupSettingOf(e.ctx, testProfile); got.Known() {
		t.Fatalf("an agent token set the preference: %+v", got)
	}

	for _, bad := range []string{"", "always", "NEVER"} {
		r := e.do(req{method: "PUT", path: "/v1/config/cleanup", token: e.user, body: CleanupRequest{Preference: bad}})
		want(t, r, http.StatusBadRequest, "usage")
		if !strings.Contains(r.message(), "submitted_only") {
			t.Fatalf("the refusal does not list the values: %q", r.message())
		}
	}
	want(t, e.do(req{method: "PUT", path: "/v1/config/cleanup", token: e.user, body: `{"preference": "never", "x": 1}`}),
		http.StatusBadRequest, "bad_json")
	if got, _ := e.db.CleanupSettingOf(e.ctx, testProfile); got.Known() {
		t.Fatalf("a refused request set the preference: %+v", got)
	}

	r = e.do(req{method: "PUT", path: "/v1/config/cleanup", token: e.user, body: CleanupRequest{Preference: "submitted_only"}})
	want(t, r, http.StatusOK, "")
	set = ledger.CleanupSetting{}
	r.into(t, &set)
	if set.Preference != ledger.CleanupSubmittedOnly || set.SetBy != "api" || set.SetAt == nil {
		t.Fatalf("answered %+v", set)
	}
	got, err := e.db.CleanupSettingOf(e.ctx, testProfile)
	if err != nil || got.Preference != ledger.CleanupSubmittedOnly {
		t.Fatalf("the ledger holds %+v, %v", got, err)
	}
	r = e.do(req{method: "GET", path: "/v1/config/cleanup", token: e.user})
	want(t, r, http.StatusOK, "")
	set = ledger.CleanupSetting{}
	r.into(t, &set)
	if set.Preference != ledger.CleanupSubmittedOnly {
		t.Fatalf("read back %+v", set)
	}
	// Another profile's preference is untouched.
	if other, _ := e.db.CleanupSettingOf(e.ctx, "/profiles/other"); other.Known() {
		t.Fatalf("another profile got %+v", other)
	}
	// DELETE is not a way back to unknown.
	want(t, e.do(req{method: "DELETE", path: "/v1/config/cleanup", token: e.user}), http.StatusMethodNotAllowed, "method_not_allowed")
}

// A daemon that keeps no preference says so.
func TestCleanupPreferenceNotConfigured(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Cleanup = nil }).start()
	want(t, e.do(req{method: "GET", path: "/v1/config/cleanup", token: e.user}), http.StatusNotFound, "not_configured")
}
