package wpsite

// User is an account of the test site, with its password.
type User struct {
	Login    string
	Password string
	Email    string
	// Role is WordPress's role: administrator, editor, author.
	Role string
	// FirstName and LastName make the display name ("First Last"); without
	// them WordPress shows the login.
	FirstName, LastName string
}

// DisplayName is the name WordPress shows for the user (in the admin bar,
// on posts and comments): "First Last", or the login.
func (u User) DisplayName() string {
	switch {
	case u.FirstName != "" && u.LastName != "":
		return u.FirstName + " " + u.LastName
	case u.FirstName != "":
		return u.FirstName
	case u.LastName != "":
		return u.LastName
	}
	return u.Login
}

// The accounts every site has. Admin installs it (user 1). Alice is an
// author (she publishes her own posts; her comments on others' posts go
// through moderation like anyone's) whose display name differs from her
// login; Carol is an author whose display name is her login.
var (
	Admin = User{Login: "admin", Password: "admin-test-pass", Email: "admin@example.test", Role: "administrator"}
	Alice = User{Login: "alice", Password: "alice-test-pass", Email: "alice@example.test", Role: "author",
		FirstName: "Alice", LastName: "Liddell"}
	Carol = User{Login: "carol", Password: "carol-test-pass", Email: "carol@example.test", Role: "author"}
)

// Users are the site's accounts, the administrator first.
var Users = []User{Admin, Alice, Carol}
