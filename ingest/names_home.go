package ingest

import "strings"

// cameraWords are the words cameras, phones and screen recorders name
// their files with ("VID_20190314_181510", "IMG_1234.MOV", "DSC0001",
// "GOPR0123", "PXL_20210101_…", "clip_0102"): beside a counter or a
// date they make a name that holds no title.
var cameraWords = map[string]bool{"vid": true, "img": true, "mvi": true, "mov": true, "dsc": true, "dscf": true,
	"dscn": true, "dsci": true, "gopr": true, "gp": true, "gh": true, "gx": true, "pxl": true, "mah": true,
	"dji": true, "clip": true, "video": true, "pict": true, "mvc": true, "hpim": true, "cimg": true}

// cameraFolders are the folders a camera or phone writes its videos in,
// and the one a household keeps them in: evidence that a name of a
// counter or a date and one word is a home video.
var cameraFolders = [...]string{"dcim", "camera", "home videos", "home movies", "camera roll"}

// homeVideo reports a file name (stem: no extension) that holds no title,
// only a camera's word and a counter or a date ("VID_20190314_181510",
// "clip_0102", "IMG_1234", "DSC0001", "GOPR0123", "2019-03-14
// 18.15.10"), or, in a camera's folder (dirs holds DCIM, Camera, Home
// Videos), one word besides them: a home video, not a film or an
// episode. recorded is the date the name holds (YYYY-MM-DD), "" for none.
// It allocates only the date.
func homeVideo(stem, dirs string) (recorded string, ok bool) {
	var words, camera, digits, dateParts, dateRuns int
	var parts [3]string // the last three digit runs, for a date written apart
	for i := 0; i < len(stem); {
		if isNameSep(stem[i]) {
			i++
			continue
		}
		j := i
		for j < len(stem) && isLetterASCII(stem[j]) {
			j++
		}
		k := j
		for k < len(stem) && stem[k] >= '0' && stem[k] <= '9' {
			k++
		}
		if k < len(stem) && !isNameSep(stem[k]) {
			return "", false // a letter after digits, or a byte of another kind: a word of its own
		}
		letters, nums := stem[i:j], stem[j:k]
		switch {
		case letters == "":
		case isCameraWord(letters):
			camera++
		case nums == "":
			words++
		default:
			return "", false // a word glued to digits that no camera writes ("S01E02", "x264")
		}
		if nums != "" {
			digits++
			if recorded == "" && len(nums) >= 8 {
				if recorded = dateOf(nums[:4], nums[4:6], nums[6:8]); recorded != "" {
					dateRuns = 1
				}
			}
			parts[0], parts[1], parts[2] = parts[1], parts[2], nums
			dateParts++
			if recorded == "" && dateParts >= 3 && len(parts[0]) == 4 && len(parts[1]) == 2 && len(parts[2]) == 2 {
				if recorded = dateOf(parts[0], parts[1], parts[2]); recorded != "" {
					dateRuns = 3
				}
			}
		}
		i = k
	}
	switch {
	case digits == 0 || camera > 1:
		return "", false
	case words == 0 && camera == 1:
		return recorded, true
	case words == 0 && recorded != "" && digits > dateRuns:
		// A date and a time ("20190314_181510"): a date alone is as
		// likely a show's episode ("News/2021.05.17").
		return recorded, true
	case words <= 1 && camera+words >= 1 && inCameraFolder(dirs):
		return recorded, true
	}
	return "", false
}

// dateOf is y-m-d when the three make a date from 1990 to 2099, else "".
func dateOf(y, m, d string) string {
	if len(y) != 4 || len(m) != 2 || len(d) != 2 || (y[:2] != "19" && y[:2] != "20") || (y[:2] == "19" && y[2] < '9') ||
		m < "01" || m > "12" || d < "01" || d > "31" {
		return ""
	}
	return y + "-" + m + "-" + d
}

// inCameraFolder reports dirs (slash-separated) holding a camera's folder.
func inCameraFolder(dirs string) bool {
	for dirs != "" {
		seg := dirs
		if i := strings.IndexByte(dirs, '/'); i >= 0 {
			seg, dirs = dirs[:i], dirs[i+1:]
		} else {
			dirs = ""
		}
		for _, f := range cameraFolders {
			if strings.EqualFold(seg, f) {
				return true
			}
		}
	}
	return false
}

func isNameSep(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c == ' ' || c == '~' || c == '(' || c == ')'
}

func isLetterASCII(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// isCameraWord reports one of cameraWords, whatever its case, without
// allocating.
func isCameraWord(w string) bool {
	var b [8]byte
	if len(w) > len(b) {
		return false
	}
	for i := 0; i < len(w); i++ {
		b[i] = w[i] | 0x20
	}
	return cameraWords[string(b[:len(w)])]
}

// yearFolder reports a file's nearest folder naming a year in
// parentheses ("Clip (2020)"): a film's folder.
func yearFolder(dirs string) bool {
	seg := dirs[strings.LastIndexByte(dirs, '/')+1:]
	for i := 0; i+6 <= len(seg); i++ {
		if seg[i] == '(' && seg[i+5] == ')' && isDigits(seg[i+1:i+5]) {
			return true
		}
	}
	return false
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
