package operator

import "errors"

// Errors the operator returns for the outcomes callers branch on. Package
// errcode maps them (with the ledger's, authority's and budgets') to exit
// codes, HTTP statuses and stable codes.
var (
	// ErrUsage: the request or command line is malformed.
	ErrUsage = errors.New("usage error")
	// ErrConfig: the configuration is invalid.
	ErrConfig = errors.New("configuration error")
	// ErrHardStop: the pass stopped all mutations (identity, blocker,
	// ownership, authority, an unresolved ambiguous action...).
	ErrHardStop = errors.New("hard stop")
	// ErrNeedsPerson: ambiguous actions wait for a person to resolve them.
	ErrNeedsPerson = errors.New("ambiguous actions need a person")
)
