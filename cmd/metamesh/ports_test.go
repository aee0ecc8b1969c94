package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"testing"
)

// Ports the tests give their processes. A port picked by listening on :0
// and closing comes from the ephemeral range, where any outgoing
// connection of a test running beside may take it as its source port
// before the process binds it ("address already in use"). These come from
// below that range (Linux's starts at 32768), free on TCP and UDP alike
// when picked, and never twice in one run.
var ports struct {
	mu    sync.Mutex
	given map[int]bool
}

func freePortNumber(t *testing.T) int {
	t.Helper()
	ports.mu.Lock()
	defer ports.mu.Unlock()
	if ports.given == nil {
		ports.given = map[int]bool{}
	}
	for range 1000 {
		p := 20000 + rand.IntN(12000)
		if ports.given[p] {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		l.Close()
		u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		u.Close()
		ports.given[p] = true
		return p
	}
	t.Fatal("no free port between 20000 and 32000")
	return 0
}

// freePort is a TCP port nobody listens on.
func freePort(t *testing.T) int { t.Helper(); return freePortNumber(t) }

// freeUDPPort is a UDP port nobody listens on.
func freeUDPPort(t *testing.T) int { t.Helper(); return freePortNumber(t) }

// freeAddr is 127.0.0.1:<a free port>.
func freeAddr(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", freePortNumber(t))
}
