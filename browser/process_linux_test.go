package browser_test

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/browser"
)

// ProcessesOn finds the processes on a profile by their exact
// --user-data-dir argument, a dir with spaces included, and not those on a
// dir that only starts the same; KillProcessesOn kills exactly those.
func TestProcessesOn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a profile")
	start := func(arg string) *exec.Cmd {
		cmd := exec.Command("sh", "-c", "sleep 30", "sh", arg)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	on := start("--user-data-dir=" + dir)
	other := start("--user-data-dir=" + dir + "-other")
	require.Eventually(t, func() bool { return len(browser.ProcessesOn(dir)) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, []int{on.Process.Pid}, browser.ProcessesOn(dir))
	require.Equal(t, 1, browser.KillProcessesOn(dir))
	require.Error(t, on.Wait(), "killed")
	require.Empty(t, browser.ProcessesOn(dir))
	require.Equal(t, []int{other.Process.Pid}, browser.ProcessesOn(dir+"-other"), "the other profile's process lives")
	require.Empty(t, browser.ProcessesOn(""))
}
