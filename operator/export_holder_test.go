package operator

// ProcessStart is processStart, for tests that name a holder.
var ProcessStart = processStart
