package sites

// ExpandValue is (*Declarative).expandValue, for the tests of package
// sites_test.
func ExpandValue(d *Declarative, tmpl, value string) (string, error) {
	return d.expandValue(tmpl, value)
}
