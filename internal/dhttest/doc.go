// Package dhttest helps tests that run real libp2p hosts with the node's
// DHT on loopback: Connect dials one from another and waits until their
// routing tables hold each other (through internal/waiting).
//
// # Files
//
//   - dhttest.go: Connect.
package dhttest
