package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `browserop torture --dir` on a folder that is not there makes it; a seed
// the harness cannot run (here: a "browser" that exits at once) is a
// harness error, not a failed seed, and the run still exits 1.
func TestTortureCommandHarnessErrors(t *testing.T) {
	for _, p := range []string{"/bin/false", "/bin/true"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("no %s", p)
		}
	}
	c := newCLI(t)
	dir := filepath.Join(c.dir, "not", "there")
	code, stdout, stderr := c.run("torture", "--seeds", "1", "--browser", "/bin/false", "--bin", "/bin/true", "--dir", dir, "--quiet")
	if code != 1 {
		t.Errorf("exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "torture: 0 passed, 0 failed, 1 harness errors (seeds not run: 1)") ||
		!strings.Contains(stdout, " failed=0 ") || !strings.Contains(stdout, " harness_errors=1 ") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("--dir was not made: %v", err)
	}

	code, _, stderr = c.run("torture", "--adapter-fault", "nope", "--browser", "/bin/false")
	if code != 2 || !strings.Contains(stderr, `unknown adapter fault "nope"`) || !strings.Contains(stderr, "theme_change") {
		t.Errorf("--adapter-fault nope: exit %d\n%s", code, stderr)
	}
}
