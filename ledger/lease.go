package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Lease is a named, expiring claim on the right to act. Generation is the
// fencing token: it increases on every acquisition.
type Lease struct {
	Name        string
	Holder      string
	Generation  int64
	AcquiredAt  time.Time
	HeartbeatAt time.Time
	ExpiresAt   time.Time
	Released    bool
}

// Fence is what a write made on behalf of a run carries: the lease it was
// made under and the generation it held.
func (l Lease) Fence() Fence { return Fence{Lease: l.Name, Generation: l.Generation} }

// Fence identifies the lease generation a write is made under.
type Fence struct {
	Lease      string
	Generation int64
}

// checkFence rejects, inside tx, a write whose generation is not the
// lease's newest.
func checkFence(ctx context.Context, tx *sql.Tx, f Fence) error {
	if f.Lease == "" || f.Generation <= 0 {
		return fmt.Errorf("%w: the write carries no lease generation", ErrStaleGeneration)
	}
	var gen int64
	var released int
	err := tx.QueryRowContext(ctx, `SELECT generation, released FROM leases WHERE name = ?`, f.Lease).Scan(&gen, &released)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: lease %q was never acquired", ErrStaleGeneration, f.Lease)
	}
	if err != nil {
		return fmt.Errorf("read lease %q: %w", f.Lease, err)
	}
	if gen != f.Generation {
		return fmt.Errorf("%w: lease %q is at generation %d, the write carries %d", ErrStaleGeneration, f.Lease, gen, f.Generation)
	}
	if released == 1 {
		return fmt.Errorf("%w: lease %q generation %d was released", ErrStaleGeneration, f.Lease, gen)
	}
	return nil
}

// AcquireLease takes the named lease for holder for ttl, inside one
// immediate transaction, and returns it with a new generation. It returns
// ErrLocked when another holder's lease has not expired. A holder that
// acquires again while it holds the lease gets a new generation too, which
// fences out its own older work.
func (db *DB) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (Lease, error) {
	if name == "" || holder == "" {
		return Lease{}, errors.New("acquire lease: name and holder are required")
	}
	if ttl <= 0 {
		return Lease{}, fmt.Errorf("acquire lease: ttl must be positive, got %s", ttl)
	}
	var l Lease
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		now := db.now()
		cur, err := getLease(ctx, tx, name)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		case !cur.Released && cur.ExpiresAt.After(now) && cur.Holder != holder:
			return fmt.Errorf("%w: %q holds %q until %s", ErrLocked, cur.Holder, name, cur.ExpiresAt.Format(time.RFC3339))
		}
		l = Lease{Name: name, Holder: holder, Generation: cur.Generation + 1,
			AcquiredAt: now, HeartbeatAt: now, ExpiresAt: now.Add(ttl)}
		_, err = tx.ExecContext(ctx, `INSERT INTO leases (name, holder, generation, acquired_at, heartbeat_at, expires_at, released)
			VALUES (?, ?, ?, ?, ?, ?, 0)
			ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, generation = excluded.generation,
				acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at,
				expires_at = excluded.expires_at, released = 0`,
			name, holder, l.Generation, nanos(now), nanos(now), nanos(l.ExpiresAt))
		return err
	})
	if err != nil {
		return Lease{}, fmt.Errorf("acquire lease %q: %w", name, err)
	}
	return l, nil
}

// Heartbeat extends a held lease by ttl from now. Only the holder at the
// current generation may; anyone else gets ErrStaleGeneration. A lease
// that expired but was not taken over may still be extended by its holder.
func (db *DB) Heartbeat(ctx context.Context, l Lease, ttl time.Duration) (Lease, error) {
	var out Lease
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := db.ownLease(ctx, tx, l)
		if err != nil {
			return err
		}
		now := db.now()
		cur.HeartbeatAt, cur.ExpiresAt = now, now.Add(ttl)
		_, err = tx.ExecContext(ctx, `UPDATE leases SET heartbeat_at = ?, expires_at = ? WHERE name = ? AND generation = ?`,
			nanos(now), nanos(cur.ExpiresAt), l.Name, l.Generation)
		out = cur
		return err
	})
	if err != nil {
		return Lease{}, fmt.Errorf("heartbeat lease %q: %w", l.Name, err)
	}
	return out, nil
}

// ReleaseLease gives the lease up so another operator may take it at once.
// Only the holder at the current generation may; releasing twice is safe.
// The generation stays, so fencing still holds after release.
func (db *DB) ReleaseLease(ctx context.Context, l Lease) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := db.ownLease(ctx, tx, l); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE leases SET released = 1, expires_at = ? WHERE name = ? AND generation = ?`,
			nanos(db.now()), l.Name, l.Generation)
		return err
	})
	if err != nil {
		return fmt.Errorf("release lease %q: %w", l.Name, err)
	}
	return nil
}

func (db *DB) ownLease(ctx context.Context, tx *sql.Tx, l Lease) (Lease, error) {
	cur, err := getLease(ctx, tx, l.Name)
	if errors.Is(err, ErrNotFound) {
		return Lease{}, fmt.Errorf("%w: lease was never acquired", ErrStaleGeneration)
	}
	if err != nil {
		return Lease{}, err
	}
	if cur.Generation != l.Generation || cur.Holder != l.Holder {
		return Lease{}, fmt.Errorf("%w: lease is at generation %d held by %q", ErrStaleGeneration, cur.Generation, cur.Holder)
	}
	return cur, nil
}

// GetLease returns the named lease as stored, or ErrNotFound.
func (db *DB) GetLease(ctx context.Context, name string) (Lease, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Lease{}, err
	}
	defer tx.Rollback()
	return getLease(ctx, tx, name)
}

// Held reports whether the lease is held at time now.
func (l Lease) Held(now time.Time) bool { return !l.Released && l.ExpiresAt.After(now) }

func getLease(ctx context.Context, tx *sql.Tx, name string) (Lease, error) {
	var l Lease
	var acq, hb, exp int64
	var released int
	err := tx.QueryRowContext(ctx, `SELECT name, holder, generation, acquired_at, heartbeat_at, expires_at, released
		FROM leases WHERE name = ?`, name).Scan(&l.Name, &l.Holder, &l.Generation, &acq, &hb, &exp, &released)
	if errors.Is(err, sql.ErrNoRows) {
		return Lease{}, fmt.Errorf("lease %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return Lease{}, fmt.Errorf("read lease %q: %w", name, err)
	}
	l.AcquiredAt, l.HeartbeatAt, l.ExpiresAt = fromNanos(acq), fromNanos(hb), fromNanos(exp)
	l.Released = released == 1
	return l, nil
}

// TakeOverLease takes the named lease from a holder known to be dead (its
// process is gone), at once rather than at its expiry: only while the lease
// is still exactly from (same holder and generation), and with a new
// generation, so that fencing still refuses anything the old holder may
// write should it only have been frozen. It returns ErrLocked when the lease
// moved on in the meantime.
func (db *DB) TakeOverLease(ctx context.Context, from Lease, holder string, ttl time.Duration) (Lease, error) {
	if holder == "" || ttl <= 0 {
		return Lease{}, errors.New("take over lease: a holder and a positive ttl are required")
	}
	var l Lease
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := getLease(ctx, tx, from.Name)
		if err != nil {
			return err
		}
		if cur.Generation != from.Generation || cur.Holder != from.Holder {
			return fmt.Errorf("%w: %q holds %q until %s", ErrLocked, cur.Holder, cur.Name, cur.ExpiresAt.Format(time.RFC3339))
		}
		now := db.now()
		l = Lease{Name: from.Name, Holder: holder, Generation: cur.Generation + 1, AcquiredAt: now, HeartbeatAt: now, ExpiresAt: now.Add(ttl)}
		_, err = tx.ExecContext(ctx, `UPDATE leases SET holder = ?, generation = ?, acquired_at = ?, heartbeat_at = ?, expires_at = ?, released = 0
			WHERE name = ? AND generation = ?`, holder, l.Generation, nanos(now), nanos(now), nanos(l.ExpiresAt), from.Name, cur.Generation)
		return err
	})
	if err != nil {
		return Lease{}, fmt.Errorf("take over lease %q: %w", from.Name, err)
	}
	return l, nil
}
