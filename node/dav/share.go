package dav

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/net/webdav"

	"github.com/metamesh/node/api"
)

// Opener opens the bytes of the file a canonical CID names: a local
// file's (checked to still hold them, as GET /api/file does), or, with
// peer, a file known only from peers, streamed from the households that
// share it (seekable: a range fetches only its blocks).
type Opener func(ctx context.Context, cid string, peer bool) (*api.File, error)

// Share is the read-only WebDAV share of a Library (api.DAV): PROPFIND
// and OPTIONS through golang.org/x/net/webdav on a read-only
// webdav.FileSystem of the layout, GET and HEAD of a file through Open.
type Share struct {
	lib  *Library
	open Opener
	// all serves the whole share, public all but HouseholdsDir.
	all, public *webdav.Handler
}

// NewShare is the share of lib, its files opened by open; its PROPFIND
// answers are served under prefix (the API's mount, "/dav").
func NewShare(lib *Library, open Opener, prefix string, log *slog.Logger) *Share {
	s := &Share{lib: lib, open: open}
	logger := func(r *http.Request, err error) {
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Debug("webdav", "method", r.Method, "path", r.URL.Path, "err", err)
		}
	}
	s.all = &webdav.Handler{Prefix: prefix, FileSystem: treeFS{lib: lib, households: true}, LockSystem: webdav.NewMemLS(), Logger: logger}
	s.public = &webdav.Handler{Prefix: prefix, FileSystem: treeFS{lib: lib}, LockSystem: webdav.NewMemLS(), Logger: logger}
	return s
}

// Private reports whether p lies in HouseholdsDir.
func (s *Share) Private(p string) bool {
	first, _, _ := strings.Cut(strings.TrimPrefix(path.Clean("/"+p), "/"), "/")
	return strings.EqualFold(first, HouseholdsDir)
}

// ServeDAV answers PROPFIND and OPTIONS (api.DAV). OPTIONS says what the
// share is: class 1 (no locks), read-only.
func (s *Share) ServeDAV(w http.ResponseWriter, r *http.Request, households bool) {
	if r.Method == http.MethodOptions {
		w.Header().Set("DAV", "1")
		w.Header().Set("Allow", "OPTIONS, GET, HEAD, PROPFIND")
		w.Header().Set("MS-Author-Via", "DAV")
		w.WriteHeader(http.StatusOK)
		return
	}
	if households {
		s.all.ServeHTTP(w, r)
		return
	}
	s.public.ServeHTTP(w, r)
}

// Open opens the file at p (api.DAV).
func (s *Share) Open(ctx context.Context, p string, households bool) (*api.File, error) {
	if !households && s.Private(p) {
		return nil, fmt.Errorf("%w: no file %s in the share", api.ErrNotFound, p)
	}
	e := s.lib.Tree().Find(p)
	switch {
	case e == nil:
		return nil, fmt.Errorf("%w: no file %s in the share", api.ErrNotFound, p)
	case e.Dir:
		return nil, api.ErrDAVFolder
	case e.Peer && !households:
		// Never fetched from peers for a client the private part is
		// hidden from (Layout lists no peer's file beside a local one).
		return nil, fmt.Errorf("%w: no file %s in the share", api.ErrNotFound, p)
	case e.Data != nil:
		return &api.File{Content: readSeekNopCloser{bytes.NewReader(e.Data)}, Name: e.Name, Size: e.Size, ModTime: e.ModTime,
			MimeType: "text/xml; charset=utf-8", CID: "nfo-" + etagOf(e.Data)}, nil
	}
	f, err := s.open(ctx, e.CID, e.Peer)
	if err != nil {
		return nil, err
	}
	f.Name = e.Name
	if f.MimeType == "" {
		f.MimeType = contentType(e.Name)
	}
	return f, nil
}

// etagOf names bytes the share made: the first 16 bytes of their
// SHA-256, in hex.
func etagOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

type readSeekNopCloser struct{ io.ReadSeeker }

func (readSeekNopCloser) Close() error { return nil }

// contentType is the MIME type of a file of the share by its name.
func contentType(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".nfo":
		return "text/xml; charset=utf-8"
	case ".srt":
		return "application/x-subrip"
	case ".mkv":
		return "video/x-matroska"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// treeFS is the layout as a read-only webdav.FileSystem: what PROPFIND
// walks. Its files are never read through it (GET and HEAD are Open's),
// and anything that writes is refused (the API answers those methods
// 405 before they reach it).
type treeFS struct {
	lib        *Library
	households bool
}

var errReadOnly = fmt.Errorf("%w: the WebDAV share is read-only", os.ErrPermission)

func (treeFS) Mkdir(context.Context, string, os.FileMode) error { return errReadOnly }
func (treeFS) RemoveAll(context.Context, string) error          { return errReadOnly }
func (treeFS) Rename(context.Context, string, string) error     { return errReadOnly }

func (t treeFS) OpenFile(ctx context.Context, name string, flag int, _ os.FileMode) (webdav.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, errReadOnly
	}
	tree := t.lib.Tree()
	e, err := t.find(tree, name)
	if err != nil {
		return nil, err
	}
	return &entryFile{e: e, hide: !t.households && e == tree.Root}, nil
}

func (t treeFS) Stat(ctx context.Context, name string) (os.FileInfo, error) {
	e, err := t.find(t.lib.Tree(), name)
	if err != nil {
		return nil, err
	}
	return info{e}, nil
}

// find is the entry at name, fs.ErrNotExist when there is none or it is
// in the part this view leaves out.
func (t treeFS) find(tree *Tree, name string) (*Entry, error) {
	if !t.households {
		first, _, _ := strings.Cut(strings.TrimPrefix(path.Clean("/"+name), "/"), "/")
		if strings.EqualFold(first, HouseholdsDir) {
			return nil, fs.ErrNotExist
		}
	}
	if e := tree.Find(name); e != nil {
		return e, nil
	}
	return nil, fs.ErrNotExist
}

// entryFile is an entry opened by the webdav handler: a folder it lists,
// or a file it takes the properties of.
type entryFile struct {
	e *Entry
	// hide leaves HouseholdsDir out of the listing (of the top, in the
	// view without it).
	hide bool
	read bool // Readdir listed the folder
}

func (f *entryFile) Close() error { return nil }
func (f *entryFile) Read([]byte) (int, error) {
	return 0, fmt.Errorf("%w: a file of the share is read with GET", os.ErrInvalid)
}
func (f *entryFile) Write([]byte) (int, error)      { return 0, errReadOnly }
func (f *entryFile) Seek(int64, int) (int64, error) { return 0, nil }
func (f *entryFile) Stat() (os.FileInfo, error)     { return info{f.e}, nil }
func (f *entryFile) Readdir(count int) ([]fs.FileInfo, error) {
	if !f.e.Dir {
		return nil, fmt.Errorf("%w: %s is a file", os.ErrInvalid, f.e.Name)
	}
	if f.read {
		if count > 0 {
			return nil, io.EOF
		}
		return nil, nil
	}
	f.read = true
	var out []fs.FileInfo
	for _, k := range f.e.Entries() {
		if f.hide && k.Name == HouseholdsDir {
			continue
		}
		out = append(out, info{k})
	}
	return out, nil
}

// info is an entry's os.FileInfo, with its ETag and content type so the
// webdav handler reads neither from the bytes.
type info struct{ e *Entry }

func (i info) Name() string       { return i.e.Name }
func (i info) Size() int64        { return i.e.Size }
func (i info) ModTime() time.Time { return i.e.ModTime }
func (i info) IsDir() bool        { return i.e.Dir }
func (i info) Sys() any           { return nil }
func (i info) Mode() fs.FileMode {
	if i.e.Dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

// ETag is the one GET answers with: the file's CID.
func (i info) ETag(context.Context) (string, error) {
	if i.e.Dir {
		return "", webdav.ErrNotImplemented
	}
	if i.e.Data != nil {
		return `"nfo-` + etagOf(i.e.Data) + `"`, nil
	}
	return `"` + i.e.CID + `"`, nil
}

func (i info) ContentType(context.Context) (string, error) {
	if i.e.Dir {
		return "", webdav.ErrNotImplemented
	}
	return contentType(i.e.Name), nil
}
