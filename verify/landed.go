package verify

// LandedResult is what the page a submission landed on says about the item
// it created. A field counts only when the site adapter read it (ReadText,
// ReadAuthor): a field the adapter does not declare was not read, proves
// nothing, and is not required.
type LandedResult struct {
	Text       string
	ReadText   bool
	Author     string
	ReadAuthor bool
	Media      []Media
	ReadMedia  bool
	// Fields are the entry fields the landed page showed, by name (a name
	// absent was not read).
	Fields map[string][]string
}

const (
	reasonLandedText   = "the landed page shows a text other than the intended text as the site renders it"
	reasonLandedAuthor = "the landed page names an author other than the actor"
	reasonLandedMedia  = "the landed page shows other media than the intended (count, type or alt text)"
	reasonLandedFields = "the landed page shows other entry fields than the intended (a category, tags)"
)

// CheckLandedResult returns why the landed page contradicts the intent: the text
// it read is not the intended text (both after Normalize), the author it
// read is not the actor (ignoring one leading "@"), or the media it read
// are not the intended ones (SameMedia), or an entry field it read shows
// other texts than the intended (SameFields). It returns "" when
// nothing it read does. A landed page that contradicts the intent is not
// this action's proof: whatever a search finds, the action is not verified
// on it, and since the submission evidently created something, it is not
// proven absent either. The reason is a fixed string.
func CheckLandedResult(in Intent, l LandedResult) string {
	switch {
	case l.ReadText && Normalize(l.Text) != Normalize(in.Text):
		return reasonLandedText
	case l.ReadAuthor && handle(l.Author) != handle(in.Actor):
		return reasonLandedAuthor
	case l.ReadMedia && !SameMedia(in.Media, l.Media):
		return reasonLandedMedia
	case !SameFields(in.Fields, l.Fields):
		return reasonLandedFields
	}
	return ""
}
