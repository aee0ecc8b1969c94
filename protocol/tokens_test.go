package protocol_test

import (
	"reflect"
	"testing"

	"github.com/metamesh/node/protocol"
)

func TestTokens(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"The Matrix"}, []string{"the", "matrix"}},
		{[]string{"Amélie"}, []string{"amelie"}},
		{[]string{"AMÉLIE"}, []string{"amelie"}},
		{[]string{"Straße nach Çanakkale"}, []string{"strasse", "nach", "canakkale"}},
		{[]string{"Show.Name.S1E2.1080p.mkv"}, []string{"show", "name", "s01e02", "1080p", "mkv"}},
		{[]string{"s01 E003"}, []string{"s01", "e03"}},
		{[]string{"Blade_Runner-2049 (2017)"}, []string{"blade", "runner", "2049", "2017"}},
		{[]string{"Ｆｕｌｌｗｉｄｔｈ"}, []string{"fullwidth"}},
		{[]string{"  ...  "}, nil},
		{[]string{"søren æble"}, []string{"soren", "aeble"}},
		{[]string{"season seven"}, []string{"season", "seven"}},
	} {
		t.Run(tc.in[0], func(t *testing.T) {
			if got := protocol.Tokens(tc.in[0]); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tc.in[0], got, tc.want)
			}
		})
	}
}
