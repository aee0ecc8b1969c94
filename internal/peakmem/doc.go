// Package peakmem measures the memory a piece of work takes at its
// peak, for the benchmarks that report a flood's memory as a ratio to
// one request alone (make bench).
//
// # Files
//
//   - peakmem.go: Measure (peak heap, sampled, and peak resident set).
package peakmem
