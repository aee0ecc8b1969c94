//go:build unix

package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

func main() {
	from := flag.Int("from", 0, "local TCP port to dial from (0: any)")
	timeout := flag.Duration("timeout", 5*time.Second, "time to connect, and then to wait for the listener to close")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: natprobe [-from PORT] [-timeout D] HOST:PORT...")
		os.Exit(2)
	}
	for _, addr := range flag.Args() {
		if err := probe(addr, *from, *timeout); err != nil {
			fmt.Fprintln(os.Stderr, "natprobe:", err)
			os.Exit(1)
		}
	}
}

// probe connects to addr from local port from (SO_REUSEADDR, so one port
// serves every address in turn) and waits for the other side to close.
func probe(addr string, from int, timeout time.Duration) error {
	d := net.Dialer{
		Timeout:   timeout,
		LocalAddr: &net.TCPAddr{Port: from},
		Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
			})
			if err != nil {
				return err
			}
			return serr
		},
	}
	c, err := d.Dial("tcp4", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Printf("%s -> %s\n", c.LocalAddr(), addr)
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	_, err = io.Copy(io.Discard, c)
	return err
}
