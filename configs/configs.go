// Package configs embeds the bundled site adapters, so browserop works
// without a sites directory, and holds the example configuration beside them.
package configs

import "embed"

// Sites holds the bundled site adapters as sites/NAME.yaml.
//
//go:embed sites/*.yaml
var Sites embed.FS
