package wpsite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/browserop/browserop/bundled"
)

// Query runs one SQL statement on WordPress's database (as MariaDB's root,
// through the mariadb client) and returns its rows as strings. Each ? in
// query is replaced, in order, by an argument as a literal: a string, an
// integer, a bool or nil; every ? is a placeholder. A NULL reads "NULL".
func (s *Site) Query(ctx context.Context, query string, args ...any) ([][]string, error) {
	q, err := bind(query, args)
	if err != nil {
		return nil, err
	}
	return s.db.run(ctx, dbName, q)
}

// Exec runs SQL statements that return no rows, with arguments as Query's.
func (s *Site) Exec(ctx context.Context, query string, args ...any) error {
	_, err := s.Query(ctx, query, args...)
	return err
}

// Count runs a query that returns one integer (SELECT COUNT(*) ...), with
// arguments as Query's.
func (s *Site) Count(ctx context.Context, query string, args ...any) (int, error) {
	rows, err := s.Query(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		return 0, fmt.Errorf("count: %d rows, want one value", len(rows))
	}
	return strconv.Atoi(rows[0][0])
}

// CountPublished counts the published posts titled title (exactly, as
// stored: WordPress keeps a title's HTML entities as typed).
func (s *Site) CountPublished(ctx context.Context, title string) (int, error) {
	return s.Count(ctx, "SELECT COUNT(*) FROM wp_posts WHERE post_type = 'post' AND post_status = 'publish' AND post_title = ?", title)
}

// CountComments counts the comments on post postID whose text is content
// exactly, approved or awaiting moderation (not spam or trash).
func (s *Site) CountComments(ctx context.Context, postID int, content string) (int, error) {
	return s.Count(ctx, "SELECT COUNT(*) FROM wp_comments WHERE comment_post_ID = ? AND comment_content = ? AND comment_approved IN ('0', '1')", postID, content)
}

// Attachment is a file of WordPress's media library.
type Attachment struct {
	ID int
	// MIME is the file's type as WordPress recorded it: image/png.
	MIME string
	// URL is the file's address as uploaded (its guid).
	URL string
	// Alt is the library's alt text (post meta _wp_attachment_image_alt),
	// which the Image block's own alt text does not change.
	Alt string
}

// Attachments returns the media library's files uploaded to post postID
// (their parent), oldest first.
func (s *Site) Attachments(ctx context.Context, postID int) ([]Attachment, error) {
	rows, err := s.Query(ctx, "SELECT p.ID, p.post_mime_type, p.guid, COALESCE(m.meta_value, '') FROM wp_posts p "+
		"LEFT JOIN wp_postmeta m ON m.post_id = p.ID AND m.meta_key = '_wp_attachment_image_alt' "+
		"WHERE p.post_type = 'attachment' AND p.post_parent = ? ORDER BY p.ID", postID)
	if err != nil {
		return nil, err
	}
	out := make([]Attachment, 0, len(rows))
	for _, r := range rows {
		if len(r) != 4 {
			return nil, fmt.Errorf("attachments: a row of %d values, want 4", len(r))
		}
		id, err := strconv.Atoi(r[0])
		if err != nil {
			return nil, fmt.Errorf("attachments: %w", err)
		}
		out = append(out, Attachment{ID: id, MIME: r[1], URL: r[2], Alt: r[3]})
	}
	return out, nil
}

// FeaturedImage returns the attachment ID of post postID's featured image
// (post meta _thumbnail_id), 0 when it has none.
func (s *Site) FeaturedImage(ctx context.Context, postID int) (int, error) {
	rows, err := s.Query(ctx, "SELECT meta_value FROM wp_postmeta WHERE post_id = ? AND meta_key = '_thumbnail_id'", postID)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	return strconv.Atoi(rows[0][0])
}

// SetOption sets WordPress's option name to value, creating it if needed:
// for example comment_moderation "1", comment_previously_approved "0",
// comments_notify "0", or the test site's own browserop_test_flood "off"
// and browserop_test_upload_limit (bytes, "0" for PHP's limit). WordPress
// reads options on each request.
func (s *Site) SetOption(ctx context.Context, name, value string) error {
	return s.Exec(ctx, "INSERT INTO wp_options (option_name, option_value, autoload) VALUES (?, ?, 'yes') "+
		"ON DUPLICATE KEY UPDATE option_value = VALUES(option_value)", name, value)
}

// Option returns WordPress's option name as stored (a serialized PHP value
// for arrays), or "" when it is not set.
func (s *Site) Option(ctx context.Context, name string) (string, error) {
	rows, err := s.Query(ctx, "SELECT option_value FROM wp_options WHERE option_name = ?", name)
	if err != nil || len(rows) == 0 {
		return "", err
	}
	return rows[0][0], nil
}

// PHP runs code (PHP statements, without the <?php tag) with WordPress
// loaded, as a command-line script outside any request, and returns what it
// printed. A PHP error or a non-zero exit is an error with its output.
func (s *Site) PHP(ctx context.Context, code string) (string, error) {
	cmd := exec.CommandContext(ctx, s.progs.php,
		"-d", "display_errors=stderr",
		"-d", "error_log="+filepath.Join(s.dir, "php-errors.log"),
		"-d", "memory_limit=256M")
	cmd.Dir = s.docroot
	cmd.Stdin = strings.NewReader("<?php\nrequire " + phpString(filepath.Join(s.docroot, "wp-load.php")) + ";\n" + code + "\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("php: %v: %s%s", err, strings.TrimSpace(errb.String()), lastLines(out.String(), 10))
	}
	if e := strings.TrimSpace(errb.String()); e != "" && strings.Contains(e, "Fatal error") {
		return out.String(), fmt.Errorf("php: %s", e)
	}
	return out.String(), nil
}

// phpJSON runs code with $in set to v (through JSON, as associative arrays)
// and decodes what code echoes as JSON into out (when out is not nil).
func (s *Site) phpJSON(ctx context.Context, v any, code string, out any) error {
	in, err := json.Marshal(v)
	if err != nil {
		return err
	}
	got, err := s.PHP(ctx, "$in = json_decode("+phpString(string(in))+", true);\n"+code)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(got)), out); err != nil {
		return fmt.Errorf("php: %q: %w", got, err)
	}
	return nil
}

// Post is a post InsertPost writes straight into WordPress (not through
// the editor): for archives and pages that tests read.
type Post struct {
	Author  string // login
	Title   string
	Content string // post_content: HTML or block markup
	// Status is "publish" unless set ("draft", "pending", "private").
	Status string
	// Date is the post's date (now when zero).
	Date time.Time
}

// InsertPost creates p with wp_insert_post and returns its ID.
func (s *Site) InsertPost(ctx context.Context, p Post) (int, error) {
	if p.Status == "" {
		p.Status = "publish"
	}
	in := map[string]any{"author": p.Author, "title": p.Title, "content": p.Content, "status": p.Status, "date": ""}
	if !p.Date.IsZero() {
		in["date"] = p.Date.UTC().Format("2006-01-02 15:04:05")
	}
	var id int
	err := s.phpJSON(ctx, in, `
$u = get_user_by( 'login', $in['author'] );
if ( ! $u ) { fwrite( STDERR, "no user " . $in['author'] ); exit( 1 ); }
$args = array( 'post_author' => $u->ID, 'post_title' => $in['title'], 'post_content' => $in['content'], 'post_status' => $in['status'], 'post_type' => 'post' );
if ( $in['date'] !== '' ) { $args['post_date_gmt'] = $in['date']; $args['post_date'] = get_date_from_gmt( $in['date'] ); }
$id = wp_insert_post( wp_slash( $args ), true );
if ( is_wp_error( $id ) ) { fwrite( STDERR, $id->get_error_message() ); exit( 1 ); }
echo json_encode( $id );`, &id)
	if err != nil {
		return 0, fmt.Errorf("insert post %q: %w", p.Title, err)
	}
	return id, nil
}

// SetPreferences merges prefs into the block editor's preferences of user
// login under scope, as the editor stores them: user meta
// wp_persisted_preferences, stamped _modified now. The editor, when it
// loads, takes the newer (by _modified) of that and the browser's copy in
// localStorage (WP_PREFERENCES_USER_<id>), so this wins over what a browser
// stored before. For example scope "core/edit-post" with
// {"welcomeGuide": false} keeps the welcome guide closed,
// {"isPublishSidebarEnabled": false} skips the pre-publish panel.
func (s *Site) SetPreferences(ctx context.Context, login, scope string, prefs map[string]any) error {
	in := map[string]any{"login": login, "scope": scope, "prefs": prefs}
	err := s.phpJSON(ctx, in, `
global $wpdb;
$u = get_user_by( 'login', $in['login'] );
if ( ! $u ) { fwrite( STDERR, "no user " . $in['login'] ); exit( 1 ); }
$key = $wpdb->get_blog_prefix() . 'persisted_preferences';
$cur = get_user_meta( $u->ID, $key, true );
if ( ! is_array( $cur ) ) { $cur = array(); }
$scope = isset( $cur[ $in['scope'] ] ) && is_array( $cur[ $in['scope'] ] ) ? $cur[ $in['scope'] ] : array();
$cur[ $in['scope'] ] = array_merge( $scope, (array) $in['prefs'] );
$cur['_modified'] = gmdate( 'Y-m-d\TH:i:s.000\Z' );
update_user_meta( $u->ID, $key, $cur );`, nil)
	if err != nil {
		return fmt.Errorf("set preferences of %s: %w", login, err)
	}
	return nil
}

// Comment is a comment InsertComment writes straight into WordPress (not
// through the comment form): an earlier comment a test needs on a page.
type Comment struct {
	PostID int
	// Author is the login of the user who wrote it: the comment carries
	// the user's display name and e-mail, as the comment form writes them
	// (WordPress's duplicate and flood checks look at those).
	Author  string
	Content string
	// Parent is the comment this one answers, 0 for none.
	Parent int
}

// InsertComment creates c, approved, with wp_insert_comment and returns
// its ID.
func (s *Site) InsertComment(ctx context.Context, c Comment) (int, error) {
	in := map[string]any{"post": c.PostID, "author": c.Author, "content": c.Content, "parent": c.Parent}
	var id int
	err := s.phpJSON(ctx, in, `
$u = get_user_by( 'login', $in['author'] );
if ( ! $u ) { fwrite( STDERR, "no user " . $in['author'] ); exit( 1 ); }
$id = wp_insert_comment( wp_slash( array( 'comment_post_ID' => $in['post'], 'comment_parent' => $in['parent'], 'user_id' => $u->ID,
	'comment_author' => $u->display_name, 'comment_author_email' => $u->user_email, 'comment_content' => $in['content'], 'comment_approved' => 1 ) ) );
if ( ! $id ) { fwrite( STDERR, "wp_insert_comment failed" ); exit( 1 ); }
echo json_encode( $id );`, &id)
	if err != nil {
		return 0, fmt.Errorf("insert comment on post %d: %w", c.PostID, err)
	}
	return id, nil
}

// AdapterYAML returns the bundled WordPress adapter (bundled/sites/
// wordpress.yaml) pointed at this site, with the display names of the
// site's users that differ from their logins declared under accounts, as
// a person installing it would write it.
func (s *Site) AdapterYAML() ([]byte, error) {
	raw, err := fs.ReadFile(bundled.Sites, "sites/wordpress.yaml")
	if err != nil {
		return nil, err
	}
	const origin = "  - http://127.0.0.1:8080\n"
	y := string(raw)
	if strings.Count(y, origin) != 1 {
		return nil, errors.New("wpsite: the bundled WordPress adapter's origin changed")
	}
	y = strings.Replace(y, origin, "  - "+s.URL()+"\n", 1)
	var accounts strings.Builder
	for _, u := range Users {
		if u.DisplayName() != u.Login {
			fmt.Fprintf(&accounts, "  %s:\n    name: %q\n", u.Login, u.DisplayName())
		}
	}
	if accounts.Len() > 0 {
		y += "\naccounts:\n" + accounts.String()
	}
	return []byte(y), nil
}
