package dav

import (
	"encoding/xml"
	"strconv"
)

// The .nfo files beside the videos, in the format Kodi and Jellyfin read
// (kodi.wiki/view/NFO_files), so they show titles and plots without
// scraping. Only what the metadata holds is written.

type nfoUniqueID struct {
	Type    string `xml:"type,attr"`
	Default bool   `xml:"default,attr,omitempty"`
	Value   string `xml:",chardata"`
}

type nfoMovie struct {
	XMLName       xml.Name      `xml:"movie"`
	Title         string        `xml:"title"`
	OriginalTitle string        `xml:"originaltitle,omitempty"`
	Year          int           `xml:"year,omitempty"`
	Plot          string        `xml:"plot,omitempty"`
	Genres        []string      `xml:"genre"`
	Rating        string        `xml:"rating,omitempty"`
	UniqueIDs     []nfoUniqueID `xml:"uniqueid"`
}

type nfoEpisode struct {
	XMLName   xml.Name `xml:"episodedetails"`
	Title     string   `xml:"title"`
	ShowTitle string   `xml:"showtitle"`
	Season    int      `xml:"season"`
	Episode   int      `xml:"episode"`
	Plot      string   `xml:"plot,omitempty"`
	Aired     string   `xml:"aired,omitempty"`
}

type nfoShow struct {
	XMLName xml.Name `xml:"tvshow"`
	Title   string   `xml:"title"`
}

// movieNFO is the <movie> .nfo of a film.
func movieNFO(it Item) []byte {
	m := nfoMovie{Title: it.Title, OriginalTitle: it.OriginalTitle, Year: it.Year, Plot: it.Plot, Genres: it.Genres, Rating: it.Rating}
	if it.IMDbID != "" {
		m.UniqueIDs = append(m.UniqueIDs, nfoUniqueID{Type: "imdb", Default: true, Value: it.IMDbID})
	}
	if it.TMDbID != "" {
		m.UniqueIDs = append(m.UniqueIDs, nfoUniqueID{Type: "tmdb", Default: it.IMDbID == "", Value: it.TMDbID})
	}
	return encodeNFO(m)
}

// episodeNFO is the <episodedetails> .nfo of an episode.
func episodeNFO(it Item) []byte {
	title := it.EpisodeTitle
	if title == "" {
		title = "Episode " + strconv.Itoa(*it.Episode)
	}
	return encodeNFO(nfoEpisode{Title: title, ShowTitle: it.Title, Season: *it.Season, Episode: *it.Episode, Plot: it.Plot, Aired: it.Aired})
}

// showNFO is the tvshow.nfo of a show's folder.
func showNFO(title string) []byte { return encodeNFO(nfoShow{Title: title}) }

// encodeNFO writes v as a standalone UTF-8 XML document. The values are
// strings and numbers, which always encode.
func encodeNFO(v any) []byte {
	b, err := xml.MarshalIndent(v, "", "  ")
	if err != nil {
		panic("dav: encoding an .nfo: " + err.Error())
	}
	return append(append([]byte(xml.Header), b...), '\n')
}
