// Package verify holds browserop's verification contracts: it compares what
// an action intended with what a site shows and classifies the outcome. It is
// pure policy: a site adapter reads the page into Items or a State, and this
// package decides whether that observation proves the action happened
// (Verified), proves it did not (Absent), proves it happened more than once
// (Duplicate), or proves nothing (Ambiguous).
//
// The rules lean one way on purpose. A vaguely similar result is never
// proof, an identical older post is never this action's result, and absence
// counts only when the view covers the whole window and the site's settle
// time has passed. When in doubt the answer is Ambiguous, which stops the
// run until reconciliation or a person decides: it is better to stop one run
// than to manufacture certainty. The zero Verdict is Ambiguous, so a
// forgotten assignment never proves anything.
//
// # When the settle time starts
//
// Absence needs a view observed at or after NotBefore + Settle, where
// NotBefore is when the action went executing. Intent.SettleFrom moves the
// start later: the caller sets it when the click may have been carried out
// after NotBefore (a browser that outlived the pass that clicked, until the
// tab it clicked in was proven gone). This package cannot know either fact;
// it only refuses to call a view settled before the later of the two.
//
// A submission that may surface later than the settle time
// (Intent.MaySurface: the site answered it by navigating on, or it timed
// out with its request possibly pending) is never proven absent by the
// settle time alone. When the site declares how late a submission can
// surface at most (Options.SurfaceWithin), a complete view observed at or
// after SettleStart() + SurfaceWithin proves it absent; without a bound
// it waits for a later look or a person. The bound counts from the same
// start as the settle time, so a click a surviving browser may still carry
// out is bounded from the proof that its tab is gone, not from the click.
//
// What the view proves depends on whose view it is. A search of the actor's
// own list shows the actor's items whoever is signed in; a like or follow
// control shows the signed-in viewer's state. Neither shows an effect that
// landed on another account, so a caller that saw another account signed in
// while the action was unsettled must not take Absent for proof.
//
// # What a proof of absence rests on
//
// An adapter is untrusted advice about a site: its selectors, transforms
// and canonical rules are a person's guess, and a wrong one must cost the
// person's attention, never a second effect (docs/design.md invariant 12).
// "No exact match" alone therefore never proves absence. Absent needs, all
// at once:
//
//  1. No exact match, no payload match without a usable URL or time, no
//     suspect identical item shortly before the action, no item with the
//     intended text and other media (above).
//  2. A complete view (the walk reached the window's start or the list's
//     end, nothing unread), observed after the settle time counted from
//     SettleStart(), and, for a submission that may surface late, after
//     the site's bound (Options.SurfaceWithin) from the same start.
//  3. No unexplained item by the actor: every item of the actor's in the
//     view is one a complete search showed before the click
//     (Intent.Seen, or the identical items of Intent.Baseline), another
//     action's recorded result (Intent.Known), or older than what the
//     search before the click covered: with Seen, dated (by the site's own
//     times, so a misread zone shifts both sides alike) before the oldest
//     item of Seen in view; without Seen, dated before the action by more
//     than Options.Skew + Options.Suspect. An item the adapter's prediction does not
//     match (a site that rewrote the text, filed a reply under another
//     parent, re-encoded the media) is such an item, and so is one
//     without a time where there is no Seen: the view cannot tell it
//     from an old one. The verdict names each (Verdict.Unexplained).
//  4. No landed link (Intent.LandedURL): the page the submission landed
//     on named a result, so the search that does not show it is wrong,
//     or the item went away; either way a person looks.
//  5. A view that shows it can see: at least one item of the actor's in
//     it is known to be there (in Seen, Baseline or Known, or older than
//     the action), or it is empty and the site counted the items it lists
//     as none (Search.Counted). A search whose item selector matches
//     nothing, whose author field reads a display name instead of the
//     handle, or whose list is empty, proves nothing.
//
// What absence then proves: that the site shows, in the actor's list, no
// item made after the click that is not accounted for. It does not prove
// that the adapter's prediction of the text is right: it does not need to,
// since any item the actor gained is either explained or holds the
// verdict. What it still rests on: that the list is the actor's (an
// effect on another account is the operator's other-accounts rule), that
// the walk's completeness is true (a list cut short without saying so, or
// walked in the wrong order, hides the item from every rule here), and
// that the site does not hide an item from its author's own list.
//
// Not every definitive failure after a click is an absence this package
// proves. A click the browser proved sent nothing (browser.ErrNotSent: no
// request, socket, frame or worker left the page from the press until it
// was torn down) never reaches verification: it rests on what the browser
// saw, not on what the site shows, and its limits are the browser's
// (docs/decisions/2026-12-03-not-sent-proof.md).
//
// # Text normalization
//
// Normalize is the only transformation applied before two texts are
// compared, and it removes only differences a site's rendering introduces
// without the author's say:
//
//  1. Unicode NFC (canonical composition): "e" + U+0301 equals "é".
//  2. Line endings: CRLF and lone CR become LF.
//  3. Within each line, every run of horizontal whitespace (space, tab, and
//     every Unicode Zs character such as NBSP U+00A0 or U+3000) becomes one
//     ASCII space, and horizontal whitespace at the end of a line is removed.
//  4. Leading and trailing whitespace of the whole text (unicode.IsSpace,
//     which includes newlines) is removed.
//
// Nothing else changes: letter case, punctuation, emoji, zero-width
// characters, blank lines between paragraphs and invalid UTF-8 bytes are
// kept exactly, so "Hello" and "hello" are different texts.
//
// # Without per-item times
//
// Some lists show no time per item, or no author (a list that is the
// actor's own, such as "my comments"). Verification then rests on two
// things instead of times: the baseline (Intent.Baseline: the canonical
// URLs of the items identical to the intent that a complete list showed
// just before the click) and the list's completeness.
//
// What is then proven: an item identical to the intent (same author: on a
// list that is the actor's own and names no author, the adapter reports
// the actor; same text after Normalize, same media, same parent) whose
// canonical URL is not in the baseline appeared after the baseline was
// read, and it is taken for this action's result; two such items are a
// Duplicate. Absence needs the whole list read to its end (Search.Complete
// because the walk reached the last page, not because it passed a time):
// no time bounds the window, so a list cut short proves nothing, however
// old its last item looks. An item without a time or without a usable URL
// that matches the payload is never a match and keeps the verdict
// Ambiguous, as anywhere.
//
// What is not proven: who made the item. An identical item made by
// someone else on the same account between the baseline and the click (the
// person typing the same text by hand in another tab) is indistinguishable
// from this action's result; with no author on the list, so is one made
// under the same list by another account that the list does not name.
// Without a baseline (the search before the click failed or was
// incomplete) and without times, an identical item proves nothing at all
// and the verdict stays Ambiguous.
//
// # Entry fields
//
// An action's entry fields (Intent.Fields: a category, tags) are part of
// its payload. An item that shows a field the intent sets (Item.Fields
// has its name) matches only when it shows exactly the intended texts,
// each once, in any order, after Normalize (SameFields); a field the
// intent does not set is never compared. An item with the intended
// author, text and parent and other texts for a field is never a match,
// and, like an item with other media, never lets a view prove absence nor
// another exact match verify the action: the site may have set the fields
// otherwise on this action's result, and a person decides.
//
// What is proven, then, depends on what the adapter reads. Where the
// result or the search reads a field (entry_fields), Verified proves the
// item shows the intended texts for it. Where nothing reads it, Verified
// proves the text, author, parent and media only: the field rests on the
// read-back before the click (the page showed each text set, the
// adapter's check), and a site that changes it after the click cannot be
// caught. A landed result that shows other texts for a field contradicts
// the intent (CheckLandedResult).
//
// # Media
//
// An action's media are part of its payload: an exact match shows as many
// media items as the intent attaches, in the same order, each of the
// intended type (SameMedia). Where the page shows alt texts (an img's alt
// attribute, Media.AltShown), each equals the intended alt text after
// Normalize; an item with no media matches only an intent with none.
//
// An item with the intended author, text and parent but other media (one
// image fewer, a type the site re-encoded to, an alt text the site
// dropped) is not a match, so it never verifies the action; and since it
// may be this action's result as the site changed it, its presence never
// lets a view prove absence either, nor lets another exact match verify
// it: the verdict stays Ambiguous and a person decides. Without a
// baseline, such an item shortly before the action (in Options.Suspect
// before NotBefore - Skew) casts the same doubt as an identical one, and
// one older than that is an older post; an item in the baseline is one
// too. A baseline needs every such item's canonical URL: a search that
// shows one without it gives no baseline.
//
// What is proven when a site hides alt texts (the adapter declares
// hides_alt, so AltShown is false): the count and the type of each item,
// in order, and nothing about alt texts. The operator then relies on the
// read-back before the click (the composer held the intended alt text for
// each attached item) for them; a site that drops an alt text after the
// click cannot be caught on such a site. Types are read from what the page
// shows (a file extension in the image's URL, a MIME type, or a type
// name); the bytes are not compared, so two different images of one type
// under the same text and alt texts are indistinguishable here, and the
// intended bytes are pinned by the idempotency key instead (their SHA-256
// is in the payload).
//
// # Text transforms
//
// The text compared is the intended text as the site renders it: the
// operator passes the intent's text through the site adapter's Expected
// (fields joined as the site shows them, a signature appended, a link
// shortened, as the adapter declares) before it reaches Intent.Text, and
// Normalize is applied to both sides on top. A match then proves that the
// site shows the text the adapter predicts for this intent, by this actor,
// under this parent; it proves the intent was published only as far as
// the prediction is right.
//
// The risk is a transform declared too broadly: one that maps two
// different texts to the same rendering (dropping characters, truncating,
// folding case) makes them compare equal, so another item could verify
// this action, or hide its absence behind an older twin. A transform must
// be as narrow as what the site really does; verify cannot check that, and
// compares exactly what it is given.
//
// # URL normalization
//
// NormalizeURL canonicalizes http and https URLs for comparing permalinks
// and parents, removing only differences that cannot name another
// resource: the scheme and host are lowercased, a default port (80 for
// http, 443 for https) is dropped, an empty path becomes "/", and an empty
// query or fragment (a bare "?" or "#") is dropped. The path, query
// (including parameter order), fragment and user information are kept
// exactly: reordering or dropping query parameters could make two different
// resources compare equal, which would turn a Duplicate into a Verified or
// accept a wrong parent. Anything that is not an absolute http(s) URL is
// returned with surrounding spaces trimmed and otherwise unchanged.
//
// The fragment is kept because which parts of a URL identify a result is
// the site's to say, not this package's: a comment's permalink is often
// its post's URL plus "#comment-12", and two comments on one post differ
// only there. The site adapter decides (sites.Adapter.CanonicalFor, and the
// links its Result and Search read): it keeps a fragment it declares as
// identifying and drops any other before verify sees the URL. A fragment
// that reaches this package is part of the result's identity, so two URLs
// that differ only in it are two results.
package verify
