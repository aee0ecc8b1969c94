package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metamesh/node/ingest"
	"github.com/metamesh/node/internal/waiting"
	"github.com/metamesh/node/node"
	"github.com/metamesh/node/protocol"
)

// jpegPoster is a w × h JPEG with a gradient, tinted by seed.
func jpegPoster(t testing.TB, w, h int, seed byte) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), seed, 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// noisePNG is a w × h PNG of noise (PNG cannot squeeze it: about 4 bytes
// a pixel).
func noisePNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rand.Read(img.Pix)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// apiError is an error answer's body.
func apiError(t testing.TB, body []byte) string {
	t.Helper()
	var e struct{ Error string }
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		t.Fatalf("not an error answer: %.300s", body)
	}
	return e.Error
}

// A household that does not share its files still serves the artwork of
// the files it announces: another household's /api/thumb of a poster of
// one of its films answers a thumbnail, fetched once and kept under
// DATA/art (within --art-cache: the least recently used goes); a
// private folder's poster is not; the film itself is not served, nor an image that is no
// file's artwork; an image over 5 MiB is not
// fetched, and a record pairing a CID with another image's bytes keeps
// nothing. A household running --share-art=false serves none: the
// thumbnail is an error, and the fetching household says why once.
func TestAPI_PeerArt(t *testing.T) {
	t.Parallel()
	libA := t.TempDir()
	heat := filepath.Join(libA, "Movies", "Heat (1995)")
	film := make([]byte, 300<<10)
	rand.Read(film)
	writeOld(t, filepath.Join(heat, "Heat.1995.mkv"), film)
	writeOld(t, filepath.Join(heat, "poster.jpg"), jpegPoster(t, 300, 450, 1))
	writeOld(t, filepath.Join(heat, "fanart.png"), noisePNG(t, 400, 300)) // more than one block
	big := filepath.Join(libA, "Movies", "Big (1988)")
	writeOld(t, filepath.Join(big, "Big.1988.mkv"), film[:100<<10])
	writeOld(t, filepath.Join(big, "poster.png"), noisePNG(t, 1400, 1100))              // about 6 MiB
	writeOld(t, filepath.Join(libA, "Photos", "beach.jpg"), jpegPoster(t, 300, 200, 5)) // no file's artwork
	secret := filepath.Join(libA, "Movies", "Secret (2000)")
	writeOld(t, filepath.Join(secret, ".metamesh-private"), nil)
	writeOld(t, filepath.Join(secret, "Secret.2000.mkv"), film[:150<<10])
	writeOld(t, filepath.Join(secret, "poster.jpg"), jpegPoster(t, 300, 450, 6))
	a := startNodeWith(t, libA, nil)

	libQ := t.TempDir()
	alien := filepath.Join(libQ, "Movies", "Alien (1979)")
	writeOld(t, filepath.Join(alien, "Alien.1979.mkv"), film[:200<<10])
	writeOld(t, filepath.Join(alien, "poster.jpg"), jpegPoster(t, 300, 450, 2))
	quiet := startNodeWith(t, libQ, func(c *node.Config) { c.NoShareArt = true })

	var dataB string
	// A cap of 100 KiB: the poster (7 KB) fits, the fan art (470 KiB)
	// is kept alone.
	b, logB := startNodeLogged(t, t.TempDir(), func(c *node.Config) { dataB = c.DataDir; c.ArtCache = 100 << 10 })
	for _, n := range []*node.Node{a, quiet} {
		if err := connect(b, n); err != nil {
			t.Fatal(err)
		}
	}

	heatCID := canonicalOf(t, filepath.Join(heat, "Heat.1995.mkv"))
	poster := canonicalOf(t, filepath.Join(heat, "poster.jpg"))
	waiting.For(t, "A's film's record at B, with its poster", func() bool {
		var doc map[string]any
		getJSON(t, b, "/api/meta/"+heatCID, &doc)
		art, _ := doc["art"].(map[string]any)
		return art["poster"] == poster
	})
	resp, body := do(t, b, "GET", "/api/thumb/"+poster+"?w=160", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("B's thumbnail of A's poster: %s %.300s", resp.Status, body)
	}
	if th, err := jpeg.Decode(bytes.NewReader(body)); err != nil || th.Bounds().Dx() != 160 {
		t.Fatalf("the thumbnail: %v %v", th, err)
	}
	kept, err := os.ReadFile(filepath.Join(dataB, "art", poster))
	if want, _ := os.ReadFile(filepath.Join(heat, "poster.jpg")); err != nil || !bytes.Equal(kept, want) {
		t.Errorf("DATA/art/<poster> at B: %d bytes, %v; want the poster's %d", len(kept), err, len(want))
	}
	fanart := canonicalOf(t, filepath.Join(heat, "fanart.png"))
	if resp, body := do(t, b, "GET", "/api/thumb/"+fanart+"?w=640", nil); resp.StatusCode != 200 {
		t.Errorf("B's thumbnail of A's fan art (several blocks): %s %.300s", resp.Status, body)
	}
	if _, err := os.Stat(filepath.Join(dataB, "art", poster)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the poster is still in DATA/art past --art-cache: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dataB, "art", fanart)); err != nil {
		t.Errorf("the fan art fetched last is not kept: %v", err)
	}
	if resp, _ := do(t, b, "GET", "/api/thumb/"+poster+"?w=160", nil); resp.StatusCode != 200 {
		t.Errorf("the poster's thumbnail, made before it left DATA/art: %s", resp.Status)
	}

	// The film is not served: A does not share its files.
	if resp, body := do(t, b, "GET", "/api/file/"+heatCID, nil); resp.StatusCode != 503 || !strings.Contains(apiError(t, body), "not share files") {
		t.Errorf("B's GET /api/file of A's film: %s %.300s", resp.Status, body)
	}

	// An image that is no file's artwork is not served either.
	beach := canonicalOf(t, filepath.Join(libA, "Photos", "beach.jpg"))
	if resp, body := do(t, b, "GET", "/api/thumb/"+beach, nil); resp.StatusCode != 503 || !strings.Contains(apiError(t, body), "does not serve it") {
		t.Errorf("B's thumbnail of a photo of A's that is no artwork: %s %.300s", resp.Status, body)
	}

	// Nor the artwork of a private folder's film.
	secretPoster := canonicalOf(t, filepath.Join(secret, "poster.jpg"))
	if resp, body := do(t, b, "GET", "/api/thumb/"+secretPoster, nil); resp.StatusCode != 404 {
		t.Errorf("B's thumbnail of the poster of A's private film: %s %.300s", resp.Status, body)
	}
	if _, err := os.Stat(filepath.Join(dataB, "art", secretPoster)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the private poster is kept at B: %v", err)
	}

	// An image over 5 MiB is refused by its record's size, never fetched.
	bigPoster := canonicalOf(t, filepath.Join(big, "poster.png"))
	resp, body = do(t, b, "GET", "/api/thumb/"+bigPoster, nil)
	if e := apiError(t, body); resp.StatusCode != 422 || !strings.Contains(e, "larger than 5 MiB") {
		t.Errorf("a 6 MiB poster: %s %s", resp.Status, e)
	}
	if _, err := os.Stat(filepath.Join(dataB, "art", bigPoster)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the 6 MiB poster is kept at B: %v", err)
	}

	// A record that says the big poster is small: refused by the size
	// its root says, before its blocks are fetched.
	bigHashes, err := ingest.HashFile(context.Background(), filepath.Join(big, "poster.png"))
	if err != nil {
		t.Fatal(err)
	}
	small := sha256.Sum256([]byte("a small image"))
	smallCID, _ := protocol.SHA256CID(small[:])
	if _, err := b.Store().MergeRecord(context.Background(), a.PeerID(), []string{smallCID.String(), bigHashes.IPFS},
		map[string]string{"mimeType": "image/png", "sizeByte": "1000"}); err != nil {
		t.Fatal(err)
	}
	resp, body = do(t, b, "GET", "/api/thumb/"+smallCID.String(), nil)
	if e := apiError(t, body); resp.StatusCode != 422 || !strings.Contains(e, "larger than 5 MiB") {
		t.Errorf("a 6 MiB poster its record calls small: %s %s", resp.Status, e)
	}

	// A record that pairs a CID with the fan art's bytes: they are
	// fetched, disprove it, and nothing is kept.
	fan, err := ingest.HashFile(context.Background(), filepath.Join(heat, "fanart.png"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("another image"))
	liedCID, _ := protocol.SHA256CID(sum[:])
	lied := liedCID.String()
	if _, err := b.Store().MergeRecord(context.Background(), a.PeerID(), []string{lied, fan.IPFS},
		map[string]string{"mimeType": "image/png", "sizeByte": "400000"}); err != nil {
		t.Fatal(err)
	}
	resp, body = do(t, b, "GET", "/api/thumb/"+lied, nil)
	if e := apiError(t, body); resp.StatusCode != 404 || !strings.Contains(e, "bytes are not") {
		t.Errorf("a CID a record paired with another image's bytes: %s %s", resp.Status, e)
	}
	if _, err := os.Stat(filepath.Join(dataB, "art", lied)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the disproved image is kept at B: %v", err)
	}

	// --share-art=false: an error (the page shows its placeholder), twice,
	// and one line in B's log.
	alienPoster := canonicalOf(t, filepath.Join(alien, "poster.jpg"))
	for range 2 {
		resp, body := do(t, b, "GET", "/api/thumb/"+alienPoster, nil)
		if e := apiError(t, body); resp.StatusCode != 503 || !strings.Contains(e, "does not serve it (it may run --share-art=false)") {
			t.Errorf("a poster of a household running --share-art=false: %s %s", resp.Status, e)
		}
	}
	const why = "a peer names artwork it does not serve (it may run --share-art=false)"
	said := 0
	for _, l := range strings.Split(logB.String(), "\n") {
		if strings.Contains(l, why) && strings.Contains(l, quiet.PeerID()) {
			said++
		}
	}
	if said != 1 {
		t.Errorf("B's log says %d times %q of the peer (want once)", said, why)
	}
}
