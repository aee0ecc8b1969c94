package api

import (
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics count requests by route (the matched pattern, so the label
// set stays bounded) and status code.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// metaOK and metaTook are the series of a found /api/meta answer,
	// looked up once: the one request a node serves most.
	metaOK   prometheus.Counter
	metaTook prometheus.Observer
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "metamesh_http_requests_total",
			Help: "HTTP API requests by route and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "metamesh_http_request_duration_seconds",
			Help:    "HTTP API time to answer by route (for /api/events and /api/file, until the stream ends).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	m.metaOK = m.requests.WithLabelValues(metaRoute, "200")
	m.metaTook = m.duration.WithLabelValues(metaRoute)
	return m
}

func (m *httpMetrics) observe(route string, code int, took time.Duration) {
	if route == metaRoute && code == http.StatusOK {
		m.metaOK.Inc()
		m.metaTook.Observe(took.Seconds())
		return
	}
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.duration.WithLabelValues(route).Observe(took.Seconds())
}

// codeWriter remembers the status code written. It passes Flush (through
// Unwrap, for http.ResponseController) and ReadFrom (sendfile for
// /api/file) to the writer it wraps.
type codeWriter struct {
	http.ResponseWriter
	code int
}

func (w *codeWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *codeWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *codeWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(w.ResponseWriter, r)
}

func (w *codeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *codeWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}
