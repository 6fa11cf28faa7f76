package mwsite

import (
	"reflect"
	"testing"
)

func TestSections(t *testing.T) {
	text := "Intro\n== One ==\n\nFirst.\n=== Sub ===\nMore.\n\n==Two==  \nSecond.\n= Top =\nNot in a section."
	want := []Section{{Heading: "One", Text: "First.\n=== Sub ===\nMore."}, {Heading: "Two", Text: "Second."}}
	if got := Sections(text); !reflect.DeepEqual(got, want) {
		t.Errorf("Sections = %q, want %q", got, want)
	}
	if got := Sections("No heading."); got != nil {
		t.Errorf("Sections(no heading) = %q, want none", got)
	}
}
