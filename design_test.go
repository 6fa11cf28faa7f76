package browserop_test

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/browserop/browserop/"

// TestDesignPackageTable holds docs/design.md's package table to the code:
// every package of the module has a row, and a row's imports are exactly
// the module's packages its packages import (go list, tests left out).
func TestDesignPackageTable(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fs := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fs[0], module)
		if !ok {
			continue
		}
		imports[pkg] = []string{}
		for _, imp := range fs[1:] {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				imports[pkg] = append(imports[pkg], rel)
			}
		}
	}

	f, err := os.Open("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	code := regexp.MustCompile("`([a-z][a-z/]*)`")
	rows := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), " | ")
		if len(cols) != 3 || !strings.HasPrefix(cols[0], "| `") {
			continue
		}
		var pkgs []string
		for _, m := range code.FindAllStringSubmatch(cols[0], -1) {
			pkgs = append(pkgs, m[1])
		}
		var want []string
		for _, m := range code.FindAllStringSubmatch(cols[2], -1) {
			want = append(want, m[1])
		}
		var got []string
		for _, p := range pkgs {
			rows[p] = true
			ims, ok := imports[p]
			if !ok {
				t.Errorf("design.md has a row for %s, which is no package of the module", p)
			}
			got = append(got, ims...)
		}
		if strings.HasPrefix(strings.TrimSpace(cols[2]), "all") {
			continue // cmd/browserop: the top, checked below
		}
		slices.Sort(got)
		got = slices.Compact(got)
		slices.Sort(want)
		want = slices.Compact(want)
		if !slices.Equal(got, want) {
			t.Errorf("design.md says %v import %v; they import %v", pkgs, want, got)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for pkg, ims := range imports {
		if !rows[pkg] {
			t.Errorf("package %s has no row in design.md's package table", pkg)
		}
		if slices.Contains(ims, "cmd/browserop") {
			t.Errorf("%s imports cmd/browserop, which design.md says nothing imports", pkg)
		}
		for _, im := range ims {
			if strings.HasPrefix(im, "internal/testrig/") && !strings.HasPrefix(pkg, "internal/testrig/") {
				t.Errorf("%s imports the test rig %s outside its tests", pkg, im)
			}
		}
	}
}
