package ledger

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
	// noForeignKeys: the migration rebuilds a table that others reference
	// (SQLite cannot change a constraint in place), which SQLite's
	// procedure for such changes does with foreign key enforcement off.
	noForeignKeys bool
}

// noForeignKeysLine, as a migration's first line, asks for the migration
// to run with foreign key enforcement off (see DB.inTxWithoutForeignKeys).
const noForeignKeysLine = "-- browserop: foreign_keys off"

// migrations returns the embedded migrations in order. Their file names are
// NNNN_name.sql, numbered from 1 without gaps.
func migrations() []migration {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		panic(fmt.Sprintf("ledger: read embedded migrations: %v", err))
	}
	var ms []migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			panic(fmt.Sprintf("ledger: migration %s is not named NNNN_name.sql", e.Name()))
		}
		body, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			panic(fmt.Sprintf("ledger: read migration %s: %v", e.Name(), err))
		}
		first, _, _ := strings.Cut(string(body), "\n")
		ms = append(ms, migration{version: v, name: name, sql: string(body), noForeignKeys: strings.TrimSpace(first) == noForeignKeysLine})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			panic(fmt.Sprintf("ledger: migration %d is missing", i+1))
		}
	}
	return ms
}

func latestVersion() int { return len(migrations()) }

// LatestSchemaVersion returns the schema version this build migrates a
// ledger to: the number of its last embedded migration. Open refuses
// (ErrNotLedger) a ledger of a newer version.
func LatestSchemaVersion() int { return latestVersion() }

// Migration is one applied schema migration.
type Migration struct {
	Version int
	Name    string
}

// Migrate applies pending migrations and returns those it applied. Open
// already calls it; `browserop migrate` calls it to report.
func (db *DB) Migrate(ctx context.Context) ([]Migration, error) {
	return db.applyMigrations(ctx)
}

func (db *DB) migrate(ctx context.Context) error {
	_, err := db.applyMigrations(ctx)
	return err
}

func (db *DB) applyMigrations(ctx context.Context) ([]Migration, error) {
	// An up-to-date ledger is known from a read, which in WAL mode waits
	// for no writer: a process frozen inside a write (a suspended
	// operator) then keeps no other command from opening the ledger.
	if v, err := db.SchemaVersion(ctx); err == nil && v >= latestVersion() {
		return nil, nil
	}
	var applied []Migration
	for _, m := range migrations() {
		done := false
		inTx := db.inTx
		if m.noForeignKeys {
			inTx = db.inTxWithoutForeignKeys
		}
		err := retryBusy(ctx, func() error {
			return inTx(ctx, func(tx *sql.Tx) error {
				var version int
				if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
					return err
				}
				if version >= m.version {
					done = true
					return nil
				}
				if version != m.version-1 {
					return fmt.Errorf("schema version %d cannot take migration %d", version, m.version)
				}
				if m.version == 1 {
					if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, applicationID)); err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, `CREATE TABLE schema_migrations (
					version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
						return err
					}
				}
				if _, err := tx.ExecContext(ctx, m.sql); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
					m.version, m.name, nanos(db.now())); err != nil {
					return err
				}
				_, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, m.version))
				return err
			})
		})
		if err != nil {
			return applied, fmt.Errorf("ledger %s: apply migration %d (%s): %w", db.path, m.version, m.name, err)
		}
		if !done {
			applied = append(applied, Migration{Version: m.version, Name: m.name})
		}
	}
	return applied, nil
}

// inTxWithoutForeignKeys runs fn in one write transaction with foreign key
// enforcement off, as SQLite's procedure for rebuilding a referenced table
// says: the pragma is set on the writer connection before the transaction
// (inside one it does nothing), every reference is checked (PRAGMA
// foreign_key_check) before the commit, which any violation aborts, and
// enforcement is on again before the connection goes back to the pool. A
// connection whose enforcement could not be turned on again is discarded.
func (db *DB) inTxWithoutForeignKeys(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return err
	}
	defer func() {
		if _, perr := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`); perr != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			err = errors.Join(err, fmt.Errorf("turn foreign keys on again: %w", perr))
		}
	}()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return err
	}
	broken := rows.Next()
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if broken {
		return errors.New("a foreign key reference is broken: the migration is not applied")
	}
	return tx.Commit()
}

// SchemaVersion returns the schema version of the open ledger.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.read.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v)
	return v, err
}

// retryBusy runs f again while SQLite answers busy or locked without
// waiting out its busy timeout, which it does when processes open a new
// ledger at the same moment (one of them switching it to WAL); it gives up
// after ten seconds.
func retryBusy(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(10 * time.Second)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err := f()
		var se sqlite3.Error
		if !errors.As(err, &se) || se.Code != sqlite3.ErrBusy && se.Code != sqlite3.ErrLocked || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}
