package ingest

import (
	"os"
	"strconv"
	"strings"
)

func readInt(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
