// Package configs embeds the bundled site adapters, so browserop works
// without a sites directory, and holds the example configuration beside them.
package configs

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
