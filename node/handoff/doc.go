// Package handoff keeps provider records where lookups look as the
// federation changes: a household hands the records its DHT holds (its
// own and its peers') to the peers that become the closest to their keys
// (households joining, or moving up when others leave), as Kademlia's
// rule for newly met nodes says, instead of leaving them on the peers
// that were closest when the federation was smaller until the provider's
// next reprovide (22 h). docs/federation.md, "a federation that grows".
//
// # Files
//
//   - held.go: Held, the index of the records the DHT holds, each with
//     its expiry (kad-dht's provider store can list nothing, and keeps
//     no expiry of a handed-over record's own); Observe, the host as the
//     DHT gets it, whose DHT streams read through a tee that notes every
//     ADD_PROVIDER a peer sends for itself.
//   - handoff.go: the Service: every 2 s it compares the routing table
//     with the one before and, for each record held, sends it to the
//     peers that entered the Closest (20) to its key, when the household
//     is itself among the Closest (20) it knew before;
//     and it takes what peers send on /metamesh/handoff/1.0.0
//     (protocol.WriteHandoff, ReadHandoff), for the keys it is among the
//     closest to. It also asks each peer that enters its own 20 closest
//     (by its peer ID) for the records it should hold
//     (/metamesh/handoff-ask/1.0.0), and answers such asks (a peer at
//     most every 30 s): a holder whose table is full where a newcomer
//     is may never meet it, but the newcomer meets its nearest peers at
//     once.
//   - handoff_test.go: real hosts on loopback: a newcomer closer to a key
//     is handed its record and a lookup through it finds the provider; a
//     hostile sender's broken streams and self-naming records are
//     refused.
//
// # Goroutines and concurrency
//
// Start runs the routing-table watcher (one goroutine, sending to at most
// four peers at once); libp2p runs a handler goroutine per inbound
// stream. Close stops both. Held and the tee are safe for concurrent use.
//
// # Rules
//
//   - A handed-over record keeps the expiry its provider's provide gave
//     it (at most the DHT's validity, 48 h); the receiver's DHT stores it
//     as a provide made then, and it is handed on only until that expiry.
//     A record outlives its provider's last provide by at most one
//     validity.
//   - A receiver stores only records of keys it is among the 20 closest
//     to, as its own routing table sees them, never a record naming
//     itself; a stream that breaks the protocol's caps is reset and
//     nothing of its message is kept.
package handoff
