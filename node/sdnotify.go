package node

import (
	"fmt"
	"net"
	"strings"
)

// notifier tells a service manager (systemd's Type=notify) how the node
// is: READY=1 once it serves, STOPPING=1 when it begins to stop, a
// STATUS= line a person reads in systemctl status. It speaks the
// protocol of sd_notify(3): one datagram a message on the unix socket
// NOTIFY_SOCKET names, "@" standing for the abstract namespace. With no
// socket it does nothing.
type notifier struct {
	socket string
}

// send writes the newline-separated assignments state to the socket.
func (n notifier) send(state ...string) error {
	if n.socket == "" {
		return nil
	}
	addr := n.socket
	if strings.HasPrefix(addr, "@") {
		addr = "\x00" + addr[1:]
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("service manager notify socket %s: %w", n.socket, err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(strings.Join(state, "\n"))); err != nil {
		return fmt.Errorf("service manager notify socket %s: %w", n.socket, err)
	}
	return nil
}
