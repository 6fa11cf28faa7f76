package mwsite

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	_ "github.com/mattn/go-sqlite3" // the driver of the wiki's SQLite database
)

// The wiki's database is one SQLite file in rollback-journal mode (MediaWiki
// 1.39 sets no journal_mode): the web server commits an edit before it
// answers, and a reader sees every commit. The site reads it through a
// read-only connection whose busy timeout waits out a write in progress
// (MediaWiki runs deferred updates and jobs after it answered).

// openDB opens the SQLite database at path read-only.
func openDB(path string) (*sql.DB, error) {
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro&_busy_timeout=10000"}
	db, err := sql.Open("sqlite3", u.String())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// Query runs one SQL statement on the wiki's database (read-only) and
// returns its rows as strings; args fill its ? placeholders. A NULL reads
// "NULL". MediaWiki's tables are unprefixed: page, revision, actor, slots,
// content, text, watchlist, user, recentchanges.
func (s *Site) Query(ctx context.Context, query string, args ...any) ([][]string, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("mwsite: query: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("mwsite: query: %w", err)
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("mwsite: query: %w", err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mwsite: query: %w", err)
	}
	return out, nil
}

// Count runs a query that returns one integer (SELECT COUNT(*) ...), with
// arguments as Query's.
func (s *Site) Count(ctx context.Context, query string, args ...any) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("mwsite: count: %w", err)
	}
	return n, nil
}

// ErrNoPage is returned by PageText for a title the wiki has no page of.
var ErrNoPage = errors.New("mwsite: no such page")

// pageID returns the page ID of title, 0 when there is no such page.
func (s *Site) pageID(ctx context.Context, title string) (int, error) {
	ns, key, err := splitTitle(title)
	if err != nil {
		return 0, err
	}
	var id int
	err = s.db.QueryRowContext(ctx, "SELECT page_id FROM page WHERE page_namespace = ? AND page_title = ?", ns, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("mwsite: page %q: %w", title, err)
	}
	return id, nil
}

// PageExists reports whether the wiki has a page titled title (in
// MediaWiki's sense: "foo_bar" is "Foo bar", "talk:x" is "Talk:X").
func (s *Site) PageExists(ctx context.Context, title string) (bool, error) {
	id, err := s.pageID(ctx, title)
	return id != 0, err
}

// PageText returns the wikitext of title's current revision, or an error
// wrapping ErrNoPage when there is no such page.
func (s *Site) PageText(ctx context.Context, title string) (string, error) {
	ns, key, err := splitTitle(title)
	if err != nil {
		return "", err
	}
	// A revision's text is the main slot's content, whose address tt:N
	// names row N of the text table.
	var text []byte
	var flags string
	err = s.db.QueryRowContext(ctx, `SELECT t.old_text, t.old_flags FROM page p
		JOIN slots s ON s.slot_revision_id = p.page_latest
		JOIN slot_roles r ON r.role_id = s.slot_role_id AND r.role_name = 'main'
		JOIN content c ON c.content_id = s.slot_content_id
		JOIN text t ON c.content_address = 'tt:' || t.old_id
		WHERE p.page_namespace = ? AND p.page_title = ?`, ns, key).Scan(&text, &flags)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w: %q", ErrNoPage, title)
	}
	if err != nil {
		return "", fmt.Errorf("mwsite: text of %q: %w", title, err)
	}
	return decodeText(text, flags)
}

// decodeText returns the text of a text table row from old_text and its
// old_flags: utf-8 (the site's), or gzip (raw DEFLATE, $wgCompressRevisions).
// Serialized objects and external storage are not the site's.
func decodeText(text []byte, flags string) (string, error) {
	for _, f := range strings.Split(flags, ",") {
		switch strings.TrimSpace(f) {
		case "", "utf-8", "utf8":
		case "gzip":
			b, err := io.ReadAll(flate.NewReader(bytes.NewReader(text)))
			if err != nil {
				return "", fmt.Errorf("mwsite: inflate revision text: %w", err)
			}
			text = b
		default:
			return "", fmt.Errorf("mwsite: revision text with flags %q", flags)
		}
	}
	return string(text), nil
}

// RevisionCount returns how many revisions title has (0 for no page): a
// save that changes nothing (a null edit) adds none.
func (s *Site) RevisionCount(ctx context.Context, title string) (int, error) {
	ns, key, err := splitTitle(title)
	if err != nil {
		return 0, err
	}
	return s.Count(ctx, `SELECT COUNT(*) FROM revision r JOIN page p ON p.page_id = r.rev_page
		WHERE p.page_namespace = ? AND p.page_title = ?`, ns, key)
}

// RevisionsBy returns how many revisions of title user made: user is a
// login (UserName(user) is MediaWiki's name) or the IP address of an
// anonymous edit.
func (s *Site) RevisionsBy(ctx context.Context, title, user string) (int, error) {
	ns, key, err := splitTitle(title)
	if err != nil {
		return 0, err
	}
	return s.Count(ctx, `SELECT COUNT(*) FROM revision r JOIN page p ON p.page_id = r.rev_page
		JOIN actor a ON a.actor_id = r.rev_actor
		WHERE p.page_namespace = ? AND p.page_title = ? AND a.actor_name = ?`, ns, key, UserName(user))
}

// Watched reports whether title is on user's watchlist (MediaWiki watches
// a page and its talk page together). A user the wiki does not have is an
// error.
func (s *Site) Watched(ctx context.Context, user, title string) (bool, error) {
	ns, key, err := splitTitle(title)
	if err != nil {
		return false, err
	}
	var id int
	err = s.db.QueryRowContext(ctx, "SELECT user_id FROM user WHERE user_name = ?", UserName(user)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("mwsite: no user %q", UserName(user))
	}
	if err != nil {
		return false, fmt.Errorf("mwsite: user %q: %w", user, err)
	}
	n, err := s.Count(ctx, "SELECT COUNT(*) FROM watchlist WHERE wl_user = ? AND wl_namespace = ? AND wl_title = ?", id, ns, key)
	return n > 0, err
}

// SectionCount returns how many level-2 sections headed heading ("== heading
// ==", the heading a new section on a talk page gets) the current text of
// talkTitle has; 0 when there is no such page. Headings are compared
// without the spaces around them.
func (s *Site) SectionCount(ctx context.Context, talkTitle, heading string) (int, error) {
	text, err := s.PageText(ctx, talkTitle)
	if errors.Is(err, ErrNoPage) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return countSections(text, heading), nil
}

// countSections counts the lines of wikitext that are level-2 headings
// reading heading. A heading line is as MediaWiki's parser finds them,
// /^(={1,6})(.+)\1\s*$/: its level is the smaller run of equals signs at
// either end (at most 6), the rest inside is its text.
func countSections(wikitext, heading string) int {
	want := strings.TrimSpace(heading)
	n := 0
	for _, line := range strings.Split(wikitext, "\n") {
		line = strings.TrimRight(line, " \t\r")
		lead := len(line) - len(strings.TrimLeft(line, "="))
		trail := len(line) - len(strings.TrimRight(line, "="))
		level := min(lead, trail, 6)
		if level != 2 || len(line) <= 2*level {
			continue
		}
		if strings.TrimSpace(line[level:len(line)-level]) == want {
			n++
		}
	}
	return n
}

// DropSessions deletes every session the wiki holds (its object cache, in
// wikicache.sqlite), as a wiki whose session store was cleared does: a
// browser signed in is signed out at its next request, and a form it
// posts carries an edit token the wiki no longer knows.
func (s *Site) DropSessions(ctx context.Context) (int64, error) {
	path := filepath.Join(s.dir, "data", "wikicache.sqlite")
	u := url.URL{Scheme: "file", Path: path, RawQuery: "_busy_timeout=10000"}
	db, err := sql.Open("sqlite3", u.String())
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	res, err := db.ExecContext(ctx, "DELETE FROM objectcache WHERE keyname LIKE '%MWSession%'")
	if err != nil {
		return 0, fmt.Errorf("drop sessions: %w", err)
	}
	return res.RowsAffected()
}
