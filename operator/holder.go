package operator

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

// newHolder names this process in the lease: where it runs (localHost),
// pid, the process's start time (so that a pid reused by another process is
// told apart) and a random part (so that two runners of one process are two
// holders).
func newHolder() string {
	start, _ := processStart(os.Getpid())
	if start == "" {
		start = "-"
	}
	return fmt.Sprintf("%s:%d:%s:%d", localHost(), os.Getpid(), start, rand.N(100000))
}

// localHost names the pid space this process runs in: the host name and,
// where the platform has them, the boot and the pid namespace (pidSpace).
// Two containers with one host name, or one machine across a reboot, are
// two. It is "" when the pid space cannot be told: then no holder is
// judged.
func localHost() string {
	host, _ := os.Hostname()
	space, ok := pidSpace()
	switch {
	case host == "" || !ok:
		return ""
	case space == "":
		return host
	}
	return host + "/" + space
}

// holderProcess parses a holder written by newHolder.
func holderProcess(holder string) (host string, pid int, start string, ok bool) {
	parts := strings.Split(holder, ":")
	if len(parts) < 4 {
		return "", 0, "", false
	}
	n := len(parts)
	pid, err := strconv.Atoi(parts[n-3])
	if err != nil || pid <= 0 {
		return "", 0, "", false
	}
	return strings.Join(parts[:n-3], ":"), pid, parts[n-2], true
}

// HolderDead reports whether holder names an operator process in this pid
// space (localHost: this host, boot and pid namespace) that provably no
// longer runs: its pid is gone (or a zombie), or the pid belongs to a
// process started at another time than the holder's. Anything it cannot
// prove (another host or pid namespace, a holder in another form, a
// platform that does not tell start times) is alive: the lease is then
// waited out.
func HolderDead(holder string) bool {
	host, pid, start, ok := holderProcess(holder)
	if !ok {
		return false
	}
	if h := localHost(); h == "" || h != host {
		return false
	}
	if pid == os.Getpid() {
		return false // this process: one of its runners, alive
	}
	now, exists := processStart(pid)
	if !exists {
		return true
	}
	return start != "-" && now != "" && now != start
}
