package verify

// Media is one media item: its type ("png", "jpeg", "gif", "webp") and its
// alternative text. On an intent, Alt is the intended alt text. On an item
// read from a page, AltShown says the page shows alt texts (an img's alt
// attribute) and Alt is what it shows; a site that hides them proves
// nothing about them (see the package doc).
type Media struct {
	Type     string
	Alt      string
	AltShown bool
}

// SameMedia reports whether an item's media (got) are the intended ones
// (want): as many, in the same order, each of the same type and, where the
// page shows alt texts, with the same alt text after Normalize.
func SameMedia(want, got []Media) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if got[i].Type != want[i].Type {
			return false
		}
		if got[i].AltShown && Normalize(got[i].Alt) != Normalize(want[i].Alt) {
			return false
		}
	}
	return true
}
