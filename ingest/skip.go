package ingest

import (
	"path/filepath"
	"strings"
)

// partialSuffixes mark files that are still being downloaded or written.
var partialSuffixes = []string{".part", ".crdownload", ".!qB", ".!qb", ".partial", ".download", "~"}

// Skipped reports whether a file or directory name is never ingested:
// hidden names (a leading dot, which covers dot-files and hidden
// directories) and partial or temporary downloads.
func Skipped(path string) bool {
	name := filepath.Base(path)
	if strings.HasPrefix(name, ".") {
		return true
	}
	for _, s := range partialSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// within reports whether path is root or inside it.
func within(root, path string) bool {
	return path == root || strings.HasPrefix(path, strings.TrimSuffix(root, "/")+"/")
}
