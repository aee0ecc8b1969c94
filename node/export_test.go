package node

import (
	"bufio"
	"net/http"
	"time"

	"github.com/libp2p/go-libp2p/core/network"

	"github.com/metamesh/node/protocol"
)

// Handler is the node's HTTP API handler (after Start), for tests that
// send it requests from addresses this machine cannot send from.
func (n *Node) Handler() http.Handler { return n.http.Handler }

// ForgeRecords makes n answer record requests as a hostile household
// would: at once, for any CID, with a record it signs that pairs the
// asked CID with pair (unless "") and carries meta. It speaks 1.0.0
// alone, as a household of before 1.1.0 does.
func (n *Node) ForgeRecords(pair string, meta map[string]string) {
	h := n.p2p.Host()
	key := h.Peerstore().PrivKey(h.ID())
	h.RemoveStreamHandler(protocol.RecordProtocolV11)
	h.SetStreamHandler(protocol.RecordProtocolID, func(s network.Stream) {
		defer s.Close()
		asked, err := protocol.ReadRequest(bufio.NewReader(s))
		if err != nil {
			s.Reset()
			return
		}
		cids := []string{asked}
		if pair != "" && pair != asked {
			cids = append(cids, pair)
		}
		rec, err := protocol.NewRecord(cids, meta, h.ID(), time.Now())
		if err != nil {
			s.Reset()
			return
		}
		env, err := protocol.SealRecord(rec, key)
		if err != nil {
			s.Reset()
			return
		}
		_ = protocol.WriteResponse(s, env)
	})
}

// AnswerRecordsAsV10 makes n answer record requests in 1.0.0 alone, as a
// household of before 1.1.0 does: its records carry no name.
func (n *Node) AnswerRecordsAsV10() {
	n.p2p.Host().RemoveStreamHandler(protocol.RecordProtocolV11)
}
