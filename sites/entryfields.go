package sites

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/kind"
)

// EntryFieldSpec declares one named entry field an action takes beyond
// its text: a post's category, its tags, a page's excerpt. An intent (a
// calendar entry's fields:, an agent's "fields") sets it by name. Type is
// "text" (the default: one text), "choice" (one text of Choices) or
// "list" (several texts). Required: an intent must set it. The action's
// fields, steps and open template use it as {fields.NAME}; a list field
// only in steps, which then run once for each of its texts. Check, a
// selector that may name the field's value inside :text("…") or
// :name("…"), must match exactly one element once the steps ran, for
// each text the intent set, before the click: it is how the page shows
// the field was set (a checked category, a tag's token). A field filled
// (fields[].value) is read back as the text is and needs no Check.
type EntryFieldSpec struct {
	Type     string   `yaml:"type"`
	Choices  []string `yaml:"choices"`
	Required bool     `yaml:"required"`
	Check    string   `yaml:"check"`
}

// The types of an entry field.
const (
	fieldText   = "text"
	fieldChoice = "choice"
	fieldList   = "list"
)

func (f *EntryFieldSpec) typ() string {
	if f.Type == "" {
		return fieldText
	}
	return f.Type
}

// stepKeys are the keys a typing step may press.
var stepKeys = map[string]bool{"Enter": true, "Tab": true, "Escape": true, ",": true}

// fieldRefRE is a template's reference to an entry field.
var fieldRefRE = regexp.MustCompile(`\{fields\.([^{}]*)\}`)

// fieldRefs returns the entry fields s names, in order, each once.
func fieldRefs(ss ...string) []string {
	var out []string
	for _, s := range ss {
		for _, m := range fieldRefRE.FindAllStringSubmatch(s, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// selectors are the step's selectors, each of which may name an entry
// field inside its words.
func (s *StepSpec) selectors() []*string {
	return []*string{&s.Click, &s.Type, &s.If, &s.Unless, &s.Wait, &s.Gone}
}

// fieldRefs are the entry fields the step names in its templates.
func (s StepSpec) fieldRefs() []string {
	return fieldRefs(s.Click, s.Type, s.If, s.Unless, s.Wait, s.Gone, s.Value)
}

// needsFields are the entry fields the step needs set: those its
// templates name and those of Needs.
func (s StepSpec) needsFields() []string {
	out := s.fieldRefs()
	for _, n := range s.Needs {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// fillEntryField returns the entry field a fill's value is ({fields.NAME}
// as the whole value).
func fillEntryField(v string) (string, bool) {
	m := fieldRefRE.FindStringSubmatch(v)
	if m == nil || m[0] != v {
		return "", false
	}
	return m[1], true
}

// entryFieldURLNames are the placeholders of the entry fields an open
// template may take: the required text and choice fields.
func (a *ActionSpec) entryFieldURLNames() []string {
	var out []string
	for name, f := range a.EntryFields {
		if f != nil && f.typ() != fieldList && f.Required {
			out = append(out, "fields."+name)
		}
	}
	slices.Sort(out)
	return out
}

// inWords reports whether every {fields.…} in sel stands inside the words
// of its :text("…") or :name("…").
func inWords(sel string) bool {
	refs := fieldRefRE.FindAllStringIndex(sel, -1)
	if len(refs) == 0 {
		return true
	}
	if !wordsSelectorRE.MatchString(sel) {
		return false
	}
	start := max(strings.LastIndex(sel, `:text("`), strings.LastIndex(sel, `:name("`))
	return refs[0][0] > start
}

// validateEntryFields checks an action's entry fields and every use of
// them: declared, of a type a place takes, and each read back.
func (a *ActionSpec) validateEntryFields(p *problems, path string, k kind.Kind) {
	names := slices.Sorted(maps.Keys(a.EntryFields))
	if len(names) > 0 && k != kind.Post && k != kind.Reply {
		p.add(path+".entry_fields", "only a post or a reply takes entry fields")
		return
	}
	if len(names) > intent.MaxFields {
		p.add(path+".entry_fields", "declares %d, at most %d", len(names), intent.MaxFields)
	}
	used := map[string]bool{}
	readBack := map[string]bool{}
	declared := func(where, name string) *EntryFieldSpec {
		f, ok := a.EntryFields[name]
		if !ok || f == nil {
			p.add(where, "{fields.%s}: no such entry field (declare it under entry_fields)", name)
			return nil
		}
		used[name] = true
		return f
	}
	for i, f := range a.fills() {
		fp := fmt.Sprintf("%s.fields[%d].value", path, i)
		if a.Fill != nil {
			fp = path + ".fill.value"
		}
		if name, ok := fillEntryField(f.Value); ok {
			if ef := declared(fp, name); ef != nil {
				if ef.typ() == fieldList {
					p.add(fp, "{fields.%s} is a list: a step types each of its texts (type, value, key)", name)
				}
				readBack[name] = true
			}
		}
	}
	for _, n := range fieldRefs(a.Open) {
		if ef := declared(path+".open", n); ef != nil {
			if ef.typ() == fieldList || !ef.Required {
				p.add(path+".open", "{fields.%s} names the page: it must be a required text or choice", n)
			}
			readBack[n] = true // preflight compares the page opened with it
		}
	}
	for phase, steps := range map[string][]StepSpec{"before": a.Before, "steps": a.Steps} {
		for i, st := range steps {
			sp := fmt.Sprintf("%s.%s[%d]", path, phase, i)
			for _, n := range st.Needs {
				declared(sp+".needs", n)
			}
			lists := 0
			for _, n := range st.fieldRefs() {
				if ef := declared(sp, n); ef != nil && ef.typ() == fieldList {
					lists++
				}
			}
			if lists > 1 {
				p.add(sp, "names more than one list field: it runs once for each text of one")
			}
			for _, sel := range st.selectors() {
				if !inWords(*sel) {
					p.add(sp, "%q: an entry field stands in a selector only inside its :text(\"…\") or :name(\"…\")", *sel)
				}
			}
		}
	}
	for _, n := range names {
		f, fp := a.EntryFields[n], path+".entry_fields."+n
		if !intent.FieldNamePattern.MatchString(n) {
			p.add(fp, "name %q: lowercase letters, digits and _, starting with a letter (at most 32)", n)
		}
		if f == nil {
			p.add(fp, "needs at least its type")
			continue
		}
		switch f.typ() {
		case fieldText, fieldList:
			if len(f.Choices) > 0 {
				p.add(fp+".choices", "only a choice has choices")
			}
		case fieldChoice:
			if len(f.Choices) == 0 {
				p.add(fp+".choices", "required: the texts the field may be")
			}
			for i, c := range f.Choices {
				if strings.TrimSpace(c) == "" || slices.Contains(f.Choices[:i], c) {
					p.add(fmt.Sprintf("%s.choices[%d]", fp, i), "must be a text, and each once")
				}
			}
		default:
			p.add(fp+".type", "%q is not one of text, choice, list", f.Type)
		}
		if f.Check != "" {
			checkSelector(p, fp+".check", f.Check, false)
			for _, r := range fieldRefs(f.Check) {
				if r != n {
					p.add(fp+".check", "{fields.%s}: a field's check names only the field itself", r)
				}
			}
			if !inWords(f.Check) {
				p.add(fp+".check", "%q: the field stands in a selector only inside its :text(\"…\") or :name(\"…\")", f.Check)
			}
			readBack[n] = true
		}
		switch {
		case !used[n]:
			p.add(fp, "is never used: name it as {fields.%s} in a field's value, a step or open", n)
		case !readBack[n]:
			p.add(fp+".check", "required: how the page shows the field was set (a selector matched once per text before the click), since no field is filled with it")
		}
	}
	r := a.Result
	if r != nil {
		a.validateEntryFieldReads(p, path+".result", r.EntryFields)
	}
	if a.Search != nil {
		a.validateEntryFieldReads(p, path+".search", a.Search.EntryFields)
		if a.Search.OpenEach != nil {
			a.validateEntryFieldReads(p, path+".search.open_each", a.Search.OpenEach.EntryFields)
		}
	}
}

// validateEntryFieldReads checks an item's readers of entry fields: each
// names a field the action declares.
func (a *ActionSpec) validateEntryFieldReads(p *problems, path string, reads map[string]*FieldSpec) {
	for n, fs := range reads {
		fp := path + ".entry_fields." + n
		if _, ok := a.EntryFields[n]; !ok {
			p.add(fp, "the action declares no entry field %q", n)
			continue
		}
		if !fs.set() || fs.Page || fs.Template != "" || fs.Layout != "" || fs.Shows != "" {
			p.add(fp, "reads the field's texts: give a selector in the item, and an attribute or pattern when needed")
			continue
		}
		checkField(p, fp, fs, true, nil)
	}
}

// RefuseFields returns why the adapter's action of kind k cannot take the
// entry fields f, naming the field at fault ("" for a required one, by
// its name in the error); nil when it takes them.
func (d *Declarative) RefuseFields(k kind.Kind, f intent.Fields) (string, error) {
	a := d.spec.Actions.get(k)
	if a == nil {
		if len(f) == 0 {
			return "", nil
		}
		return "", fmt.Errorf("site %q has no %s", d.name, k)
	}
	for _, n := range f.Names() {
		ef, ok := a.EntryFields[n]
		v := f[n]
		switch {
		case !ok:
			return n, fmt.Errorf("site %q takes no entry field %q on a %s (it takes: %s)", d.name, n, k, describeNames(a.EntryFields))
		case ef.typ() == fieldList && !v.IsList:
			return n, fmt.Errorf("entry field %s of site %q is a list of texts: write it as one ([%q])", n, d.name, v.String())
		case ef.typ() != fieldList && v.IsList:
			return n, fmt.Errorf("entry field %s of site %q is one text, not a list", n, d.name)
		case ef.typ() == fieldChoice && !slices.Contains(ef.Choices, v.Texts[0]):
			return n, fmt.Errorf("entry field %s of site %q is one of %s, not %q", n, d.name, strings.Join(ef.Choices, ", "), v.Texts[0])
		}
	}
	for _, n := range slices.Sorted(maps.Keys(a.EntryFields)) {
		if _, set := f[n]; a.EntryFields[n].Required && !set {
			return n, fmt.Errorf("site %q needs entry field %s on a %s", d.name, n, k)
		}
	}
	return "", nil
}

func describeNames(m map[string]*EntryFieldSpec) string {
	if len(m) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

// wordsEscape writes a text as it stands inside the quoted words of a
// :text("…") or :name("…") selector: a JSON string's content.
func wordsEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// expandSteps turns an action's steps into the steps the intent's entry
// fields make of them: a step naming a field the intent does not set is
// left out, one naming a list field is one step per text, and each
// {fields.NAME} is replaced, escaped as words in a selector, as itself in
// a value.
func expandSteps(steps []StepSpec, f intent.Fields) []StepSpec {
	var out []StepSpec
	for _, st := range steps {
		if len(st.needsFields()) == 0 {
			out = append(out, st)
			continue
		}
		missing, list := false, ""
		for _, n := range st.needsFields() {
			if _, ok := f[n]; !ok {
				missing = true
			}
		}
		for _, n := range st.fieldRefs() {
			if f[n].IsList {
				list = n
			}
		}
		if missing {
			continue
		}
		texts := []string{""}
		if list != "" {
			texts = f[list].Texts
		}
		for _, t := range texts {
			value := func(n string) string {
				if n == list {
					return t
				}
				return f[n].Texts[0]
			}
			c := st
			for _, sel := range c.selectors() {
				*sel = fieldRefRE.ReplaceAllStringFunc(*sel, func(m string) string {
					return wordsEscape(value(fieldRefRE.FindStringSubmatch(m)[1]))
				})
			}
			c.Value = fieldRefRE.ReplaceAllStringFunc(c.Value, func(m string) string {
				return value(fieldRefRE.FindStringSubmatch(m)[1])
			})
			out = append(out, c)
		}
	}
	return out
}

// checkWait bounds how long a field's check waits to match once.
const checkWait = 5 * time.Second

// readBackFields checks, after the steps and before the click, that the
// page shows each entry field the intent set the way the adapter says it
// shows one set (EntryFieldSpec.Check): exactly one element for each of
// its texts. A field that does not show so fails the preparation; nothing
// was submitted.
func (d *Declarative) readBackFields(ctx context.Context, tab *browser.Tab, a *ActionSpec, f intent.Fields) error {
	for _, n := range f.Names() {
		ef := a.EntryFields[n]
		if ef == nil || ef.Check == "" {
			continue
		}
		for _, t := range f[n].Texts {
			sel := strings.ReplaceAll(ef.Check, "{fields."+n+"}", wordsEscape(t))
			count := 0
			err := pollFor(ctx, checkWait, 50*time.Millisecond, func(ctx context.Context) (bool, error) {
				var err error
				count, err = tab.Count(ctx, sel)
				return count == 1, err
			}, func(err error) error {
				var nw errNotWithin
				if errors.As(err, &nw) {
					return fmt.Errorf("%w: entry field %s: the page does not show %q set: %q matched %d elements, want exactly 1",
						ErrReadBackMismatch, n, excerpt(t), sel, count)
				}
				return stepErr("entry field "+n+": check", sel, err)
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// entryFieldFill reads a fill's value: the entry field it is
// ({fields.NAME}), whether the intent sets it. A fill of a field the
// intent leaves unset is left as the page has it.
func entryFieldFill(fs FillSpec, in Intent) (want string, skip bool) {
	name, ok := fillEntryField(fs.Value)
	if !ok {
		return fillValue(fs, in.Text), false
	}
	v, set := in.Fields[name]
	if !set {
		return "", true
	}
	return v.Texts[0], false
}

// readEntryFields reads the entry fields reads declares from one item's
// extracted values (every match, by name "fields.NAME").
func readEntryFields(reads map[string]*FieldSpec, m map[string]browser.Found) (map[string][]string, []string) {
	if len(reads) == 0 {
		return nil, nil
	}
	out := map[string][]string{}
	var problems []string
	for n, fs := range reads {
		texts := []string{}
		for _, v := range m["fields."+n].Values {
			v, ok := fs.capture(v)
			if !ok {
				problems = append(problems, "entry field does not match its pattern")
				continue
			}
			if v = strings.TrimSpace(v); v != "" {
				texts = append(texts, v)
			}
		}
		out[n] = texts
	}
	return out, problems
}

// entryFieldExtract are the browser fields that read an item's entry
// fields: every match of each.
func entryFieldExtract(reads map[string]*FieldSpec) []browser.Field {
	var out []browser.Field
	for _, n := range slices.Sorted(maps.Keys(reads)) {
		fs := reads[n]
		out = append(out, browser.Field{Name: "fields." + n, Selector: fs.Selector, Attr: fs.Attribute, All: true})
	}
	return out
}
