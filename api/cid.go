package api

import (
	"net/http"
	"strings"

	"github.com/metamesh/node/protocol"
)

// inspectCID answers GET /api/cid/<cid>: protocol.Inspect's description of
// one CID (codec, multihash, tier, rank, its normalised form). It reads
// nothing from the node; the web page uses it to label a record's CIDs.
func (s *Server) inspectCID(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r.URL.Query()); err != nil {
		writeError(w, err)
		return
	}
	info, err := protocol.Inspect(r.PathValue("cid"))
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), "invalid cid: ", "")
		writeError(w, badRequest("%s", msg))
		return
	}
	writeJSON(w, http.StatusOK, info)
}
