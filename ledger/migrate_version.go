package ledger

// LatestSchemaVersion is the schema version this build's migrations lead
// to: a ledger at a lower SchemaVersion has migrations pending.
func LatestSchemaVersion() int { return latestVersion() }
