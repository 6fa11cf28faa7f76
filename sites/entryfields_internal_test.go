package sites

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/intent"
)

// TestExpandSteps: a step naming an entry field the intent does not set
// is left out, one naming a list field runs once per text, and a value
// stands in a selector's words escaped as a JSON string's content.
func TestExpandSteps(t *testing.T) {
	steps := []StepSpec{
		{Click: "#always"},
		{Needs: []string{"tags"}, Click: "#tags-panel"},
		{If: `#cats input:not(:checked):name("{fields.category}")`, Click: `#cats input:name("{fields.category}")`},
		{Type: "#tags input", Value: "{fields.tags}", Key: "Enter"},
	}
	got := expandSteps(steps, intent.Fields{"category": intent.Text(`Say "hi" \ now`), "tags": intent.List("a", "b c")})
	require.Equal(t, []StepSpec{
		{Click: "#always"},
		{Needs: []string{"tags"}, Click: "#tags-panel"},
		{If: `#cats input:not(:checked):name("Say \"hi\" \\ now")`, Click: `#cats input:name("Say \"hi\" \\ now")`},
		{Type: "#tags input", Value: "a", Key: "Enter"},
		{Type: "#tags input", Value: "b c", Key: "Enter"},
	}, got)
	require.Equal(t, []StepSpec{{Click: "#always"}}, expandSteps(steps, nil), "no field set: only the step that needs none")
	require.Equal(t, `#cats input:name("{fields.category}")`, steps[2].Click, "the adapter's steps are left as they are")
}
