package mwsite

import (
	"context"
	"strings"
)

// Section is one level-2 section of a page's wikitext: its heading and
// its text (up to the next heading of level 1 or 2), without the space
// around them.
type Section struct {
	Heading, Text string
}

// Sections returns the level-2 sections of wikitext, in order, headings
// found as countSections finds them. Text before the first is in none.
func Sections(wikitext string) []Section {
	var out []Section
	var body []string
	in := false // the lines are a section's (not before the first, nor under a level-1 heading)
	flush := func() {
		if in {
			out[len(out)-1].Text = strings.TrimSpace(strings.Join(body, "\n"))
		}
		body = nil
	}
	for _, line := range strings.Split(wikitext, "\n") {
		if level, heading := headingOf(line); level == 1 || level == 2 {
			flush()
			in = level == 2
			if in {
				out = append(out, Section{Heading: heading})
			}
			continue
		}
		body = append(body, line)
	}
	flush()
	return out
}

// headingOf returns the level and text of a heading line (0 for a line
// that is not one), as MediaWiki's parser reads /^(={1,6})(.+)\1\s*$/.
func headingOf(line string) (int, string) {
	line = strings.TrimRight(line, " \t\r")
	lead := len(line) - len(strings.TrimLeft(line, "="))
	trail := len(line) - len(strings.TrimRight(line, "="))
	level := min(lead, trail, 6)
	if level == 0 || len(line) <= 2*level {
		return 0, ""
	}
	return level, strings.TrimSpace(line[level : len(line)-level])
}

// TalkSections returns how many level-2 sections of every talk page's
// current text (the Talk namespace) are headed heading and hold text,
// both compared without the space around them.
func (s *Site) TalkSections(ctx context.Context, heading, text string) (int, error) {
	rows, err := s.Query(ctx, "SELECT page_title FROM page WHERE page_namespace = 1")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		wikitext, err := s.PageText(ctx, "Talk:"+r[0])
		if err != nil {
			return 0, err
		}
		for _, sec := range Sections(wikitext) {
			if sec.Heading == strings.TrimSpace(heading) && sec.Text == strings.TrimSpace(text) {
				n++
			}
		}
	}
	return n, nil
}
