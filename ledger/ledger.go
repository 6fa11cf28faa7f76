// Package ledger is browserop's durable memory: a SQLite file holding tasks
// with their immutable contracts and grants, actions with their lifecycle and
// append-only events, leases with fencing generations, runs, tab records,
// budget usage and thread parts.
//
// Every write made on behalf of an operator run carries the run's Fence and
// is rejected with ErrStaleGeneration, having changed nothing, once a newer
// generation of the lease exists. State transitions go through one function
// (Transition) that enforces the action lifecycle of docs/design.md.
package ledger

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base32"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/browserop/browserop/budgets"
)

// Errors callers branch on. Test them with errors.Is.
var (
	// ErrStaleGeneration: the write carried a lease generation that is no
	// longer the newest; nothing was changed.
	ErrStaleGeneration = errors.New("stale lease generation")
	// ErrLocked: another holder has the lease and it has not expired.
	ErrLocked = errors.New("lease held by another operator")
	// ErrConflict: an idempotency key was reused with a different request.
	ErrConflict = errors.New("idempotency key reused with a different request")
	// ErrNotFound: no record with that id.
	ErrNotFound = errors.New("not found")
	// ErrIllegalTransition: the lifecycle does not allow that change.
	ErrIllegalTransition = errors.New("illegal transition")
	// ErrNotLedger: the file is not a browserop ledger (not SQLite, corrupt,
	// another program's database, or a schema newer than this build).
	ErrNotLedger = errors.New("not a browserop ledger")
	// ErrUnsafeFile: the ledger file is readable by others, or is not a
	// regular file; browserop refuses to use it until a person fixes it.
	ErrUnsafeFile = errors.New("unsafe ledger file")
	// ErrNoLedger: Options.MustExist was set and there is no ledger file.
	ErrNoLedger = errors.New("no ledger")
	// ErrSideEffectBound: the task's contract bounds its side effects and
	// this intent or action would pass the bound. It wraps
	// budgets.ErrExhausted: a pass treats it like a spent budget, and the
	// action waits, planned.
	ErrSideEffectBound = fmt.Errorf("side-effect bound reached: %w", budgets.ErrExhausted)
)

// applicationID marks a SQLite file as a browserop ledger ("brop").
const applicationID = 0x62726f70

// Options tune Open. The zero value is ready to use.
type Options struct {
	// Now is the clock; tests inject one. Defaults to time.Now.
	Now func() time.Time
	// BusyTimeout is how long a writer waits for another process's lock.
	// Defaults to 10s.
	BusyTimeout time.Duration
	// SkipMigrate leaves pending migrations for an explicit Migrate call
	// (`browserop migrate` reports what it applies).
	SkipMigrate bool
	// MustExist refuses (ErrNoLedger) to create a ledger: commands that
	// only inspect one must not turn a mistyped path into a new, empty,
	// all-clear ledger.
	MustExist bool
}

// DB is an open ledger: one writer connection (every transaction begins
// IMMEDIATE) and a small pool of readers.
type DB struct {
	path   string
	write  *sql.DB
	read   *sql.DB
	now    func() time.Time
	closed bool
}

// DefaultPath returns the ledger file's default location: on macOS
// ~/Library/Application Support/browserop/ledger.db, elsewhere
// $XDG_STATE_HOME/browserop/ledger.db, else ~/.local/state/browserop/ledger.db.
func DefaultPath() (string, error) { return DefaultPathEnv(os.Getenv) }

// DefaultPathEnv is DefaultPath reading the environment through getenv.
func DefaultPathEnv(getenv func(string) string) (string, error) {
	dir, err := StateDirEnv(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "ledger.db"), nil
}

// StateDirEnv returns browserop's state directory (see DefaultPath),
// reading the environment through getenv.
func StateDirEnv(getenv func(string) string) (string, error) {
	home := getenv("HOME")
	if runtime.GOOS == "darwin" && home != "" {
		return filepath.Join(home, "Library", "Application Support", "browserop"), nil
	}
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "browserop"), nil
	}
	if home == "" {
		return "", errors.New("no HOME to put the ledger under: set XDG_STATE_HOME, ledger.path or --ledger")
	}
	return filepath.Join(home, ".local", "state", "browserop"), nil
}

// Open opens the ledger at path, creating it (directory 0700, file 0600)
// when absent, and applies pending migrations. It returns an error matching
// ErrNotLedger, and leaves the file untouched, when the file is not a
// browserop ledger: not SQLite, truncated, another program's database, or
// of a newer schema than this build knows.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if path == "" {
		return nil, errors.New("open ledger: empty path")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.BusyTimeout == 0 {
		opts.BusyTimeout = 10 * time.Second
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	if opts.MustExist {
		if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w at %s: run a pass or `browserop migrate` first, or check --ledger", ErrNoLedger, abs)
		}
	}
	if err := prepareFile(abs); err != nil {
		return nil, err
	}
	// Look before writing anything: even the WAL pragma rewrites the header.
	if err := inspect(ctx, abs); err != nil {
		return nil, err
	}
	db := &DB{path: abs, now: opts.Now}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	q.Set("_busy_timeout", fmt.Sprint(opts.BusyTimeout.Milliseconds()))
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	db.write, err = sql.Open("sqlite3", "file:"+escapePath(abs)+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", abs, err)
	}
	db.write.SetMaxOpenConns(1)
	db.write.SetConnMaxIdleTime(0)
	q.Set("_txlock", "deferred")
	q.Set("mode", "ro")
	q.Del("_journal_mode")
	db.read, err = sql.Open("sqlite3", "file:"+escapePath(abs)+"?"+q.Encode())
	if err != nil {
		db.write.Close()
		return nil, fmt.Errorf("open ledger %s: %w", abs, err)
	}
	db.read.SetMaxOpenConns(4)
	if !opts.SkipMigrate {
		if err := db.migrate(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	if err := secureSidecars(abs); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func escapePath(p string) string {
	// Keep the path literal in a file: URI.
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
}

// Path returns the absolute path of the ledger file.
func (db *DB) Path() string { return db.path }

// Close closes the ledger. Calling it twice is safe.
func (db *DB) Close() error {
	if db == nil || db.closed {
		return nil
	}
	db.closed = true
	var errs []error
	if db.read != nil {
		errs = append(errs, db.read.Close())
	}
	if db.write != nil {
		errs = append(errs, db.write.Close())
	}
	return errors.Join(errs...)
}

// prepareFile creates the directory 0700 and the file 0600 before SQLite
// sees them, and refuses a file that others can read.
func prepareFile(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create ledger directory %s: %w", dir, err)
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("ledger %s: %w: not a regular file", path, ErrUnsafeFile)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("create ledger %s: %w", path, err)
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return fmt.Errorf("stat ledger %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("ledger %s: %w: not a regular file", path, ErrUnsafeFile)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("ledger %s: %w: readable by others (mode %04o): run chmod 600 on it and its -wal and -shm files", path, ErrUnsafeFile, fi.Mode().Perm())
	}
	return nil
}

// secureSidecars makes sure the -wal and -shm files, which SQLite creates
// with the main file's mode, are 0600.
func secureSidecars(path string) error {
	for _, suffix := range []string{"-wal", "-shm"} {
		p := path + suffix
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("stat %s: %w", p, err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, 0o600); err != nil {
				return fmt.Errorf("chmod %s: %w", p, err)
			}
		}
	}
	return nil
}

// inspectTries bounds how often inspect looks again at a file that
// changed while it looked.
const inspectTries = 10

// inspect checks, read-only, that path is empty or a browserop ledger this
// build can use. Another process may be creating the ledger while it looks,
// and two things keep that from being taken for a refusal. What it reads of
// the schema is one snapshot (one statement): read piecemeal, a look
// through the -wal took the application id from before the first migration
// and the tables from after, and refused the ledger as another program's.
// And a refusal is void when the file changed during the look (its header,
// size or mtime, or its -wal): without a -wal the main file is read with
// immutable=1, that is with no lock and no snapshot, and a look while the
// creator's closing checkpoint wrote it found it malformed. It then looks
// again, at most inspectTries times.
func inspect(ctx context.Context, path string) error {
	for try := 1; ; try++ {
		before := stateOf(path)
		err := inspectOnce(ctx, path)
		if err == nil || !errors.Is(err, ErrNotLedger) || try == inspectTries || stateOf(path) == before {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(try) * 5 * time.Millisecond):
		}
	}
}

// fileState is what inspect compares to tell that a file changed while it
// looked at it.
type fileState struct {
	size, walSize int64
	mtime         time.Time
	wal           bool
	header        [100]byte
}

func stateOf(path string) fileState {
	var st fileState
	if fi, err := os.Stat(path); err == nil {
		st.size, st.mtime = fi.Size(), fi.ModTime()
	}
	if fi, err := os.Stat(path + "-wal"); err == nil {
		st.wal, st.walSize = true, fi.Size()
	}
	if f, err := os.Open(path); err == nil {
		f.ReadAt(st.header[:], 0)
		f.Close()
	}
	return st
}

// inspectOnce is one look of inspect.
func inspectOnce(ctx context.Context, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat ledger %s: %w", path, err)
	}
	if fi.Size() == 0 {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read ledger %s: %w", path, err)
	}
	defer f.Close()
	var hdr [100]byte
	n, _ := f.ReadAt(hdr[:], 0)
	if n < len(hdr) || string(hdr[:16]) != "SQLite format 3\x00" {
		return fmt.Errorf("ledger %s: %w: it is not an SQLite database; move it away or point --ledger elsewhere", path, ErrNotLedger)
	}
	pageSize := int64(hdr[16])<<8 | int64(hdr[17])
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(hdr[28])<<24 | int64(hdr[29])<<16 | int64(hdr[30])<<8 | int64(hdr[31])
	changeCounter := string(hdr[24:28])
	validFor := string(hdr[92:96])
	// After a crash mid-checkpoint, page 1 (with the new page count) may be
	// in the file while later pages are still only in the -wal: with a
	// non-empty -wal the size check proves nothing.
	walSize := int64(0)
	if wfi, err := os.Stat(path + "-wal"); err == nil {
		walSize = wfi.Size()
	}
	if walSize == 0 && changeCounter == validFor && pages > 0 && fi.Size() < pages*pageSize {
		return fmt.Errorf("ledger %s: %w: the file is shorter than its header says (%d bytes, header says %d) and has no -wal: it was truncated; check it with sqlite3's PRAGMA integrity_check before restoring anything", path, ErrNotLedger, fi.Size(), pages*pageSize)
	}
	// Without a -wal file nothing newer than the main file exists, and
	// immutable=1 reads it without creating -wal or -shm beside it.
	params := "?mode=ro&immutable=1"
	if _, err := os.Stat(path + "-wal"); err == nil {
		params = "?mode=ro&_busy_timeout=10000"
	}
	ro, err := sql.Open("sqlite3", "file:"+escapePath(path)+params)
	if err != nil {
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	defer ro.Close()
	var appID, version, tables int
	err = ro.QueryRowContext(ctx, `SELECT (SELECT application_id FROM pragma_application_id),
		(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)`).Scan(&appID, &version, &tables)
	if err != nil {
		var se sqlite3.Error
		if errors.As(err, &se) && (se.Code == sqlite3.ErrNotADB || se.Code == sqlite3.ErrCorrupt) {
			return fmt.Errorf("ledger %s: %w: %v", path, ErrNotLedger, err)
		}
		return fmt.Errorf("ledger %s: read schema: %w", path, err)
	}
	if appID != applicationID && (appID != 0 || tables > 0) {
		return fmt.Errorf("ledger %s: %w: it is another program's SQLite database", path, ErrNotLedger)
	}
	if latest := latestVersion(); version > latest {
		return fmt.Errorf("ledger %s: %w: its schema version %d is newer than this browserop knows (%d); upgrade browserop", path, ErrNotLedger, version, latest)
	}
	return nil
}

// newID returns a random id with a readable prefix, e.g. "act_x4f...".
func newID(prefix string) string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return prefix + "_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// nanos stores a time as Unix nanoseconds.
func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func fromNullNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return fromNanos(n.Int64)
}

// inTx runs fn in one write transaction (BEGIN IMMEDIATE) and commits it.
func (db *DB) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// isUnique reports whether err is a UNIQUE or PRIMARY KEY violation.
func isUnique(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey)
}
