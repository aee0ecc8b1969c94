package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"
)

// Editor is a Backend that writes the household's own values of its
// files' fields (an optional interface, as AnswerCache): the write API,
// PUT, DELETE and PATCH /api/meta/<cid> and POST /api/meta/batch.
type Editor interface {
	// Edit sets and deletes fields of the local file cid (any member of
	// its key-set) as one, and returns its document after. Errors wrap
	// model.ErrNotFound (no such file), model.ErrConflict (a file known
	// only from peers), ErrForbidden (a field of the node's own, named),
	// ErrTooLarge or model.ErrBadRequest (a field name).
	Edit(ctx context.Context, cid string, set map[string]string, del []string) (Document, error)
}

// The write API's caps: a PATCH's body and keys, a batch's items and
// body. A field name and value are capped by the backend (512 bytes,
// 64 KiB).
const (
	maxPatchBody  = 1 << 20
	maxPatchKeys  = 256
	maxBatchItems = 1000
	maxBatchBody  = 64 << 20
	maxPutBody    = 64<<10 + 1
)

func (s *Server) routeEdit() {
	// A field's routes end in one: on the CID alone they are not allowed
	// (the mux would otherwise redirect to the CID with a slash).
	for _, m := range []string{"PUT", "DELETE"} {
		s.mux.HandleFunc(m+" /api/meta/{cid}", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", "GET, HEAD, PATCH")
			writeErrorCode(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s is not allowed on %s: %s a field with %s /api/meta/<cid>/<field>", m, r.URL.Path, map[string]string{"PUT": "set", "DELETE": "drop"}[m], m))
		})
	}
	s.mux.HandleFunc("PUT /api/meta/{cid}/{key...}", s.putField)
	s.mux.HandleFunc("DELETE /api/meta/{cid}/{key...}", s.deleteField)
	s.mux.HandleFunc("PATCH /api/meta/{cid}", s.patchMeta)
	s.mux.HandleFunc("POST /api/meta/batch", s.batchMeta)
}

// editor is the backend's Editor, or a 405-like refusal when it has none.
func (s *Server) editor(w http.ResponseWriter) (Editor, bool) {
	e, ok := s.b.(Editor)
	if !ok {
		writeError(w, fmt.Errorf("%w: this node does not edit metadata", ErrForbidden))
	}
	return e, ok
}

// editOne runs one edit of the request's CID and answers its document.
func (s *Server) editOne(w http.ResponseWriter, r *http.Request, set map[string]string, del []string) {
	e, ok := s.editor(w)
	if !ok {
		return
	}
	c, err := ParseCID(r.PathValue("cid"))
	if err != nil {
		writeError(w, err)
		return
	}
	doc, err := e.Edit(r.Context(), c, set, del)
	if err != nil {
		s.logFailure(r, "edit", err, "cid", c)
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, doc)
}

// putField: PUT /api/meta/<cid>/<key…>, the value as the body: text
// (text/plain, or no type), or a JSON string or number
// (application/json).
func (s *Server) putField(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r.URL.Query()); err != nil {
		writeError(w, err)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPutBody))
	if err != nil {
		writeError(w, badRequest("reading the value: %v", err))
		return
	}
	if len(body) >= maxPutBody {
		writeError(w, fmt.Errorf("%w: a value of more than %d bytes", ErrTooLarge, maxPutBody-1))
		return
	}
	v := string(body)
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "", "text/plain":
	case "application/json":
		if v, err = jsonScalar(body); err != nil {
			writeError(w, err)
			return
		}
	default:
		writeError(w, badRequest("Content-Type %q: the value is text/plain, or application/json for a JSON string or number", mt))
		return
	}
	if !utf8.ValidString(v) {
		writeError(w, badRequest("the value is not UTF-8"))
		return
	}
	s.editOne(w, r, map[string]string{r.PathValue("key"): v}, nil)
}

// jsonScalar is the text of a JSON string or number.
func jsonScalar(b []byte) (string, error) {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", badRequest("the value is not JSON: %v", err)
	}
	if dec.More() {
		return "", badRequest("the value is more than one JSON value")
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	}
	return "", badRequest("the value is a JSON %T: want a string or a number (an object goes to PATCH /api/meta/<cid>)", v)
}

// deleteField: DELETE /api/meta/<cid>/<key…>.
func (s *Server) deleteField(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r.URL.Query()); err != nil {
		writeError(w, err)
		return
	}
	s.editOne(w, r, nil, []string{r.PathValue("key")})
}

// patchMeta: PATCH /api/meta/<cid> with a JSON object of fields to set
// (nested objects flattened with "/", arrays by index), null deleting.
func (s *Server) patchMeta(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r.URL.Query()); err != nil {
		writeError(w, err)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPatchBody+1))
	if err != nil {
		writeError(w, badRequest("reading the body: %v", err))
		return
	}
	if len(body) > maxPatchBody {
		writeError(w, fmt.Errorf("%w: a PATCH body of more than %d bytes", ErrTooLarge, maxPatchBody))
		return
	}
	set, del, err := ParsePatch(body)
	if err != nil {
		writeError(w, err)
		return
	}
	s.editOne(w, r, set, del)
}

// ParsePatch reads a PATCH body: a JSON object whose nested objects are
// flattened with "/" and arrays by index (the open schema's flat
// fields), strings, numbers and booleans set as their text, null
// deleting the field. At most 256 fields.
func ParsePatch(body []byte) (set map[string]string, del []string, err error) {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return nil, nil, badRequest("the body is not a JSON object: %v", err)
	}
	if dec.More() {
		return nil, nil, badRequest("the body is more than one JSON value")
	}
	if top == nil {
		return nil, nil, badRequest("the body is null: want a JSON object of fields")
	}
	set = map[string]string{}
	if err := flattenPatch(set, &del, "", top); err != nil {
		return nil, nil, err
	}
	if n := len(set) + len(del); n > maxPatchKeys {
		return nil, nil, fmt.Errorf("%w: %d fields, at most %d", ErrTooLarge, n, maxPatchKeys)
	}
	if len(set)+len(del) == 0 {
		return nil, nil, badRequest("no field to set or delete")
	}
	for _, k := range del {
		if _, ok := set[k]; ok {
			return nil, nil, badRequest("field %q is both set and deleted", k)
		}
	}
	sort.Strings(del)
	return set, del, nil
}

func flattenPatch(set map[string]string, del *[]string, key string, v any) error {
	join := func(k string) string {
		if key == "" {
			return k
		}
		return key + "/" + k
	}
	if len(set)+len(*del) > maxPatchKeys {
		return fmt.Errorf("%w: more than %d fields", ErrTooLarge, maxPatchKeys)
	}
	switch x := v.(type) {
	case nil:
		*del = append(*del, key)
	case map[string]any:
		if len(x) == 0 && key != "" {
			return badRequest("field %q: an empty object sets nothing", key)
		}
		for k, sub := range x {
			if err := flattenPatch(set, del, join(k), sub); err != nil {
				return err
			}
		}
	case []any:
		for i, sub := range x {
			if err := flattenPatch(set, del, join(fmt.Sprint(i)), sub); err != nil {
				return err
			}
		}
	case string:
		set[key] = x
	case json.Number:
		set[key] = x.String()
	case bool:
		set[key] = fmt.Sprint(x)
	}
	return nil
}

// BatchItem is one file's edit of POST /api/meta/batch.
type BatchItem struct {
	CID    string          `json:"cid"`
	Set    json.RawMessage `json:"set,omitempty"`
	Delete []string        `json:"delete,omitempty"`
}

// BatchAnswer is one item's answer: the status its own request would
// have had, and its document or error.
type BatchAnswer struct {
	CID      string    `json:"cid"`
	Status   int       `json:"status"`
	Error    string    `json:"error,omitempty"`
	Document *Document `json:"document,omitempty"`
}

// batchMeta: POST /api/meta/batch, a JSON list of {cid, set, delete}
// (at most 1,000), each file's edit one script; an answer per item, in
// order, and 200 whatever each item's fate.
func (s *Server) batchMeta(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r.URL.Query()); err != nil {
		writeError(w, err)
		return
	}
	e, ok := s.editor(w)
	if !ok {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBatchBody+1))
	if err != nil {
		writeError(w, badRequest("reading the body: %v", err))
		return
	}
	if len(body) > maxBatchBody {
		writeError(w, fmt.Errorf("%w: a batch body of more than %d bytes", ErrTooLarge, maxBatchBody))
		return
	}
	items, err := ParseBatch(body)
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]BatchAnswer, len(items))
	for i, it := range items {
		out[i] = BatchAnswer{CID: it.CID}
		doc, err := s.batchItem(r.Context(), e, it)
		if err != nil {
			out[i].Status, out[i].Error = status(err), err.Error()
			continue
		}
		out[i].Status, out[i].Document = http.StatusOK, &doc
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": out})
}

// ParseBatch reads a batch body: a JSON list of at most 1,000 items.
func ParseBatch(body []byte) ([]BatchItem, error) {
	var items []BatchItem
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&items); err != nil {
		return nil, badRequest("the body is not a JSON list of {cid, set, delete}: %v", err)
	}
	if dec.More() {
		return nil, badRequest("the body is more than one JSON value")
	}
	if len(items) > maxBatchItems {
		return nil, fmt.Errorf("%w: %d items, at most %d", ErrTooLarge, len(items), maxBatchItems)
	}
	return items, nil
}

func (s *Server) batchItem(ctx context.Context, e Editor, it BatchItem) (Document, error) {
	c, err := ParseCID(it.CID)
	if err != nil {
		return Document{}, err
	}
	set := map[string]string{}
	var del []string
	if len(it.Set) > 0 && string(it.Set) != "null" {
		if set, del, err = ParsePatch(it.Set); err != nil {
			return Document{}, err
		}
	}
	del = append(del, it.Delete...)
	if len(set)+len(del) == 0 {
		return Document{}, badRequest("no field to set or delete")
	}
	// The backend caps the fields of one edit (413), as for a PATCH.
	return e.Edit(ctx, c, set, del)
}
