package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/browserop/browserop/authority"
	"github.com/browserop/browserop/kind"
)

// Capabilities a contract can allow: what a request may name (kind.Requests)
// and navigate.
var Capabilities = append(slices.Clone(kind.Requests), "navigate")

// Contract is a task's immutable authority: what it may do and where.
type Contract struct {
	Domains      []string `json:"domains"`
	Capabilities []string `json:"capabilities"`
	// Confirm lists capabilities that need a person's explicit confirmation.
	Confirm []string `json:"confirm,omitempty"`
	// MaxSideEffects bounds the task's external effects; 0 means no bound.
	MaxSideEffects int `json:"max_side_effects,omitempty"`
}

// Validate returns an error naming the field when the contract is unusable.
func (c Contract) Validate() error {
	var problems []string
	if len(c.Domains) == 0 {
		problems = append(problems, "contract.domains: at least one domain is required")
	}
	for i, d := range c.Domains {
		if _, err := authority.ParseDomain(d); err != nil {
			problems = append(problems, fmt.Sprintf("contract.domains[%d]: %v", i, err))
		}
	}
	if len(c.Capabilities) == 0 {
		problems = append(problems, "contract.capabilities: at least one capability is required")
	}
	for _, k := range c.Capabilities {
		if !slices.Contains(Capabilities, k) {
			problems = append(problems, fmt.Sprintf("contract.capabilities: %q is unknown (known: %v)", k, Capabilities))
		}
	}
	for _, k := range c.Confirm {
		if !slices.Contains(c.Capabilities, k) {
			problems = append(problems, fmt.Sprintf("contract.confirm: %q is not one of the contract's capabilities", k))
		}
	}
	if c.MaxSideEffects < 0 {
		problems = append(problems, "contract.max_side_effects: must be >= 0")
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// TaskRequest is what a task is created from. The same idempotency key with
// an identical request (by canonical JSON) returns the original task.
type TaskRequest struct {
	Title    string          `json:"title,omitempty"`
	Source   string          `json:"source,omitempty"` // calendar, api, mcp, cli
	Contract Contract        `json:"contract"`
	Input    json.RawMessage `json:"input,omitempty"`
}

// Task status values.
const (
	TaskOpen      = "open"
	TaskCancelled = "cancelled"
	TaskDone      = "done"
)

// Task is a durable coordination object.
type Task struct {
	ID              string
	IdempotencyKey  string
	Request         TaskRequest
	Contract        Contract
	Status          string
	OwnerGeneration int64
	// ConnectionGeneration and InteractionGeneration: see ClaimTask and
	// TakeTurn (migration 0011).
	ConnectionGeneration  int64
	InteractionGeneration int64
	Result                json.RawMessage
	Grants                []Grant
	// Continuity is what the agent driving the task last reported of
	// itself (SetContinuity); nil before any report.
	Continuity *Continuity
	// FinishedAt is when the task was finished (zero: not yet): it accepts
	// no more intents and becomes done once they are settled.
	FinishedAt time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Key namespaces: every task's idempotency key starts with the namespace
// of whoever made it, so that no request can reach another's keys (an
// agent's "calendar:x" is stored as "agent:calendar:x").
const (
	KeyCalendar = "calendar:" // a calendar entry's id
	KeyPlanner  = "planner:"  // a planner candidate's hash
	KeyAgent    = "agent:"    // an agent's Idempotency-Key (REST or MCP)
	KeyPerson   = "person:"   // the person's Idempotency-Key (REST with the user token)
)

// KeyNamespaces lists the namespaces CreateTask accepts.
var KeyNamespaces = []string{KeyCalendar, KeyPlanner, KeyAgent, KeyPerson}

func checkKeyNamespace(key string) error {
	for _, ns := range KeyNamespaces {
		if strings.HasPrefix(key, ns) && len(key) > len(ns) {
			return nil
		}
	}
	return fmt.Errorf("the idempotency key must start with one of %v and name something after it", KeyNamespaces)
}

// Grant is one extra domain a person approved for one task.
type Grant struct {
	Domain    string
	GrantedBy string
	CreatedAt time.Time
}

// TaskEvent is one entry of a task's append-only history.
type TaskEvent struct {
	Generation int64
	Kind       string
	Detail     string
	At         time.Time
}

// CreateTask creates a task under an idempotency key, which starts with
// its maker's namespace (KeyNamespaces). The same key with an identical
// request returns the original task and created=false; the same key with
// a different request returns ErrConflict and changes nothing. There is no
// way to change a contract afterwards.
func (db *DB) CreateTask(ctx context.Context, key string, req TaskRequest) (t Task, created bool, err error) {
	if strings.TrimSpace(key) == "" {
		return Task{}, false, errors.New("create task: an idempotency key is required")
	}
	if err := checkKeyNamespace(key); err != nil {
		return Task{}, false, fmt.Errorf("create task: %w", err)
	}
	if err := req.Contract.Validate(); err != nil {
		return Task{}, false, fmt.Errorf("create task: %w", err)
	}
	reqJSON, err := Canonicalize(req)
	if err != nil {
		return Task{}, false, fmt.Errorf("create task: %w", err)
	}
	contractJSON, err := Canonicalize(req.Contract)
	if err != nil {
		return Task{}, false, fmt.Errorf("create task: %w", err)
	}
	var id string
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		var existingID, existingReq string
		err := tx.QueryRowContext(ctx, `SELECT id, request_json FROM tasks WHERE idempotency_key = ?`, key).Scan(&existingID, &existingReq)
		if err == nil {
			if existingReq != string(reqJSON) {
				return fmt.Errorf("%w: task key %q was used for another request", ErrConflict, key)
			}
			id = existingID
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		id = newID("task")
		now := nanos(db.now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO tasks (id, idempotency_key, request_json, contract_json, status, created_at, updated_at)
			VALUES (?, ?, ?, ?, 'open', ?, ?)`, id, key, string(reqJSON), string(contractJSON), now, now); err != nil {
			return err
		}
		created = true
		return insertTaskEvent(ctx, tx, id, 0, "created", "task created", now)
	})
	if err != nil {
		return Task{}, false, fmt.Errorf("create task: %w", err)
	}
	t, err = db.GetTask(ctx, id)
	return t, created, err
}

func insertTaskEvent(ctx context.Context, tx *sql.Tx, taskID string, gen int64, kind, detail string, at int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO task_events (task_id, generation, kind, detail, at) VALUES (?, ?, ?, ?, ?)`,
		taskID, gen, kind, detail, at)
	if err != nil {
		return fmt.Errorf("append task event: %w", err)
	}
	return nil
}

// GetTask returns a task with its grants, or ErrNotFound.
func (db *DB) GetTask(ctx context.Context, id string) (Task, error) {
	var t Task
	var reqJSON, contractJSON string
	var result sql.NullString
	var created, updated int64
	var finished sql.NullInt64
	var continuity sql.NullString
	err := db.read.QueryRowContext(ctx, `SELECT id, idempotency_key, request_json, contract_json, status, owner_generation,
		connection_generation, interaction_generation,
		result_json, finished_at, created_at, updated_at, continuity_json FROM tasks WHERE id = ?`, id).Scan(&t.ID, &t.IdempotencyKey, &reqJSON,
		&contractJSON, &t.Status, &t.OwnerGeneration, &t.ConnectionGeneration, &t.InteractionGeneration, &result, &finished, &created, &updated, &continuity)
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, fmt.Errorf("task %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Task{}, fmt.Errorf("read task %s: %w", id, err)
	}
	if err := json.Unmarshal([]byte(reqJSON), &t.Request); err != nil {
		return Task{}, fmt.Errorf("read task %s: request: %w", id, err)
	}
	if err := json.Unmarshal([]byte(contractJSON), &t.Contract); err != nil {
		return Task{}, fmt.Errorf("read task %s: contract: %w", id, err)
	}
	if result.Valid {
		t.Result = json.RawMessage(result.String)
	}
	if continuity.Valid {
		t.Continuity = new(Continuity)
		if err := json.Unmarshal([]byte(continuity.String), t.Continuity); err != nil {
			return Task{}, fmt.Errorf("read task %s: continuity: %w", id, err)
		}
	}
	t.CreatedAt, t.UpdatedAt, t.FinishedAt = fromNanos(created), fromNanos(updated), fromNullNanos(finished)
	rows, err := db.read.QueryContext(ctx, `SELECT domain, granted_by, created_at FROM task_grants WHERE task_id = ? ORDER BY id`, id)
	if err != nil {
		return Task{}, fmt.Errorf("read grants of %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var g Grant
		var at int64
		if err := rows.Scan(&g.Domain, &g.GrantedBy, &at); err != nil {
			return Task{}, fmt.Errorf("read grants of %s: %w", id, err)
		}
		g.CreatedAt = fromNanos(at)
		t.Grants = append(t.Grants, g)
	}
	return t, rows.Err()
}

// AddGrant records a domain a person approved for one task. The caller
// checks it against the configured ceiling; the ledger keeps it apart from
// the contract. Granting the same domain twice changes nothing.
func (db *DB) AddGrant(ctx context.Context, taskID, domain, by string) error {
	if domain == "" || by == "" {
		return errors.New("add grant: domain and grantor are required")
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var status string
		if err := tx.QueryRowContext(ctx, `SELECT status FROM tasks WHERE id = ?`, taskID).Scan(&status); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %s: %w", taskID, ErrNotFound)
		} else if err != nil {
			return err
		}
		now := nanos(db.now())
		res, err := tx.ExecContext(ctx, `INSERT INTO task_grants (task_id, domain, granted_by, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (task_id, domain) DO NOTHING`, taskID, domain, by, now)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		return insertTaskEvent(ctx, tx, taskID, 0, "grant", "domain "+domain+" granted by "+by, now)
	})
	if err != nil {
		return fmt.Errorf("add grant: %w", err)
	}
	return nil
}

// SetTaskStatus moves an open task to cancelled or done, with a result. A
// task that is no longer open does not change (ErrIllegalTransition).
func (db *DB) SetTaskStatus(ctx context.Context, id, status string, result json.RawMessage, reason string) error {
	if status != TaskCancelled && status != TaskDone {
		return fmt.Errorf("set task status: %q is not cancelled or done", status)
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var cur string
		if err := tx.QueryRowContext(ctx, `SELECT status FROM tasks WHERE id = ?`, id).Scan(&cur); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %s: %w", id, ErrNotFound)
		} else if err != nil {
			return err
		}
		if cur != TaskOpen {
			return fmt.Errorf("%w: task is %s", ErrIllegalTransition, cur)
		}
		now := nanos(db.now())
		var res any
		if len(result) > 0 {
			res = string(result)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE tasks SET status = ?, result_json = ?, updated_at = ? WHERE id = ?`, status, res, now, id); err != nil {
			return err
		}
		return insertTaskEvent(ctx, tx, id, 0, status, reason, now)
	})
	if err != nil {
		return fmt.Errorf("set task %s %s: %w", id, status, err)
	}
	return nil
}

// FinishTask records that an open task takes no more intents: a pass
// makes it done once every intent it has is settled. Finishing twice
// changes nothing; a task that is no longer open returns
// ErrIllegalTransition.
func (db *DB) FinishTask(ctx context.Context, id, reason string) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var cur string
		var finished sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT status, finished_at FROM tasks WHERE id = ?`, id).Scan(&cur, &finished)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %s: %w", id, ErrNotFound)
		} else if err != nil {
			return err
		}
		if cur != TaskOpen {
			return fmt.Errorf("%w: the task is %s", ErrIllegalTransition, cur)
		}
		if finished.Valid {
			return nil
		}
		now := nanos(db.now())
		if _, err := tx.ExecContext(ctx, `UPDATE tasks SET finished_at = ?, updated_at = ? WHERE id = ?`, now, now, id); err != nil {
			return err
		}
		return insertTaskEvent(ctx, tx, id, 0, "finished", reason, now)
	})
	if err != nil {
		return fmt.Errorf("finish task %s: %w", id, err)
	}
	return nil
}

// TaskEvents returns a task's history, oldest first.
func (db *DB) TaskEvents(ctx context.Context, id string) ([]TaskEvent, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT generation, kind, detail, at FROM task_events WHERE task_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("read task events: %w", err)
	}
	defer rows.Close()
	var out []TaskEvent
	for rows.Next() {
		var e TaskEvent
		var at int64
		if err := rows.Scan(&e.Generation, &e.Kind, &e.Detail, &at); err != nil {
			return nil, fmt.Errorf("read task events: %w", err)
		}
		e.At = fromNanos(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// OpenTasks returns the open tasks, oldest first.
func (db *DB) OpenTasks(ctx context.Context) ([]Task, error) {
	return db.tasksWhere(ctx, "open tasks", `SELECT id FROM tasks WHERE status = 'open' ORDER BY created_at, id`)
}

// ListTasks returns tasks, newest first, at most limit (0: all); with
// sources, only the tasks of those sources (TaskRequest.Source).
func (db *DB) ListTasks(ctx context.Context, limit int, sources ...string) ([]Task, error) {
	q := `SELECT id FROM tasks`
	var args []any
	if len(sources) > 0 {
		q += ` WHERE json_extract(request_json, '$.source') IN (?` + strings.Repeat(", ?", len(sources)-1) + `)`
		for _, s := range sources {
			args = append(args, s)
		}
	}
	q += ` ORDER BY created_at DESC, id`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	return db.tasksWhere(ctx, "list tasks", q, args...)
}

// tasksWhere returns the tasks whose ids query q selects, in its order;
// what names the listing in errors.
func (db *DB) tasksWhere(ctx context.Context, what, q string, args ...any) ([]Task, error) {
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out := make([]Task, 0, len(ids))
	for _, id := range ids {
		t, err := db.GetTask(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// TaskIntent is one intent an agent submitted to a task.
type TaskIntent struct {
	ID        string
	TaskID    string
	Request   json.RawMessage
	Effects   int // side effects it makes: a thread one per part
	CreatedAt time.Time
}

// AddTaskIntent records an intent for a task (canonical JSON request)
// that makes effects side effects (a thread one per part). The same
// request twice returns the first and created=false. In the same
// transaction it checks that the task is open and not finished
// (ErrIllegalTransition otherwise) and that the contract's bound holds for
// the effects of every intent accepted so far plus this one
// (ErrSideEffectBound otherwise), so that parallel submissions can never
// pass the bound together.
func (db *DB) AddTaskIntent(ctx context.Context, taskID string, request any, effects int) (ti TaskIntent, created bool, err error) {
	raw, err := Canonicalize(request)
	if err != nil {
		return TaskIntent{}, false, fmt.Errorf("add task intent: %w", err)
	}
	if effects < 1 {
		return TaskIntent{}, false, fmt.Errorf("add task intent: effects %d, want at least 1", effects)
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		var status, contractJSON string
		var finished sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT status, contract_json, finished_at FROM tasks WHERE id = ?`, taskID).Scan(&status, &contractJSON, &finished)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("task %s: %w", taskID, ErrNotFound)
		} else if err != nil {
			return err
		}
		var id string
		var at int64
		err = tx.QueryRowContext(ctx, `SELECT id, created_at FROM task_intents WHERE task_id = ? AND request_json = ?`, taskID, string(raw)).Scan(&id, &at)
		if err == nil {
			ti = TaskIntent{ID: id, TaskID: taskID, Request: raw, Effects: effects, CreatedAt: fromNanos(at)}
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if status != TaskOpen {
			return fmt.Errorf("%w: the task is %s", ErrIllegalTransition, status)
		}
		if finished.Valid {
			return fmt.Errorf("%w: the task is finished and accepts no more intents", ErrIllegalTransition)
		}
		var c Contract
		if err := json.Unmarshal([]byte(contractJSON), &c); err != nil {
			return fmt.Errorf("task %s: contract: %w", taskID, err)
		}
		if c.MaxSideEffects > 0 {
			var used int
			if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(effects), 0) FROM task_intents WHERE task_id = ?`, taskID).Scan(&used); err != nil {
				return err
			}
			if used+effects > c.MaxSideEffects {
				return fmt.Errorf("%w: the contract bounds the task to %d side effects; %d are submitted and this intent makes %d",
					ErrSideEffectBound, c.MaxSideEffects, used, effects)
			}
		}
		now := db.now()
		ti = TaskIntent{ID: newID("int"), TaskID: taskID, Request: raw, Effects: effects, CreatedAt: now}
		if _, err := tx.ExecContext(ctx, `INSERT INTO task_intents (id, task_id, request_json, effects, created_at) VALUES (?, ?, ?, ?, ?)`,
			ti.ID, taskID, string(raw), effects, nanos(now)); err != nil {
			return err
		}
		created = true
		return insertTaskEvent(ctx, tx, taskID, 0, "intent", "intent "+ti.ID+" submitted", nanos(now))
	})
	if err != nil {
		return TaskIntent{}, false, fmt.Errorf("add task intent: %w", err)
	}
	return ti, created, nil
}

// TaskIntents returns a task's intents in submission order; with taskID ""
// the intents of every open task.
func (db *DB) TaskIntents(ctx context.Context, taskID string) ([]TaskIntent, error) {
	q := `SELECT i.id, i.task_id, i.request_json, i.effects, i.created_at FROM task_intents i JOIN tasks t ON t.id = i.task_id`
	var args []any
	if taskID != "" {
		q += ` WHERE i.task_id = ?`
		args = append(args, taskID)
	} else {
		q += ` WHERE t.status = 'open'`
	}
	rows, err := db.read.QueryContext(ctx, q+` ORDER BY i.created_at, i.rowid`, args...)
	if err != nil {
		return nil, fmt.Errorf("task intents: %w", err)
	}
	defer rows.Close()
	var out []TaskIntent
	for rows.Next() {
		var ti TaskIntent
		var raw string
		var at int64
		if err := rows.Scan(&ti.ID, &ti.TaskID, &raw, &ti.Effects, &at); err != nil {
			return nil, fmt.Errorf("task intents: %w", err)
		}
		ti.Request, ti.CreatedAt = json.RawMessage(raw), fromNanos(at)
		out = append(out, ti)
	}
	return out, rows.Err()
}
