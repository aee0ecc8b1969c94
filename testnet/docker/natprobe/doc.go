// Command natprobe is the NAT testnet's probe, in the metamesh-node-nat
// image (testnet/compose/nat.yml): it connects to each address in turn
// from one local TCP port and prints the local address of each connection,
// so a listener on the internet side can see what the household's router
// made of that one port for each destination: the same public port every
// time behind a cone NAT, another one per destination behind a symmetric
// NAT. It reads each connection until the listener closes it.
//
//	natprobe -from 5555 192.0.0.129:40001 192.0.0.129:40002
//
// # Files
//
//   - main.go: the flags, the dials from one local port (SO_REUSEADDR),
//     one connection at a time.
//
// # Goroutines and concurrency
//
// One goroutine: the connections are made and read one after another.
package main
