package operator

// ProcessStart is processStart, for tests that name a holder.
var ProcessStart = processStart

// LocalHost is localHost, for tests that name a holder.
var LocalHost = localHost
