package ingest

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/metamesh/node/store"
)

// Sidecars: the subtitle and artwork files beside a video, linked from
// its fields by their canonical CIDs (subtitles/<lang>/<n>,
// subtitleflags/<lang>/<n>, art/<kind>). They are found through the
// store's path index (a prefix range and exact names), never by listing a
// folder, and only once the store knows them: a sidecar arriving after
// its video re-links the video (relink).

// subtitleExts are the subtitle files linked.
var subtitleExts = map[string]bool{".srt": true, ".ass": true, ".ssa": true, ".vtt": true, ".sub": true, ".idx": true, ".sup": true}

// artExts are the image files artwork is read from.
var artExts = []string{".jpg", ".jpeg", ".png", ".webp"}

// artKinds are the artwork names and the field each fills (folder and
// cover are posters, backdrop is fan art).
var artKinds = map[string]string{"poster": "poster", "folder": "poster", "cover": "poster", "fanart": "fanart",
	"backdrop": "fanart", "banner": "banner", "clearlogo": "clearlogo", "landscape": "landscape", "thumb": "thumb"}

// subsFolders hold a video's subtitles: Subs/<lang>.srt, or
// Subs/<video name>/<n>_<lang>.srt.
var subsFolders = []string{"Subs", "subs", "Subtitles", "subtitles"}

// subtitleFlags are the words of a subtitle's name that say what it is.
var subtitleFlags = map[string]string{"forced": "forced", "sdh": "sdh", "cc": "cc", "hi": "sdh", "default": "default"}

// maxSidecars bounds the paths one prefix of a video's sidecars lists.
const maxSidecars = 256

// isSidecar reports a file whose change re-links videos: an NFO, a
// subtitle, an artwork image.
func isSidecar(p string) bool { return sidecarKind(p) != "" }

// sidecarKind is what sidecar a file is by its name ("nfo", "subtitle",
// "art"), "" for none: what ingest writes as its store.SidecarField.
func sidecarKind(p string) string {
	ext := strings.ToLower(filepath.Ext(p))
	switch {
	case isNFO(p):
		return "nfo"
	case subtitleExts[ext]:
		return "subtitle"
	case !slices.Contains(artExts, ext):
		return ""
	}
	if _, kind := artName(strings.ToLower(strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)))); kind != "" {
		return "art"
	}
	return ""
}

// artName reads an artwork file's name (lower case, no extension):
// "poster", "<video name>-fanart", "season02-poster". It returns the
// prefix before the kind ("" for a folder's own art) and the field.
func artName(name string) (prefix, kind string) {
	for k, field := range artKinds {
		if name == k {
			return "", field
		}
		if strings.HasSuffix(name, "-"+k) {
			return strings.TrimSuffix(name, "-"+k), field
		}
	}
	return "", ""
}

// sidecarLinks are the fields that link video's sidecars, as far as the
// store knows them. season is the video's, -1 for none. Without sidecars
// it costs one round trip (a pipeline of prefix ranges).
func (in *Ingester) sidecarLinks(ctx context.Context, video string, season int) map[string]string {
	dir := filepath.Dir(video)
	up := filepath.Dir(dir)
	stem := strings.TrimSuffix(filepath.Base(video), filepath.Ext(video))
	own := filepath.Join(dir, stem)
	prefixes := []string{own + ".", own + "-"}
	for _, sf := range subsFolders {
		prefixes = append(prefixes, filepath.Join(dir, sf)+"/")
	}
	folders := []string{dir}
	if in.libraryOf(up) != "" {
		folders = append(folders, up) // a show's folder above a season's
	}
	for _, d := range folders {
		prefixes = append(prefixes, filepath.Join(d, "season"))
		for k := range artKinds {
			prefixes = append(prefixes, filepath.Join(d, k)+".")
		}
	}
	found, err := in.st.PathsWithPrefixes(ctx, prefixes, maxSidecars)
	if err != nil {
		return nil
	}
	var subs, art []string
	for _, ps := range found {
		for _, p := range ps {
			ext := strings.ToLower(filepath.Ext(p))
			name := strings.ToLower(strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)))
			d := filepath.Dir(p)
			switch {
			case p == video:
			case subtitleExts[ext]:
				inSubs := slices.Contains(subsFolders, filepath.Base(d)) && filepath.Dir(d) == dir // Subs/English.srt
				named := slices.Contains(subsFolders, filepath.Base(filepath.Dir(d))) && filepath.Dir(filepath.Dir(d)) == dir &&
					filepath.Base(d) == stem // Subs/<video name>/2_English.srt
				if d == dir && strings.HasPrefix(filepath.Base(p), stem+".") || inSubs || named {
					subs = append(subs, p)
				}
			case slices.Contains(artExts, ext):
				prefix, kind := artName(name)
				switch {
				case kind == "":
				case d == dir && prefix == strings.ToLower(stem), prefix == "" && slices.Contains(folders, d):
					art = append(art, p)
				case season >= 0 && prefix == "season"+pad2(season) && kind == "poster" && slices.Contains(folders, d):
					art = append(art, p)
				}
			}
		}
	}
	if len(subs)+len(art) == 0 {
		return nil
	}
	slices.Sort(subs)
	subs = slices.Compact(subs)
	// The nearest artwork first: the video's own, its season's, its
	// folder's, the folder above's.
	rank := func(p string) int {
		prefix, _ := artName(strings.ToLower(strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))))
		switch {
		case prefix != "" && !strings.HasPrefix(prefix, "season"):
			return 0
		case prefix != "":
			return 1
		case filepath.Dir(p) == dir:
			return 2
		}
		return 3
	}
	slices.SortStableFunc(art, func(a, b string) int { return cmp.Or(rank(a)-rank(b), strings.Compare(a, b)) })
	states, err := in.st.Paths(ctx, append(slices.Clone(subs), art...))
	if err != nil || len(states) == 0 {
		return nil
	}
	var roots []store.RootID
	for _, st := range states {
		roots = append(roots, st.Root)
	}
	canon, _, err := in.st.CanonicalCIDs(ctx, roots, nil)
	if err != nil {
		return nil
	}
	cidOf := func(p string) string {
		if st, ok := states[p]; ok {
			return canon[st.Root]
		}
		return ""
	}
	out := map[string]string{}
	n := map[string]int{}
	for _, p := range subs {
		c := cidOf(p)
		if c == "" {
			continue
		}
		lang, flags := subtitleName(p, stem)
		k := lang + "/" + strconv.Itoa(n[lang])
		n[lang]++
		out["subtitles/"+k] = c
		if len(flags) > 0 {
			out["subtitleflags/"+k] = strings.Join(flags, ",")
		}
	}
	for _, p := range art {
		_, kind := artName(strings.ToLower(strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))))
		if c := cidOf(p); c != "" && out["art/"+kind] == "" {
			out["art/"+kind] = c
		}
	}
	return out
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// subtitleName reads a subtitle's language (ISO 639-2/B, "und" when none
// is named) and flags from its name: "<video name>.en.forced.srt",
// "<video name>.pt-BR.srt", "Subs/<video name>/2_English.srt",
// "Subs/English.srt".
func subtitleName(p, stem string) (lang string, flags []string) {
	base := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
	if rest, ok := strings.CutPrefix(base, stem); ok {
		base = rest // beside the video: what follows its name
	}
	words := strings.FieldsFunc(base, func(r rune) bool { return r == '.' || r == '_' || r == ' ' || r == '[' || r == ']' })
	lang = "und"
	for _, w := range words {
		low := strings.ToLower(w)
		if f, ok := subtitleFlags[low]; ok {
			if !slices.Contains(flags, f) {
				flags = append(flags, f)
			}
			continue
		}
		if lang != "und" {
			continue
		}
		if code := languageCode(low); code != "" {
			lang = code
		}
	}
	slices.Sort(flags)
	return lang, flags
}

// languageCode is the ISO 639-2/B code of a language as a subtitle's
// name writes it: "en", "eng", "English", "pt-BR", "fre"; "" when w is
// none.
func languageCode(w string) string {
	if code, _, ok := strings.Cut(w, "-"); ok {
		if c := languageCode(code); c != "" {
			return c // "pt-br", "en-us"
		}
	}
	if c := bracketLangs[w]; c != "" {
		return c
	}
	if e, ok := vocab[w]; ok && e.kind == tLanguage && e.value != "mul" {
		return e.value
	}
	switch w {
	case "fra":
		return "fre"
	case "deu":
		return "ger"
	case "pob", "ptbr":
		return "por"
	}
	return ""
}
