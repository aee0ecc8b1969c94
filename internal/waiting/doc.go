// Package waiting is how every test of the module waits on a node, a
// store, an ingester or a process: one guard, Guard, long enough that a
// loaded machine only makes a wait longer, never a test red. The guard
// is there to end a hang with a message; no test asserts how long
// anything took.
//
// # Files
//
//   - waiting.go: Guard, For (poll a condition), Context (a context
//     that ends at the guard), Recv (the next value from a channel).
package waiting
