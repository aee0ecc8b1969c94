package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The oldest region's last provide is what a household is told: zero
// while a region was not provided since the start, none without regions.
func TestProvideStats_OldestRegionProvided(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		regions []ProvidedRegion
		want    time.Time
		wantOK  bool
	}{
		{"no region", nil, time.Time{}, false},
		{"one", []ProvidedRegion{{Prefix: "", LastProvidedAt: t0}}, t0, true},
		{"the oldest", []ProvidedRegion{{Prefix: "0", LastProvidedAt: t0.Add(time.Hour)}, {Prefix: "1", LastProvidedAt: t0}}, t0, true},
		{"one not provided yet", []ProvidedRegion{{Prefix: "0", LastProvidedAt: t0}, {Prefix: "1"}}, time.Time{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ProvideStats{RegionsProvided: tt.regions}.OldestRegionProvided()
			if !got.Equal(tt.want) || ok != tt.wantOK {
				t.Errorf("got %v, %t; want %v, %t", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// The names /api/status gives the regions and the checks (docs/http-api.md).
func TestProvideStats_FindableJSON(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b, err := json.Marshal(ProvideStats{
		RegionsProvided: []ProvidedRegion{
			{Prefix: "01", Keys: 3, LastProvidedAt: t0, NewestProvidedAt: t0, CheckedKey: "QmKey", CheckedAt: t0, Closest: 20, Holding: 19},
			{Prefix: "10", Keys: 1},
		},
		Findable: Findable{CheckedAt: t0, Regions: 1, Closest: 20, Holding: 19, Checks: 4, CheckMessages: 80},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"regionsProvided":[{"prefix":"01","keys":3,"lastProvidedAt":"2026-01-02T03:04:05Z","newestProvidedAt":"2026-01-02T03:04:05Z","checkedKey":"QmKey","checkedAt":"2026-01-02T03:04:05Z","closest":20,"holding":19},{"prefix":"10","keys":1,"closest":0,"holding":0}]`,
		`"findable":{"checkedAt":"2026-01-02T03:04:05Z","regions":1,"closest":20,"holding":19,"checks":4,"checkMessages":80}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON\n%s\nlacks\n%s", b, want)
		}
	}
}
