package sites

// account returns the account of a login, each name defaulting to it.
func (d *Declarative) account(login string) AccountSpec {
	a := d.spec.Accounts[login]
	if a.Slug == "" {
		a.Slug = login
	}
	if a.Name == "" {
		a.Name = login
	}
	return a
}

// loginOf maps a name the page shows (shows: login, slug or name) back to
// the login it belongs to. A slug or display name that no account declares
// is taken as the login itself: by default all three are the same. A
// declared name always wins, and a login whose account declares another
// name of that sort is not taken from the page: that name belongs to
// someone else, and it comes back as "name:<shown>" (or "slug:"), which
// matches no login.
func (d *Declarative) loginOf(shown, shows string) string {
	if shows == "" || shows == "login" {
		return shown
	}
	pick := func(a AccountSpec) string {
		if shows == "name" {
			return a.Name
		}
		return a.Slug
	}
	for login, a := range d.spec.Accounts {
		if v := pick(a); v != "" && v == shown {
			return login
		}
	}
	if a, ok := d.spec.Accounts[shown]; ok && pick(a) != "" {
		return shows + ":" + shown
	}
	return shown
}
