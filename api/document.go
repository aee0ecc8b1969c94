package api

import (
	"strconv"
	"strings"
	"time"
)

// The store and the wire record keep every field a flat string; the HTTP
// document gives the fields it knows their JSON type. Fields not listed
// here, and values that do not parse, stay strings.
var (
	// intFields are integers: sizes, years, season and episode numbers,
	// stream dimensions and rates. A name ending in "/" types every
	// element of that list ("episodes/" → episodes[i]).
	intFields = map[string]bool{
		"sizeByte": true, "movieYear": true, "season": true, "episode": true, "episodes/": true,
		"release/part": true, "release/cd": true,
		"fileinfo/streamdetails/video/*/width": true, "fileinfo/streamdetails/video/*/height": true,
		"fileinfo/streamdetails/video/*/bitrate": true, "fileinfo/streamdetails/video/*/level": true,
		"fileinfo/streamdetails/audio/*/channels": true, "fileinfo/streamdetails/audio/*/bitrate": true,
		"fileinfo/streamdetails/audio/*/samplerate": true,
	}
	// floatFields are decimal numbers: durations in seconds.
	floatFields = map[string]bool{"fileinfo/duration": true}
	// nanoTimeFields are Unix nanoseconds, shown as RFC 3339.
	nanoTimeFields = map[string]bool{"mtime": true}
)

// typeDocument rewrites, in place, the known fields of a nested document
// (Backend.Meta's answer) from strings to numbers and times, at top level
// and under origin/<peer>/.
func typeDocument(doc map[string]any) {
	typeFields(doc, "")
	if origin, ok := doc["origin"].(map[string]any); ok {
		for _, per := range origin {
			if m, ok := per.(map[string]any); ok {
				typeFields(m, "")
			}
		}
	}
}

func typeFields(m map[string]any, prefix string) {
	for k, v := range m {
		name := prefix + k
		switch x := v.(type) {
		case map[string]any:
			if name != "origin" {
				typeFields(x, name+"/")
			}
		case []any:
			elem := intFields[name+"/"]
			for i, e := range x {
				switch y := e.(type) {
				case map[string]any:
					typeFields(y, name+"/*/")
				case string:
					if elem {
						x[i] = typeValue(y, true, false, false)
					}
				}
			}
		case string:
			m[k] = typeValue(x, intFields[name], floatFields[name], nanoTimeFields[name])
		}
	}
}

func typeValue(s string, isInt, isFloat, isNanoTime bool) any {
	switch {
	case isInt:
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return n
		}
	case isFloat:
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return f
		}
	case isNanoTime:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(0, n).UTC().Format(time.RFC3339Nano)
		}
	}
	return s
}
