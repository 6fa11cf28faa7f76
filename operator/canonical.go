package operator

import (
	"errors"
	"fmt"
	"slices"

	"github.com/browserop/browserop/sites"
	"github.com/browserop/browserop/verify"
)

// rewrittenResult says why a verified result link cannot be recorded yet,
// "" when it can. A link the adapter's canonical rule changed (a dropped
// fragment, query parameter or path part: sites.Item.Rewritten) is the
// adapter's word that the changed form names the same item; a rule that
// drops an id makes every permalink one URL, and the one item a fresh
// account's list holds would verify at the list's address. So the link is
// opened, in the pass's tab, and must show one result whose fields are the
// intended ones (its text read, nothing read contradicting the intent, its
// own link the same URL, and the intended parent when the intent has
// one). Anything else leaves the action ambiguous, for a person to settle
// with the link the page named (docs/design.md invariant 12).
func (p *pass) rewrittenResult(st *siteTab, in intent, vin verify.Intent, res sites.SearchResult, url, id string) string {
	var it *sites.Item
	for i := range res.Items {
		if verify.NormalizeURL(res.Items[i].Link) == url && res.Items[i].Rewritten() {
			it = &res.Items[i]
			break
		}
	}
	if it == nil {
		return ""
	}
	head := fmt.Sprintf("the result link %s is the adapter's canonical form of %s (its canonical rule changed the link the page named)",
		printable(url), printable(it.RawLink))
	settle := fmt.Sprintf(": the rule may drop what identifies the item; a person checks it and settles the action with browserop actions resolve %s --verified URL", id)
	status, obs, err := p.resultAt(st, in, url)
	switch {
	case errors.Is(err, errOffSite):
		return head + ", which is not on the site: it was not opened" + settle
	case errors.Is(err, errNotOpened):
		return head + "; opening it failed (" + errorClass(err) + ")" + settle
	case status >= 400:
		return fmt.Sprintf("%s, which answers %d", head, status) + settle
	case err != nil:
		return fmt.Sprintf("%s; what it shows (status %d) could not be read as one result (%s)", head, status, errorClass(err)) + settle
	case !slices.Contains(obs.Read, "text"):
		return head + "; the site's result fields read no text there" + settle
	}
	if why := verify.CheckLandedResult(vin, obs.LandedResult()); why != "" {
		return head + ", where " + why + settle
	}
	if slices.Contains(obs.Read, "link") && verify.NormalizeURL(obs.URL) != url {
		return fmt.Sprintf("%s, which shows a result linked as %s", head, printable(obs.URL)) + settle
	}
	if want := verify.NormalizeURL(vin.ExpectedParent); want != "" &&
		(!slices.Contains(obs.Read, "parent") || verify.NormalizeURL(obs.Parent) != want) {
		return head + ", where the result's parent is not the intended one, or not read" + settle
	}
	return ""
}
