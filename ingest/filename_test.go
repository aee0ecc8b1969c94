package ingest_test

import (
	"testing"

	"github.com/metamesh/node/ingest"
)

func TestParseReleaseName(t *testing.T) {
	type want struct {
		title     string
		year      int
		season    int
		episode   int
		videoType string
	}
	ep := func(title string, s, e int) want { return want{title, 0, s, e, "episode"} }
	mv := func(title string, y int) want { return want{title, y, -1, -1, "movie"} }
	un := func(title string) want { return want{title, 0, -1, -1, "unknown"} }
	tests := []struct {
		in   string
		want want
	}{
		{"Show.Name.S01E05.1080p.WEB.x264.mkv", ep("Show Name", 1, 5)},
		{"Breaking.Bad.S05E14.Ozymandias.720p.HDTV.x264-IMMERSE.mkv", ep("Breaking Bad", 5, 14)},
		{"the.office.us.s02e01.dvdrip.xvid.avi", ep("the office us", 2, 1)},
		{"Game of Thrones - S08E03 - The Long Night.mkv", ep("Game of Thrones", 8, 3)},
		{"Show - 1x05 - Title.avi", ep("Show", 1, 5)},
		{"Friends - 10x17 - The Last One.mkv", ep("Friends", 10, 17)},
		{"Doctor.Who.2005.S01E01.Rose.mkv", ep("Doctor Who", 1, 1)},
		{"The.Mandalorian.S02E08.2160p.DSNP.WEB-DL.DDP5.1.Atmos.HDR.HEVC-MZABI.mkv", ep("The Mandalorian", 2, 8)},
		{"[SubsPlease] Frieren - S01E12 (1080p).mkv", ep("Frieren", 1, 12)},
		{"Sherlock.S03E01E02.1080p.BluRay.mkv", ep("Sherlock", 3, 1)},
		{"Stranger Things S04E09 Chapter Nine The Piggyback.mkv", ep("Stranger Things", 4, 9)},
		{"true_detective_s01e08_form_and_void.mp4", ep("true detective", 1, 8)},
		{"Lost.s6e17.The.End.avi", ep("Lost", 6, 17)},
		{"Seinfeld Season 9 Episode 23.mkv", ep("Seinfeld", 9, 23)},
		{"Top.Gear.22x01.mp4", ep("Top Gear", 22, 1)},
		{"The Wire - s04e13 - Final Grades.mkv", ep("The Wire", 4, 13)},
		{"Chernobyl.S01E05.Vichnaya.Pamyat.2160p.WEB-DL.x265.mkv", ep("Chernobyl", 1, 5)},
		{"Firefly (2002) - S01E01 - Serenity.mkv", ep("Firefly", 1, 1)},
		{"One.Piece.S01E1071.1080p.WEB.mkv", ep("One Piece", 1, 1071)},
		{"House.of.the.Dragon.S02E01.720p.mkv", ep("House of the Dragon", 2, 1)},
		{"Movie Title (2010).mkv", mv("Movie Title", 2010)},
		{"Movie.Title.2010.1080p.BluRay.x264.mkv", mv("Movie Title", 2010)},
		{"Inception.2010.1080p.BluRay.x264.mkv", mv("Inception", 2010)},
		{"The.Dark.Knight.2008.2160p.UHD.BluRay.x265-TERMINAL.mkv", mv("The Dark Knight", 2008)},
		{"Blade Runner 2049 (2017).mkv", mv("Blade Runner 2049", 2017)},
		{"2001.A.Space.Odyssey.1968.1080p.BluRay.mkv", mv("2001 A Space Odyssey", 1968)},
		{"1917.2019.1080p.WEBRip.x264.mp4", mv("1917", 2019)},
		{"Spirited Away (2001) [1080p].mkv", mv("Spirited Away", 2001)},
		{"Amelie.2001.FRENCH.720p.BluRay.mkv", mv("Amelie", 2001)},
		{"Mad_Max_Fury_Road_2015_720p.mp4", mv("Mad Max Fury Road", 2015)},
		{"The Matrix 1999 1080p.mkv", mv("The Matrix", 1999)},
		{"Parasite.2019.KOREAN.1080p.WEB-DL.mkv", mv("Parasite", 2019)},
		{"Alien (1979) Directors Cut.mkv", mv("Alien", 1979)},
		{"Dune.Part.Two.2024.2160p.WEB-DL.DDP5.1.Atmos.mkv", mv("Dune Part Two", 2024)},
		{"Back.to.the.Future.1985.REMASTERED.1080p.mkv", mv("Back to the Future", 1985)},
		{"Oppenheimer.2023.IMAX.2160p.mkv", mv("Oppenheimer", 2023)},
		{"Some Home Video.mp4", un("Some Home Video")},
		{"holiday_clip.mov", un("holiday clip")},
		{"Concert.1080p.x264.mkv", un("Concert")},
		{"VID_20230512_101010.mp4", un("VID 20230512 101010")},
		{"2012.mkv", un("2012")},
		{"The.Big.Lebowski.mkv", un("The Big Lebowski")},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d names", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := ingest.ParseReleaseName(tt.in)
			g := want{got.Title, got.Year, got.Season, got.Episode, got.VideoType}
			if g != tt.want {
				t.Errorf("ParseReleaseName(%q) = %+v, want %+v", tt.in, g, tt.want)
			}
		})
	}
}

func TestParseReleaseName_Fields(t *testing.T) {
	got := ingest.ParseReleaseName("Show - 1x05 - Pilot.avi").Fields()
	want := map[string]string{"titles/eng": "Show", "originalTitle": "Show", "season": "1", "episode": "5", "videoType": "episode", "episodeTitle": "Pilot"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	mv := ingest.ParseReleaseName("Inception (2010).mkv").Fields()
	if mv["movieYear"] != "2010" || mv["videoType"] != "movie" {
		t.Errorf("movie fields = %v", mv)
	}
}

func FuzzParseReleaseName(f *testing.F) {
	f.Add("Show.Name.S01E05.1080p.WEB.x264.mkv")
	f.Add("Movie Title (2010).mkv")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		r := ingest.ParseReleaseName(s)
		if r.VideoType != "movie" && r.VideoType != "episode" && r.VideoType != "unknown" {
			t.Fatalf("videoType %q", r.VideoType)
		}
		_ = r.Fields()
	})
}
