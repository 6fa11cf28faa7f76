//go:build !unix

package regularfile

import "os"

// openNonblocking opens path read-only: without FIFOs there is nothing to
// wait on.
func openNonblocking(path string) (*os.File, error) { return os.Open(path) }

// appendFlags open a file for appending.
const appendFlags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
