package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/browserop/browserop/calendar"
	intents "github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// Planner runs an external command that proposes candidate actions. Its
// output is untrusted: it is parsed strictly against a fixed schema, and a
// candidate can only name what to do, never authority or budgets, which
// come from the configuration alone.
type Planner struct {
	// Command is the argv to run; empty means no planner.
	Command []string
	// Timeout bounds one run. Defaults to 30s.
	Timeout time.Duration
	// MaxOutput bounds stdout in bytes. Defaults to 1 MiB.
	MaxOutput int
}

// Observations is what the planner is shown on stdin.
type Observations struct {
	Now     time.Time          `json:"now"`
	Sites   []ObservedSite     `json:"sites"`
	Budgets []ObservedBudget   `json:"budgets"`
	Recent  []ObservedAction   `json:"recent_actions"`
	Due     []ObservedCalendar `json:"due_calendar_entries"`
}

// ObservedSite is a configured site and the actor browserop acts as there.
type ObservedSite struct {
	Name    string   `json:"name"`
	Origins []string `json:"origins"`
}

// ObservedBudget is one limit's remaining room.
type ObservedBudget struct {
	Limit     string   `json:"limit"`
	Formats   []string `json:"formats"`
	Remaining int      `json:"remaining"`
}

// ObservedAction is a recent action, without its payload.
type ObservedAction struct {
	Type      string `json:"type"`
	Status    string `json:"status"`
	TargetURL string `json:"target_url,omitempty"`
	Result    string `json:"result,omitempty"`
}

// ObservedCalendar is a due calendar entry, by id and type.
type ObservedCalendar struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// Candidate is one request the planner proposes, with its score and the
// evidence for it. It attaches no media.
type Candidate struct {
	intents.Request
	Score    float64 `json:"score"`
	Evidence string  `json:"evidence"`
}

// MaxCandidates bounds one planner answer.
const MaxCandidates = 100

// ErrPlanner wraps every planner failure; the pass goes on without its
// candidates.
var ErrPlanner = errors.New("planner")

// Plan runs the planner with obs on stdin and returns its validated
// candidates. A timeout, a non-zero exit, output over MaxOutput, or output
// that is not the schema is an error wrapping ErrPlanner; a single invalid
// candidate makes the whole answer invalid (a planner that emits garbage is
// not trusted for the rest).
func (p Planner) Plan(ctx context.Context, obs Observations) ([]Candidate, error) {
	if len(p.Command) == 0 {
		return nil, nil
	}
	timeout, limit := p.Timeout, p.MaxOutput
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if limit <= 0 {
		limit = 1 << 20
	}
	in, err := json.Marshal(obs)
	if err != nil {
		return nil, fmt.Errorf("%w: encode observations: %v", ErrPlanner, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Command[0], p.Command[1:]...)
	cmd.Stdin = bytes.NewReader(in)
	killGroupOnCancel(cmd)
	cmd.WaitDelay = time.Second
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4096}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPlanner, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: start %s: %v", ErrPlanner, p.Command[0], err)
	}
	out, readErr := io.ReadAll(io.LimitReader(stdout, int64(limit)+1))
	if len(out) > limit {
		_ = cmd.Cancel()
		_ = cmd.Wait()
		return nil, fmt.Errorf("%w: output exceeds %d bytes", ErrPlanner, limit)
	}
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%w: no answer within %s", ErrPlanner, timeout)
	case waitErr != nil:
		return nil, fmt.Errorf("%w: %s: %v (stderr: %s)", ErrPlanner, p.Command[0], waitErr, strings.TrimSpace(stderr.String()))
	case readErr != nil:
		return nil, fmt.Errorf("%w: read output: %v", ErrPlanner, readErr)
	}
	return ParseCandidates(out)
}

// ParseCandidates validates a planner answer:
// {"candidates": [{site, actor, type, target, text, parts, score, evidence}]}
// with no other fields anywhere.
func ParseCandidates(out []byte) ([]Candidate, error) {
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var answer struct {
		Candidates []Candidate `json:"candidates"`
	}
	if err := dec.Decode(&answer); err != nil {
		return nil, fmt.Errorf("%w: output is not the candidate schema: %v", ErrPlanner, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: output has data after the answer", ErrPlanner)
	}
	if answer.Candidates == nil {
		return nil, fmt.Errorf("%w: output has no \"candidates\" list", ErrPlanner)
	}
	if len(answer.Candidates) > MaxCandidates {
		return nil, fmt.Errorf("%w: %d candidates, at most %d", ErrPlanner, len(answer.Candidates), MaxCandidates)
	}
	for i, c := range answer.Candidates {
		if err := c.validate(); err != nil {
			return nil, fmt.Errorf("%w: candidates[%d]: %v", ErrPlanner, i, err)
		}
	}
	return answer.Candidates, nil
}

func (c Candidate) validate() error {
	if p := c.Request.Check("part_media"); p != nil {
		return p
	}
	switch {
	case len(c.Media) > 0 || len(c.PartMedia) > 0:
		return errors.New("a candidate takes no media")
	case len(c.Fields) > 0:
		return errors.New("a candidate takes no entry fields")
	case c.Score < 0 || c.Score > 1 || c.Score != c.Score:
		return fmt.Errorf("score %v is not within 0..1", c.Score)
	case strings.TrimSpace(c.Evidence) == "":
		return errors.New("evidence is required")
	case utf8.RuneCountInString(c.Evidence) > 2000:
		return errors.New("evidence is longer than 2000 characters")
	}
	return nil
}

type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// plan asks the planner command for candidates and carries those that pass
// the quality gate through the same path as calendar entries. A planner
// failure is reported and costs only its candidates.
func (p *pass) plan(due []calendar.Entry) error {
	if len(p.r.planner.Command) == 0 || p.stopped != "" {
		return nil
	}
	obs, err := p.observations(due)
	if err != nil {
		return err
	}
	cands, err := p.r.planner.Plan(p.ctx, obs)
	if err != nil {
		if errors.Is(err, ErrPlanner) {
			p.sum.count(CountPlannerFailures)
			p.problem(err.Error())
			return nil
		}
		return err
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Score > cands[j].Score })
	for _, c := range cands {
		if c.Score < p.r.cfg.QualityThreshold {
			p.sum.count(CountQualitySkips)
			p.sum.Actions = append(p.sum.Actions, ActionReport{Type: c.Type.Kind, Site: c.Site, Status: StatusQualitySkip,
				Reason: fmt.Sprintf("score %.2f is below the threshold %.2f", c.Score, p.r.cfg.QualityThreshold)})
			continue
		}
		site, ok := p.r.sites[c.Site]
		if !ok {
			p.problem(fmt.Sprintf("planner: a candidate names site %q, which has no adapter", c.Site))
			continue
		}
		key := candidateKey(c)
		e := calendar.Entry{Request: c.Request, ID: key, At: p.r.now()}
		// The contract comes from configuration; the planner names only what to do.
		task, _, err := p.r.db.CreateTask(p.ctx, key, ledger.TaskRequest{Title: "planner candidate", Source: tasks.SourcePlanner,
			Contract: contractFor(site, c.Type.Capability()), Input: entryInput(calendar.Entry{Request: c.Request, ID: "planner"})})
		if err != nil {
			return err
		}
		if task.Status != ledger.TaskOpen {
			continue // done (its candidate is settled) or cancelled
		}
		conn, err := p.claim(task.ID, -1)
		if err != nil {
			return err
		}
		from := len(p.sum.Actions)
		if !c.Type.IsThread() {
			_, err := p.process(entryIntent(e, task, ownTask(key)), "", false)
			p.nameSite(from, c.Site)
			if err != nil {
				return err
			}
			if _, err := p.claim(task.ID, conn); err != nil {
				return err
			}
			continue
		}
		parent := c.Target
		for i := range c.Parts {
			a, err := p.process(threadPart(e, task, ownTask(key), i, parent), "", false)
			if err != nil {
				return err
			}
			if a.Status != ledger.Verified {
				break
			}
			parent = a.CanonicalResult
		}
		p.nameSite(from, c.Site)
		if _, err := p.claim(task.ID, conn); err != nil {
			return err
		}
	}
	return nil
}

// observations is what the planner is shown: sites, remaining budgets,
// recent actions without payloads, and due calendar entries by id.
func (p *pass) observations(due []calendar.Entry) (Observations, error) {
	obs := Observations{Now: p.r.now(), Sites: []ObservedSite{}, Budgets: []ObservedBudget{}, Recent: []ObservedAction{}, Due: []ObservedCalendar{}}
	for _, name := range p.r.siteNames() {
		obs.Sites = append(obs.Sites, ObservedSite{Name: name, Origins: p.r.sites[name].Origins()})
	}
	usage, err := p.r.db.BudgetUsage(p.ctx, p.r.policy)
	if err != nil {
		return obs, err
	}
	for _, u := range usage {
		obs.Budgets = append(obs.Budgets, ObservedBudget{Limit: u.Limit.Name, Formats: u.Limit.Formats, Remaining: u.Remaining()})
	}
	acts, err := p.r.db.ListActions(p.ctx, ledger.ActionFilter{})
	if err != nil {
		return obs, err
	}
	if len(acts) > 50 {
		acts = acts[len(acts)-50:]
	}
	for _, a := range acts {
		obs.Recent = append(obs.Recent, ObservedAction{Type: string(a.Type), Status: string(a.Status), TargetURL: a.TargetURL, Result: a.CanonicalResult})
	}
	for _, e := range due {
		obs.Due = append(obs.Due, ObservedCalendar{ID: e.ID, Type: e.Type.String()})
	}
	return obs, nil
}
