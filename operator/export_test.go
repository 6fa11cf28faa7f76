package operator

// TabMarker is tabMarker, for tests that play a pass that died.
var TabMarker = tabMarker
