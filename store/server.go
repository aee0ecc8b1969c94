package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// SocketName is the file name of the managed redis-server's unix socket
// inside ServerConfig.Dir. It is short on purpose: see MaxSocketPath.
const SocketName = "r.sock"

// MaxSocketPath is the longest unix socket path the kernel accepts: the
// 108 bytes of sun_path less the terminating NUL.
const MaxSocketPath = 107

// ServerConfig configures a managed redis-server child process.
type ServerConfig struct {
	// Dir holds the append-only files, redis.log and the unix socket
	// (SocketName). It is created, or narrowed, to mode 0700. Required;
	// Dir/SocketName must fit in MaxSocketPath bytes once made absolute.
	Dir string
	// Binary is the redis-server executable. Default "redis-server" on PATH.
	Binary string
	// Port is ignored: the server listens on its unix socket only, never
	// on TCP.
	//
	// Deprecated: kept so existing callers compile; it has no effect.
	Port int
	// Logger receives lifecycle lines. Default slog.Default().
	Logger *slog.Logger
	// StartTimeout bounds how long Start waits for PING. Default 15s.
	StartTimeout time.Duration
	// LockWait bounds how long Start waits for the data directory's lock
	// (held by another node, or by the redis-server of one that just
	// died). Default 5s.
	LockWait time.Duration
	// Databases is the number of logical databases (redis-server
	// --databases); 0 keeps Redis' 16. A simulation of many households
	// gives each its own.
	Databases int
	// HangAfter is how long the server may leave PING unanswered while
	// its process still runs (stopped, or stuck on a hung disk) before
	// it is killed and restarted. Default 10s.
	HangAfter time.Duration
}

// Server is a supervised redis-server child process with append-only
// persistence (appendonly yes, appendfsync everysec). It listens on a unix
// socket in its directory (mode 0700, no TCP port), so only the node's
// user can reach it. If the process dies it is restarted on the same
// socket with the same data, after a short backoff, until Close is called.
type Server struct {
	cfg    ServerConfig
	log    *slog.Logger
	socket string // absolute path of the unix socket

	lock *os.File // flock on Dir/metamesh.lock: one server per data dir

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	closing bool
	done    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
	err     error
}

// StartServer starts redis-server and returns once it answers PING. The
// process is supervised until Close.
func StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.Dir == "" {
		return nil, fmt.Errorf("store: ServerConfig.Dir is empty")
	}
	if cfg.Binary == "" {
		cfg.Binary = "redis-server"
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 15 * time.Second
	}
	if cfg.LockWait == 0 {
		cfg.LockWait = 5 * time.Second
	}
	if cfg.HangAfter <= 0 {
		cfg.HangAfter = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	bin, err := exec.LookPath(cfg.Binary)
	if err != nil {
		return nil, fmt.Errorf("%w: %q not found on PATH; install it with `sudo apt-get install redis-server` (Debian/Ubuntu) or pass --redis-url to use a running server", ErrRedisNotInstalled, cfg.Binary)
	}
	cfg.Binary = bin
	if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		return nil, fmt.Errorf("store: redis dir: %w", err)
	}
	socket := filepath.Join(cfg.Dir, SocketName)
	if len(socket) > MaxSocketPath {
		return nil, fmt.Errorf("store: the redis socket path %s is %d bytes long, over the %d bytes a unix socket path may have; use a data directory with a shorter path", socket, len(socket), MaxSocketPath)
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: create redis dir: %w", err)
	}
	// The socket has no password: the directory is what keeps other
	// users out, so narrow one that was created wider.
	if err := os.Chmod(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: redis dir: %w", err)
	}
	s := &Server{cfg: cfg, log: cfg.Logger.With("component", "redis-server"), socket: socket, done: make(chan struct{})}
	if s.lock, err = lockDir(cfg.Dir, cfg.LockWait, s.log); err != nil {
		return nil, err
	}
	if err := s.launch(ctx); err != nil {
		s.lock.Close()
		return nil, err
	}
	s.wg.Add(2)
	go s.supervise()
	go s.watch()
	s.log.Info("redis-server ready", "socket", s.Addr(), "dir", cfg.Dir)
	return s, nil
}

// lockDir takes an exclusive lock on dir, so two processes never run a
// redis-server on the same append-only files. The kernel drops the lock
// when the node and its redis-server are gone, even after kill -9.
func lockDir(dir string, wait time.Duration, log *slog.Logger) (*os.File, error) {
	path := filepath.Join(dir, "metamesh.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// A redis-server of a node that was just killed may still be
	// flushing; it holds the lock too (it inherits it), so wait a little.
	deadline := time.Now().Add(wait)
	for said := false; ; said = true {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			break
		}
		if !said {
			log.Info("the data directory is in use; waiting a moment in case its previous redis-server is still shutting down",
				"dir", dir, "wait", wait)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is used by another running metamesh: stop it first, or give this command --data of its own (fsck and scan can use the running node's Redis with --redis-url unix://%s/r.sock)", ErrDataDirInUse, dir, dir)
		}
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	return f, nil
}

// RunningServer is the URL of the managed redis-server that another
// process (a running node) serves for dataDir, and whether one answers on
// its socket now. A socket left by a server that is gone does not answer.
func RunningServer(ctx context.Context, dataDir string) (string, bool) {
	sock, err := filepath.Abs(filepath.Join(dataDir, "redis", SocketName))
	if err != nil {
		return "", false
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 {
		return "", false
	}
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer c.Close()
	if c.Ping(ctx).Err() != nil {
		return "", false
	}
	return (&url.URL{Scheme: "unix", Path: sock}).String(), true
}

// Addr is the absolute path of the server's unix socket (redis-cli -s).
func (s *Server) Addr() string { return s.socket }

// URL is a unix:// URL of the server's socket, as Options.URL and
// go-redis's ParseURL take it.
func (s *Server) URL() string { return (&url.URL{Scheme: "unix", Path: s.socket}).String() }

// Pid returns the current process id, or 0 when none is running.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

func (s *Server) launch(ctx context.Context) error {
	logf, err := os.OpenFile(filepath.Join(s.cfg.Dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("store: open redis log: %w", err)
	}
	cmd := exec.Command(s.cfg.Binary,
		"--port", "0", // no TCP listener at all
		"--unixsocket", s.socket,
		"--unixsocketperm", "700",
		"--protected-mode", "yes",
		"--dir", s.cfg.Dir,
		"--appendonly", "yes",
		"--appendfsync", "everysec",
		"--save", "",
		"--daemonize", "no",
		"--notify-keyspace-events", notifyClasses,
		"--databases", strconv.Itoa(max(s.cfg.Databases, 16)),
		"--logfile", "",
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	// What this start writes to redis.log begins here (a damaged AOF is
	// said there).
	logFrom, _ := logf.Seek(0, io.SeekEnd)
	// The child shares the data-dir lock, so the lock lasts as long as
	// either process does.
	cmd.ExtraFiles = []*os.File{s.lock}
	// The server dies with the node even on kill -9, so a restart never
	// finds a stale server holding the socket or the data files.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("store: start redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.socket, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	for {
		if err := c.Ping(ctx).Err(); err == nil {
			return nil
		}
		select {
		case <-exited:
			if err := s.aofDamage(logFrom); err != nil {
				return err
			}
			return fmt.Errorf("store: redis-server exited at start-up (%s); see %s", cmd.ProcessState, filepath.Join(s.cfg.Dir, "redis.log"))
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("store: redis-server did not answer PING on %s: %w", s.socket, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// supervise restarts the process when it dies unexpectedly.
func (s *Server) supervise() {
	defer s.wg.Done()
	backoff := 100 * time.Millisecond
	for {
		s.mu.Lock()
		exited := s.exited
		s.mu.Unlock()
		select {
		case <-s.done:
			return
		case <-exited:
		}
		s.mu.Lock()
		closing := s.closing
		s.mu.Unlock()
		if closing {
			return
		}
		s.log.Warn("redis-server exited; restarting", "socket", s.socket, "backoff", backoff)
		select {
		case <-s.done:
			return
		case <-time.After(backoff):
		}
		if err := s.launch(context.Background()); err != nil {
			s.log.Error("redis-server restart failed", "err", err)
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		s.log.Info("redis-server restarted", "socket", s.socket)
		backoff = 100 * time.Millisecond
	}
}

// watch kills a server that has left PING unanswered for HangAfter
// while its process runs (SIGSTOP, a hung disk): supervise then restarts
// it, as it restarts one that exits.
func (s *Server) watch() {
	defer s.wg.Done()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.socket, MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: time.Second, WriteTimeout: time.Second, PoolSize: 1})
	defer c.Close()
	every := max(s.cfg.HangAfter/5, 100*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	var silentSince time.Time
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		err := c.Ping(ctx).Err()
		cancel()
		s.mu.Lock()
		cmd, exited := s.cmd, s.exited
		s.mu.Unlock()
		select {
		case <-exited:
			silentSince = time.Time{} // supervise's to restart
			continue
		default:
		}
		switch {
		case err == nil:
			silentSince = time.Time{}
		case silentSince.IsZero():
			silentSince = time.Now()
		case time.Since(silentSince) >= s.cfg.HangAfter:
			s.log.Warn("redis-server has not answered PING; killing it to restart it", "for", time.Since(silentSince).Round(time.Second), "pid", cmd.Process.Pid, "err", err)
			_ = cmd.Process.Kill()
			silentSince = time.Time{}
		}
	}
}

// Close shuts the server down cleanly (SIGTERM, which makes redis flush
// the append-only file) and waits for it. It is idempotent.
func (s *Server) Close() error {
	s.once.Do(func() {
		defer s.lock.Close()
		s.mu.Lock()
		s.closing = true
		cmd, exited := s.cmd, s.exited
		s.mu.Unlock()
		close(s.done)
		s.wg.Wait()
		if cmd == nil || cmd.Process == nil {
			return
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			s.err = errors.New("store: redis-server did not stop within 10s; killed")
		}
	})
	return s.err
}

var _ io.Closer = (*Server)(nil)

// AOFDamagedError: redis-server refused to start because the store's
// append-only file is damaged. The node never deletes or moves it: the
// household's metadata is there. Its Error is the one line that says
// what to run (Command), which asks before it cuts the damaged part off.
type AOFDamagedError struct {
	// Path is what redis-check-aof takes: the manifest of Redis 7's
	// appendonlydir, or the one appendonly.aof of older versions.
	Path string
	// Said is redis-server's own line about it.
	Said string
}

func (e *AOFDamagedError) Error() string {
	return fmt.Sprintf("the store's append-only file is damaged (redis-server: %s): run %s, then start the node again (it asks before it cuts the damaged part off; a copy of %s kept first loses nothing)",
		e.Said, e.Command(), filepath.Dir(e.Path))
}

// Command is the command that repairs the file.
func (e *AOFDamagedError) Command() string { return "redis-check-aof --fix " + e.Path }

// aofSaid are the starts of what redis-server says when it refuses an
// append-only file it cannot read (aof.c, rdb.c: a base file in RDB
// form). A tail cut short is loaded without it (aof-load-truncated).
var aofSaid = []string{
	"Bad file format reading the append only file",
	"Unexpected end of file reading the append only file",
	"Short read or OOM loading DB",
	"Invalid AOF manifest file format",
	"Found a non-monotonic sequence number",
	"Found duplicate base file information",
	"Found an unknown file type",
	"Invalid AOF file name",
	"The AOF manifest file is invalid",
	"doesn't exist",
}

// aofDamage reads what redis-server wrote to redis.log since offset from
// and returns an *AOFDamagedError when it refused the append-only file.
func (s *Server) aofDamage(from int64) error {
	f, err := os.Open(filepath.Join(s.cfg.Dir, "redis.log"))
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size()-from > 64<<10 {
		from = fi.Size() - 64<<10
	}
	b, err := io.ReadAll(io.NewSectionReader(f, from, 64<<10))
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		for _, said := range aofSaid {
			i := strings.Index(line, said)
			if i < 0 || (said == "doesn't exist" && !strings.Contains(line, "AOF")) {
				continue
			}
			// "…: make a backup of your AOF file, then use
			// ./redis-check-aof --fix <filename.manifest>" is said
			// better by the error.
			msg, _, _ := strings.Cut(line[i:], ": make a backup")
			msg, _, _ = strings.Cut(msg, ". You can:")
			return &AOFDamagedError{Path: s.aofPath(), Said: strings.TrimSpace(msg)}
		}
	}
	return nil
}

// aofPath is the file redis-check-aof takes: Redis 7's manifest when
// there is one, else the single file of older versions.
func (s *Server) aofPath() string {
	dir, err := filepath.Abs(s.cfg.Dir)
	if err != nil {
		dir = s.cfg.Dir
	}
	manifest := filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest")
	if _, err := os.Stat(manifest); err == nil {
		return manifest
	}
	return filepath.Join(dir, "appendonly.aof")
}
