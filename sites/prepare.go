package sites

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/verify"
)

// stepTimeout bounds a step's wait for an element to go away.
const stepTimeout = 15 * time.Second

// Fill prepares an action for its committing click. It waits until the
// page is ready (the action's ready, else the site's), runs the steps
// before filling, fills each field with its part of the intent's text and
// reads it back, attaches the intent's media (MediaSpec: upload, alt text,
// read back), runs the steps before the click, and reads every field and
// the attached media back once more: a step must not have changed what
// was filled. A failed or unfinished upload returns ErrUploadFailed. A
// read-back that differs from the intended value (compared as verify
// compares texts) returns ErrReadBackMismatch; a page that never became
// ready or a step that did not work returns ErrStepFailed. A text field
// holding a value browserop did not put there, or one that changed after
// it read back what it typed, is never typed over (fillTracked): Fill
// records it (in.Provenance) and returns a HardStop of kind
// StopFieldNotOurs, and the action waits for a person. Nothing is
// submitted. An intent whose search could not compare a part it fixes
// (Uncompared) returns ErrUnverifiable before anything is done. It returns
// the field values read back, joined by "\n".
func (d *Declarative) Fill(ctx context.Context, tab *browser.Tab, in Intent) (got string, err error) {
	a, err := d.action(in.Kind)
	if err != nil {
		return "", err
	}
	if parts := d.Uncompared(in); len(parts) > 0 {
		return "", fmt.Errorf("%w: its search cannot compare the %s", ErrUnverifiable, strings.Join(parts, " and the "))
	}
	if err := d.waitReady(ctx, tab, a.Ready); err != nil {
		return "", onPage(ctx, tab, err)
	}
	// From the first step on, whatever happens, what the page sent is
	// looked at before anything is reported: a step may have sent the
	// submission (sentBefore).
	landing := signsOf(a.Landed)
	w, err := tab.WatchSends(ctx, landing)
	if err != nil {
		return "", onPage(ctx, tab, err)
	}
	defer func() {
		if why := sentBefore(ctx, w, landing); why != "" {
			if err != nil {
				why += "; then: " + err.Error()
			}
			got, err = "", fmt.Errorf("%w: %s", ErrSentBeforeClick, why)
		}
	}()
	if err := d.targetPartShown(ctx, tab, in); err != nil {
		return "", err
	}
	if err := d.runSteps(ctx, tab, expandSteps(a.Before, in.Fields), "before", a.Ready); err != nil {
		return "", onPage(ctx, tab, err)
	}
	fields := a.fills()
	vals := make([]string, len(fields))
	for i, f := range fields {
		want, skip := entryFieldFill(f, in)
		if skip {
			continue
		}
		v, err := fillTracked(ctx, tab, f, want, trackField(in, i, f))
		if err != nil {
			return "", onPage(ctx, tab, err)
		}
		if err := compareFill(i, want, v); err != nil {
			return v, err
		}
		vals[i] = v
	}
	if err := d.attach(ctx, tab, in.Kind, in.Media); err != nil {
		return "", err
	}
	if err := d.runSteps(ctx, tab, expandSteps(a.Steps, in.Fields), "steps", a.Ready); err != nil {
		return "", onPage(ctx, tab, err)
	}
	for i, f := range fields {
		want, skip := entryFieldFill(f, in)
		if skip {
			continue
		}
		v, err := readField(ctx, tab, f)
		if err != nil {
			return "", fmt.Errorf("%w: field %d could not be read after the steps: %v", ErrStepFailed, i, err)
		}
		if !sameFill(strings.ReplaceAll(vals[i], "\ufeff", ""), v) {
			// Changed since browserop read it back: whoever changed it,
			// what it holds now is not browserop's to send or replace.
			return "", trackField(in, i, f).hold(ctx, FieldUserEdited)
		}
		if err := compareFill(i, want, v); err != nil {
			return v, err
		}
	}
	if err := d.readBackFields(ctx, tab, a, in.Fields); err != nil {
		return "", onPage(ctx, tab, err)
	}
	if len(in.Media) > 0 && len(a.Steps) > 0 {
		if err := a.Media.readBack(ctx, tab, in.Media); err != nil {
			return "", err
		}
	}
	return strings.Join(vals, "\n"), nil
}

// targetPartShown refuses, before anything is typed, a reply whose target
// names a part of its page (a comment's #comment-N, a fragment the
// canonical rule keeps) when the page holds no element of that id: the
// comment was removed, or is on another page of comments. The adapter's
// steps that put the form under it (a step with if) would then be skipped,
// and the reply published to the page itself, under no comment: an effect
// nobody asked for, never verified.
func (d *Declarative) targetPartShown(ctx context.Context, tab *browser.Tab, in Intent) error {
	if !in.Kind.HasParent() || !d.partOfPage(in.Kind, in.Target) {
		return nil
	}
	u, err := url.Parse(in.Target)
	if err != nil || u.Fragment == "" {
		return nil
	}
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(u.Fragment)
	n, err := tab.Count(ctx, `[id="`+quoted+`"]`)
	if err != nil {
		return fmt.Errorf("%w: the target's #%s could not be looked for: %v", ErrStepFailed, excerpt(u.Fragment), err)
	}
	if n != 1 {
		return fmt.Errorf("%w: the target names #%s, and the page holds %d elements of that id (removed, or on another page of the list): "+
			"the reply could not be put under it; nothing was submitted", ErrStepFailed, excerpt(u.Fragment), n)
	}
	return nil
}

// onPage names, in a step's failure, the page it failed on; other errors
// are returned as they are.
func onPage(ctx context.Context, tab *browser.Tab, err error) error {
	if !errors.Is(err, ErrStepFailed) {
		return err
	}
	u, uerr := tab.URL(ctx)
	if uerr != nil {
		u = "a page whose address could not be read"
	}
	return fmt.Errorf("%w (on %s)", err, excerptURL(u))
}

// excerptURL shortens a page's address for an error message.
func excerptURL(u string) string {
	if r := []rune(u); len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return u
}

// compareFill compares a field's read-back with what was meant, as
// verification compares texts. Rich editors keep a U+FEFF in an empty
// line for the caret (the WordPress block editor does): it is not text.
// An editor's paragraphs read back joined by "\n", and lines it kept in
// one paragraph by U+2028 (see browser.Tab.Value): a text whose lines
// became one paragraph differs from the text meant, paragraph by
// paragraph, and the error says so.
func compareFill(i int, want, got string) error {
	if sameFill(want, got) {
		return nil
	}
	if strings.ContainsRune(got, '\u2028') && !strings.ContainsRune(want, '\u2028') &&
		sameFill(want, strings.ReplaceAll(got, "\u2028", "\n")) {
		return fmt.Errorf("%w: field %d: the editor kept the text's lines in one paragraph, as line breaks, where each line "+
			"was meant as a paragraph of its own (an editor that makes a paragraph only of the Enter key needs lines: enter on the field)",
			ErrReadBackMismatch, i)
	}
	return fmt.Errorf("%w: field %d: %s", ErrReadBackMismatch, i, describeMismatch(want, got))
}

func sameFill(want, got string) bool {
	return verify.Normalize(strings.ReplaceAll(got, "\ufeff", "")) == verify.Normalize(want)
}

// fillField fills one field for sites check, which keeps no provenance:
// a field holding a value check did not type is left as it is (see
// fillTracked).
func fillField(ctx context.Context, tab *browser.Tab, f FillSpec, text string) (string, error) {
	return fillTracked(ctx, tab, f, text, trackedField{name: fmt.Sprintf("the field %q", f.Selector)})
}

// trackedField is a text field Fill types into: its fingerprint and the
// ledger of its provenance (none: nothing recorded or remembered), and
// how a message names it (its place and selector: never what it holds).
type trackedField struct {
	ledger FieldLedger
	fp     string
	name   string
}

// trackField is the i-th field of the action in.Kind fills.
func trackField(in Intent, i int, f FillSpec) trackedField {
	sel := f.Selector
	if f.Frame != "" {
		sel = f.Frame + " >> " + f.Selector
	}
	return trackedField{ledger: in.Provenance, fp: FieldFingerprint(in.Kind, i, f), name: fmt.Sprintf("field %d (%q)", i, sel)}
}

// origin is what the field's ledger knows of value.
func (tf trackedField) origin(ctx context.Context, value string) (FieldOrigin, error) {
	if tf.ledger == nil {
		return FieldOrigin{}, nil
	}
	o, err := tf.ledger.FieldOrigin(ctx, tf.fp, value)
	if err != nil {
		return FieldOrigin{}, fmt.Errorf("%s: its provenance could not be read: %w", tf.name, err)
	}
	return o, nil
}

// record records s for the field (readBack: what browserop read back
// after typing it, for agent_filled).
func (tf trackedField) record(ctx context.Context, s FieldState, readBack string) error {
	if tf.ledger == nil {
		return nil
	}
	if err := tf.ledger.RecordField(ctx, tf.fp, s, readBack); err != nil {
		return fmt.Errorf("%s: its provenance (%s) could not be recorded: %w", tf.name, s, err)
	}
	return nil
}

// hold records s for the field and returns the HardStop that leaves what
// it holds to a person: nothing is typed over it and nothing submitted.
func (tf trackedField) hold(ctx context.Context, s FieldState) error {
	what := "holds text browserop did not type there"
	if s == FieldUserEdited {
		what = "changed after browserop read back what it typed there"
	}
	hs := hardStop(StopFieldNotOurs, nil, "%s %s (%s): it is left as it is, nothing was typed over it and nothing was submitted; "+
		"the action waits until a person sends or clears what the field holds", tf.name, what, s)
	if err := tf.record(ctx, s, ""); err != nil {
		return fmt.Errorf("%w (%w)", hs, err)
	}
	return hs
}

// blank reports whether a field's value holds nothing a person would
// lose: nothing but white space (an editor's empty paragraphs, the caret
// keeper U+FEFF).
func blank(v string) bool {
	return strings.TrimSpace(strings.ReplaceAll(v, "\ufeff", "")) == ""
}

// fillTracked fills one text field once it is visible and returns what it
// holds, keeping the person's text (docs/operator.md, "Field
// provenance"). A field that already holds exactly its value is left as
// it is: typing nothing into a rich editor's empty block would delete the
// block. Otherwise it types only over a blank field or over browserop's
// own text from its own earlier fill of this action in this tab and
// epoch (agent_filled, its read-back remembered by this process), and
// records agent_filled with what it read back. A field holding anything
// else is never typed into: one that changed since browserop's read-back
// is recorded user_edited, one holding a value nobody recorded
// unknown_external_change, and either (or a field already recorded so)
// returns a HardStop of kind StopFieldNotOurs. The fill itself types
// only over the value just read (browser.Over): a field that changed in
// between is held the same way.
func fillTracked(ctx context.Context, tab *browser.Tab, f FillSpec, text string, tf trackedField) (string, error) {
	var got string
	var err error
	sel := f.Selector
	if f.Frame != "" {
		sel = f.Frame
	}
	if err := tab.WaitVisible(ctx, sel, 0); err != nil {
		// Nothing was typed: a field that never shows (a selector the
		// page does not match, a step the adapter lacks) fails the
		// preparation, naming the selector, and stops no site.
		if errors.Is(err, browser.ErrTabGone) || errors.Is(err, browser.ErrBrowserGone) || errors.Is(err, context.Canceled) {
			return "", err
		}
		return "", fmt.Errorf("%w: the field %q never showed a visible element (%v)", ErrStepFailed, sel, err)
	}
	cur, err := readField(ctx, tab, f)
	if err != nil {
		// What it holds is not known: nothing is typed.
		if errors.Is(err, browser.ErrSelectorAmbiguous) || errors.Is(err, browser.ErrNotClickable) {
			return "", hardStop(StopSelectorAmbiguous, err, "editor")
		}
		return "", err
	}
	if sameFill(text, cur) {
		return cur, nil
	}
	o, err := tf.origin(ctx, cur)
	if err != nil {
		return "", err
	}
	switch {
	case o.State == FieldUserEdited || o.State == FieldUnknownChange:
		return "", tf.hold(ctx, o.State)
	case o.Changed:
		return "", tf.hold(ctx, FieldUserEdited)
	case o.State == FieldAgentFilled && o.Ours:
		// browserop's own text, read back after its own earlier fill
		// here: its own to replace.
	case blank(cur):
	default:
		return "", tf.hold(ctx, FieldUnknownChange)
	}
	opts := append(f.fillOptions(), browser.Over(cur))
	if f.Frame == "" {
		got, err = tab.Fill(ctx, f.Selector, text, opts...)
	} else {
		got, err = tab.FillFrame(ctx, f.Frame, f.Selector, text, opts...)
	}
	if errors.Is(err, browser.ErrFieldChanged) {
		if o.State == FieldAgentFilled {
			return "", tf.hold(ctx, FieldUserEdited)
		}
		return "", tf.hold(ctx, FieldUnknownChange)
	}
	if errors.Is(err, browser.ErrSelectorAmbiguous) || errors.Is(err, browser.ErrNotClickable) {
		return "", hardStop(StopSelectorAmbiguous, err, "editor")
	}
	if err != nil {
		return got, err
	}
	if err := tf.record(ctx, FieldAgentFilled, got); err != nil {
		return "", err
	}
	return got, nil
}

// readField reads what a field holds now.
func readField(ctx context.Context, tab *browser.Tab, f FillSpec) (string, error) {
	if f.Frame == "" {
		return tab.Value(ctx, f.Selector, f.fillOptions()...)
	}
	return tab.ValueFrame(ctx, f.Frame, f.Selector, f.fillOptions()...)
}

// fillOptions is how the browser types into the field and reads it.
func (f FillSpec) fillOptions() []browser.FillOption {
	if f.Lines == "enter" {
		return []browser.FillOption{browser.EnterLines()}
	}
	return nil
}

// waitReady waits until the page is ready: r, else the site's ready; with
// neither, it is ready once loaded.
func (d *Declarative) waitReady(ctx context.Context, tab *browser.Tab, r *ReadySpec) error {
	if r == nil {
		r = d.spec.Ready
	}
	if r == nil {
		return nil
	}
	if err := tab.WaitVisible(ctx, r.Selector, 0); err != nil {
		return stepErr("the page never became ready", r.Selector, err)
	}
	if r.Attribute == "" {
		return nil
	}
	return pollUntil(ctx, func(ctx context.Context) (bool, error) {
		v, err := tab.Attr(ctx, r.Selector, r.Attribute)
		if errors.Is(err, browser.ErrNotFound) {
			return false, nil
		}
		return v == r.Value, err
	}, func(err error) error { return stepErr("the page never became ready", r.Selector, err) })
}

// runSteps runs steps in order; phase names them in errors. After a step
// whose click loads a document it waits until the page is ready again
// (ready, else the site's).
func (d *Declarative) runSteps(ctx context.Context, tab *browser.Tab, steps []StepSpec, phase string, ready *ReadySpec) error {
	for i, st := range steps {
		what := fmt.Sprintf("%s[%d]", phase, i)
		if st.If != "" {
			run, err := stepNeeded(ctx, tab, st, what)
			if err != nil {
				return err
			}
			if !run {
				continue
			}
		}
		mark := tab.Documents()
		if st.Type != "" {
			if err := typeStep(ctx, tab, st, what); err != nil {
				return err
			}
		}
		if st.Click != "" {
			if err := tab.WaitClickable(ctx, st.Click, st.timeout(0)); err != nil {
				return stepErr(what+": click", st.Click, err)
			}
			if err := tab.ClickOnce(ctx, st.Click); err != nil {
				return stepErr(what+": click", st.Click, err)
			}
		}
		if st.Wait != "" {
			if err := tab.WaitVisible(ctx, st.Wait, st.timeout(0)); err != nil {
				return stepErr(what+": wait", st.Wait, err)
			}
		}
		if st.Gone != "" {
			err := pollFor(ctx, st.timeout(stepTimeout), 50*time.Millisecond, func(ctx context.Context) (bool, error) {
				n, err := tab.Count(ctx, st.Gone)
				return n == 0, err
			}, func(err error) error { return stepErr(what+": gone", st.Gone, err) })
			if err != nil {
				return err
			}
		}
		if st.Click != "" {
			// A step that loads a document (a preview) leaves a page whose
			// scripts have not run yet: wait until it is parsed and ready,
			// as after open, before the next step or field touches it.
			settle := time.Duration(0)
			if st.Wait == "" && st.Gone == "" {
				settle = documentSettle
			}
			loaded, err := tab.WaitDocument(ctx, mark, settle)
			if err != nil {
				return stepErr(what+": the document it loads", st.Click, err)
			}
			if loaded {
				if err := d.waitReady(ctx, tab, ready); err != nil {
					return fmt.Errorf("%s: after the document it loaded: %w", what, err)
				}
				if err := tab.RemarkSends(ctx); err != nil {
					return fmt.Errorf("%s: after the document it loaded: %w", what, err)
				}
			}
		}
	}
	return nil
}

// documentSettle is how long a step's click without a wait or gone is
// watched for the start of a document load: a form's submission starts
// its request a moment after the click.
const documentSettle = 200 * time.Millisecond

// timeout is the step's declared timeout, else def (0: the browser's
// action timeout).
func (s StepSpec) timeout(def time.Duration) time.Duration {
	if s.Timeout != nil {
		return time.Duration(*s.Timeout)
	}
	return def
}

// errStepContradicted is what a step's wait for its if ends on when the
// page shows both if and unless.
var errStepContradicted = errors.New("both if and unless match: the page shows the step is needed and that it is not")

// stepNeeded decides a step with an if, waiting for the page to say (see
// StepSpec): it polls until If or Unless matches an element, up to the
// step's timeout (15s by default). A page that shows neither is not read
// as "skip" at once: a list, a panel or a dialog drawn late by the page's
// scripts would be skipped, and the action would go out without it.
func stepNeeded(ctx context.Context, tab *browser.Tab, st StepSpec, what string) (bool, error) {
	run := false
	err := pollFor(ctx, st.timeout(stepTimeout), 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		n, err := tab.Count(ctx, st.If)
		if err != nil {
			return false, err
		}
		u := 0
		if st.Unless != "" {
			if u, err = tab.Count(ctx, st.Unless); err != nil {
				return false, err
			}
		}
		switch {
		case n > 0 && u > 0:
			return false, errStepContradicted
		case n > 0:
			run = true
			return true, nil
		case u > 0:
			return true, nil
		}
		return false, nil
	}, func(err error) error {
		var nw errNotWithin
		if errors.As(err, &nw) && st.Unless == "" {
			return nil // if never showed: not needed
		}
		if errors.As(err, &nw) {
			return stepErr(what+": if", st.If, fmt.Errorf("neither if nor unless (%q) matched %s", st.Unless, err))
		}
		return stepErr(what+": if", st.If, err)
	})
	return run, err
}

// stepErr makes a step's failure ErrStepFailed, except the loss of the tab
// or browser, which the operator handles as such. A step is declared not
// to commit anything, so even a click whose effect is unknown only failed
// the preparation: the inner error is kept as text, not as a chain.
func stepErr(what, sel string, err error) error {
	if errors.Is(err, browser.ErrTabGone) || errors.Is(err, browser.ErrBrowserGone) || errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%w: %s %q: %v", ErrStepFailed, what, sel, err)
}

// pollUntil calls cond every 50ms until it holds, fails, or stepTimeout
// passes; fail wraps what ended it.
func pollUntil(ctx context.Context, cond func(context.Context) (bool, error), fail func(error) error) error {
	return pollFor(ctx, stepTimeout, 50*time.Millisecond, cond, fail)
}

// errNotWithin is what pollFor hands fail when timeout passed.
type errNotWithin time.Duration

func (e errNotWithin) Error() string { return fmt.Sprintf("not within %s", time.Duration(e)) }

// pollFor calls cond every interval, with a context that ends at timeout,
// until it holds or fails. fail wraps what ended it: cond's error, an
// errNotWithin, or the error of ctx when ctx itself ended (a cancelled
// pass is not a failed step).
func pollFor(ctx context.Context, timeout, every time.Duration, cond func(context.Context) (bool, error), fail func(error) error) error {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(every)
	defer tick.Stop()
	ended := func() error {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		return fail(errNotWithin(timeout))
	}
	for {
		ok, err := cond(pctx)
		switch {
		case err != nil && pctx.Err() != nil:
			return ended()
		case err != nil:
			return fail(err)
		case ok:
			return nil
		}
		select {
		case <-tick.C:
		case <-pctx.Done():
			return ended()
		}
	}
}

// typeStep types a step's value into its element (StepSpec.Type), reads
// it back, and presses its key: a tag typed and committed with Enter. A
// read-back that differs fails the step before the key is pressed.
func typeStep(ctx context.Context, tab *browser.Tab, st StepSpec, what string) error {
	if err := tab.WaitVisible(ctx, st.Type, st.timeout(0)); err != nil {
		return stepErr(what+": type", st.Type, err)
	}
	got, err := tab.Fill(ctx, st.Type, st.Value)
	if err != nil {
		return stepErr(what+": type", st.Type, err)
	}
	if !sameFill(st.Value, got) {
		return fmt.Errorf("%w: %s: type %q: %s", ErrReadBackMismatch, what, st.Type, describeMismatch(st.Value, got))
	}
	if st.Key == "" {
		return nil
	}
	if err := tab.Press(ctx, st.Type, st.Key); err != nil {
		return stepErr(what+": key "+st.Key, st.Type, err)
	}
	return nil
}

// sentBefore says why what w saw since the action's preparation began
// could have carried its submission, "" when nothing could. What counts
// depends on what the action says its submission is (l, its landing):
//   - a response: a request it names (method, URL and body), whatever the
//     site answered. A form a step posts (a wiki's preview) does not
//     count: the adapter named the request that carries the submission.
//   - else (a navigation, an element): a form posted in any frame; and,
//     for an element, one drawn since the watch was armed, or marks lost
//     (nothing then tells that none was drawn).
//
// A page that could not be read for the new elements counts: nothing
// shows that none was drawn.
func sentBefore(ctx context.Context, w *browser.SendWatch, l browser.LandingSigns) string {
	s, err := w.Sends(context.WithoutCancel(ctx))
	var why []string
	if l.Response != nil {
		if s.Matched > 0 {
			why = append(why, fmt.Sprintf("%d request(s) the landing's response names were sent (the first to %s)", s.Matched, s.First))
		}
		return strings.Join(why, "; ")
	}
	if s.Posts > 0 {
		why = append(why, fmt.Sprintf("%d form(s) were posted (the first to %s)", s.Posts, s.First))
	}
	if l.Selector != "" {
		switch {
		case err != nil:
			why = append(why, fmt.Sprintf("the page could not be read for new elements matching the landing's %q: %v", l.Selector, err))
		case s.Lost:
			why = append(why, fmt.Sprintf("the page's marks of the landing's %q were lost, so new ones cannot be told apart", l.Selector))
		case s.New > 0:
			why = append(why, fmt.Sprintf("%d new element(s) matching the landing's %q appeared", s.New, l.Selector))
		}
	}
	return strings.Join(why, "; ")
}
