// Package waiting is how every test of the module waits on a node, a
// store, an ingester or a process: one guard, Guard, long enough that a
// loaded machine only makes a wait longer, never a test red. The guard
// is there to end a hang with a message; no test asserts how long
// anything took. A case that needs longer (a compose testnet's bulk
// ingest, a simulation of hundreds of households) says so with Limit;
// no wait is shorter than Guard.
//
// # Files
//
//   - waiting.go: Guard, For (poll a condition), Until (poll a check
//     that says why it is not yet true, and say how long it took),
//     Context (a context that ends at the guard), Recv (the next value
//     from a channel), After.
//   - option.go: the options of For and Until, Limit (a longer guard
//     for a case that needs it) and Every (poll less often), and the
//     polling loop they share.
//   - waiting_test.go: For and Until when the condition holds and when
//     it never does, and the options.
package waiting
