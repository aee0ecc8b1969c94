// Package testnet will hold the multi-node harness (in-process nodes and
// the docker-compose testnet) and its scenario tests. It is empty until
// nodes federate: today a node runs alone. Production code never imports
// it.
package testnet
