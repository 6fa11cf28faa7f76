// Package bundled holds the files browserop ships: the site adapters
// embedded in the binary, so that browserop works without a sites
// directory, and beside them the example configuration and the example
// service units.
package bundled

import "embed"

// Sites holds the bundled site adapters as sites/NAME.yaml.
//
//go:embed sites/*.yaml
var Sites embed.FS

// Configured lists the bundled adapters that are configured sites as they
// are: the demo site's. The others (wordpress) need the person's own
// origin: they become sites once copied into sites.dir (see `browserop
// sites template NAME`).
var Configured = []string{"demo"}
