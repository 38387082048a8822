package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// temps are the temporary files of outputs being written. While there are
// any, SIGINT, SIGTERM and SIGHUP remove them before the process ends by
// the signal, as it would have without heapest's handler: a deferred
// os.Remove does not run when a signal ends the process, and interrupted
// runs had left hidden .out.txt.tmp files in output directories.
var temps struct {
	sync.Mutex
	paths map[string]bool
	sig   chan os.Signal
}

// holdTemp records a temporary file until release is called.
func holdTemp(path string) (release func()) {
	temps.Lock()
	defer temps.Unlock()
	if temps.paths == nil {
		temps.paths = map[string]bool{}
	}
	if len(temps.paths) == 0 {
		temps.sig = make(chan os.Signal, 1)
		for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
			// One ignored from the start (nohup, a background job of a
			// script) stays ignored.
			if !signal.Ignored(s) {
				signal.Notify(temps.sig, s)
			}
		}
		go removeOnSignal(temps.sig)
	}
	temps.paths[path] = true
	return func() {
		temps.Lock()
		defer temps.Unlock()
		delete(temps.paths, path)
		if len(temps.paths) == 0 && temps.sig != nil {
			signal.Stop(temps.sig)
			close(temps.sig)
			temps.sig = nil
		}
	}
}

// removeOnSignal waits for a signal on c; on one it removes the temporary
// files and ends the process by that signal.
func removeOnSignal(c chan os.Signal) {
	s, ok := <-c
	if !ok {
		return
	}
	temps.Lock() // held to the end: no output is renamed into place after this
	for p := range temps.paths {
		os.Remove(p)
	}
	signal.Reset(s)
	if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(s) == nil {
		time.Sleep(time.Second) // the signal ends the process
	}
	// Where a process cannot signal itself (Windows), the shell's status
	// for a death by signal.
	code := 130
	if n, ok := s.(syscall.Signal); ok {
		code = 128 + int(n)
	}
	os.Exit(code)
}
