package peakmem

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Measure runs f and returns the most heap its objects took meanwhile
// (sampled every millisecond) and the process's peak resident set
// (VmHWM, reset first where Linux allows), in bytes.
func Measure(f func()) (heap, rss uint64) {
	runtime.GC()
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			metrics.Read(sample)
			heap = max(heap, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tk.C:
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	return heap, vmHWM()
}

// vmHWM is the process's peak resident set, in bytes (0 when unknown).
func vmHWM() uint64 {
	b, _ := os.ReadFile("/proc/self/status")
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
