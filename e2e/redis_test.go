package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRedis reads the dump of a real server: Debian's Redis, linked with
// Debian's jemalloc (built with profiling), filled over its protocol with
// 20,000 values of 1,000 bytes. jemalloc writes the dump as Redis exits
// (prof_final). The truth is Redis's own count of its memory, INFO's
// used_memory: the usable size of every block it allocated through its
// zmalloc wrappers, as jemalloc's profile counts them too (the few
// allocations of its libraries that bypass zmalloc are the profile's and
// not used_memory's: tens of kilobytes against 20 MB).
//
// Every allocation goes through the wrappers, which so hold every flat
// byte: --hide '^zmalloc' gives them to the wrappers' callers instead,
// with the total unchanged.
func TestRedis(t *testing.T) {
	server := redisServer(t)
	heapest := heapestBinary(t)
	dir := t.TempDir()
	port := strconv.Itoa(freePort(t))
	cmd := exec.Command(server, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	cmd.Env = append(os.Environ(), "MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:15,prof_final:true,prof_prefix:"+dir+"/jeprof")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	c := dialRedis(t, "127.0.0.1:"+port, &logs)
	value := strings.Repeat("v", 1000)
	const keys, batch = 20000, 500
	for i := 0; i < keys; i += batch {
		for j := i; j < i+batch; j++ {
			c.send("SET", fmt.Sprintf("key:%d", j), value)
		}
		for j := i; j < i+batch; j++ {
			if r := c.reply(t); r != "OK" {
				t.Fatalf("SET: %q", r)
			}
		}
	}
	c.send("INFO", "memory")
	used := infoField(t, c.reply(t), "used_memory")
	c.send("SHUTDOWN", "NOSAVE")
	if err := c.w.Flush(); err != nil {
		t.Fatal(err)
	}
	c.conn.Close()
	stop := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	defer stop.Stop()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("redis-server: %v\n%s", err, logs.String())
	}
	dumps, _ := filepath.Glob(filepath.Join(dir, "jeprof.*.f.heap"))
	if len(dumps) != 1 {
		t.Fatalf("want jemalloc's final dump in %s, found %v\n%s", dir, dumps, logs.String())
	}

	report := func(args ...string) Report {
		args = append([]string{"report", "--format", "json", "--top", "0", "--confidence", "0.999"}, args...)
		return parseReport(t, run(t, nil, heapest, append(args, dumps[0])...))
	}
	plain, hidden := report(), report("--hide", "^zmalloc")
	tot := plain.Total
	t.Logf("used_memory %.0f B; heapest %.0f [%.0f, %.0f] from %.0f samples", used, tot.Estimate, tot.Lo, tot.Hi, tot.Samples)
	if !(tot.Lo <= used && used <= tot.Hi) {
		t.Errorf("total's 99.9%% interval [%.0f, %.0f] misses Redis's used_memory %.0f", tot.Lo, tot.Hi, used)
	}
	if top := plain.Rows[0]; !strings.HasPrefix(top.Key, "zmalloc") || top.Estimate < used/2 {
		t.Errorf("top function %q holds %.0f B: want one of Redis's zmalloc wrappers, with most of it", top.Key, top.Estimate)
	}
	if h := hidden.Total; h.Estimate != tot.Estimate || h.Lo != tot.Lo || h.Hi != tot.Hi || h.Samples != tot.Samples {
		t.Errorf("--hide changed the total: %+v, was %+v", hidden.Total, tot)
	}
	var flat float64
	for _, r := range hidden.Rows {
		if strings.HasPrefix(r.Key, "zmalloc") {
			t.Errorf("--hide '^zmalloc' left row %q", r.Key)
		}
		flat += r.Estimate
	}
	if d := flat - tot.Estimate; d*d > 1e-6*tot.Estimate*tot.Estimate {
		t.Errorf("--hide: the rows' flat bytes sum to %.0f, the total is %.0f", flat, tot.Estimate)
	}
}

// redisServer is Debian's redis-server, or redis-tools' redis-check-rdb
// (the same program, which serves when not called by that name) linked
// as one.
func redisServer(t *testing.T) string {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p
	}
	rdb, err := exec.LookPath("redis-check-rdb")
	if err != nil {
		missing(t, "neither redis-server nor redis-check-rdb in PATH (scripts/install-deps.sh installs redis-tools)")
	}
	link := filepath.Join(t.TempDir(), "redis-server")
	if err := os.Symlink(rdb, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// respConn speaks Redis's protocol (RESP2), as much as the test needs.
type respConn struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
}

// dialRedis connects to a server that is starting, for up to 10 s.
func dialRedis(t *testing.T, addr string, logs *strings.Builder) *respConn {
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			return &respConn{conn: c, r: bufio.NewReader(c), w: bufio.NewWriter(c)}
		}
	}
	t.Fatalf("redis-server did not listen on %s\n%s", addr, logs.String())
	return nil
}

// send writes a command; reply reads its answer (the next one).
func (c *respConn) send(args ...string) {
	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n%s\r\n", len(a), a)
	}
}

// reply flushes what was sent and reads one simple, integer or bulk
// string reply.
func (c *respConn) reply(t *testing.T) string {
	t.Helper()
	if err := c.w.Flush(); err != nil {
		t.Fatal(err)
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch {
	case line == "":
		t.Fatal("empty reply")
	case line[0] == '+' || line[0] == ':':
		return line[1:]
	case line[0] == '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			t.Fatalf("bulk reply %q", line)
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, b); err != nil {
			t.Fatal(err)
		}
		return string(b[:n])
	}
	t.Fatalf("reply %q", line)
	return ""
}

// infoField is a numeric field of an INFO reply.
func infoField(t *testing.T, info, name string) float64 {
	t.Helper()
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("INFO %s: %q", name, v)
			}
			return x
		}
	}
	t.Fatalf("INFO has no %s:\n%s", name, info)
	return 0
}
