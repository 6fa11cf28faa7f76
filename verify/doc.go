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
// What the view proves depends on whose view it is. A search of the actor's
// own list shows the actor's items whoever is signed in; a like or follow
// control shows the signed-in viewer's state. Neither shows an effect that
// landed on another account, so a caller that saw another account signed in
// while the action was unsettled must not take Absent for proof.
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
// only there. The site adapter decides (sites.Adapter.Canonical, and the
// links its Result and Search read): it keeps a fragment it declares as
// identifying and drops any other before verify sees the URL. A fragment
// that reaches this package is part of the result's identity, so two URLs
// that differ only in it are two results.
package verify
