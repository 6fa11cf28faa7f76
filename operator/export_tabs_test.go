package operator

// OnTabClose makes r call f at the two points of every close with proof:
// "before" (after the inventories before it) and "after" (after its
// receipt, before the inventories after it). f nil removes it.
func OnTabClose(r *Runner, f func(point string)) {
	if f == nil {
		tabCloseHooks.Delete(r)
		return
	}
	tabCloseHooks.Store(r, f)
}
