// Package operator runs browserop's passes: it takes the lease, reconciles
// unfinished actions, and carries each intent through reserve, preflight,
// perform once, verify and budget commit.
package operator
