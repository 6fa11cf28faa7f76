// Package demosite is a small microblog with fault switches: the target that
// browserop is demonstrated against and the oracle its tests count effects
// with.
//
// Its markup is a contract, written down in docs/demosite.md: the bundled site
// adapter and the browser tests rely on the ids, classes and data attributes
// it renders. The store is in memory and guarded by a mutex; nothing survives
// the process. demosite imports no other package of browserop.
//
// Besides the classic forms it has the composers of modern publishing UIs:
// /compose/rich (contenteditable title and blocks, a confirmation panel,
// publishing through the JSON API POST /api/posts with fetch and
// history.replaceState) and /compose/frame (the editor in a same-origin
// iframe, as TinyMCE's).
//
// The compose and reply forms take up to four images with alt text: the page
// uploads a chosen file at once (POST /media, fetch) and the form carries the
// upload's id, as X, Bluesky and Mastodon do.
//
// Every committed side effect (post, reply, like, unlike, follow, unfollow) is
// recorded as an [Effect], a post's images as [EffectMedia]. Tests read them through [Server.Effects] or, when
// the server was built with [Options.Oracle], through GET /_oracle/effects.
// [Faults] switch on misbehaviour that browserop must survive without ever
// doing anything twice: lost responses, hung requests, delayed visibility,
// blocker screens, a different signed-in account, prompt injection, an
// editor that keeps a saved draft in front of whatever is typed, and uploads
// that fail, are slow, lose their alt text or are re-encoded. Others are
// site behaviours an adapter may get wrong (docs/demosite.md, "Site
// behaviours"): text rewritten on save, a list that stops at the newest N,
// a resent submission answered with an edit conflict, a theme that renames
// list items, compact replies without some fields, times shown in another
// zone, permalinks with the id in the query, replies flattened to their
// thread's root, lists and a form's panel drawn late.
package demosite
