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

// createTemp makes a temporary file as os.CreateTemp does, and records it
// until release is called. The handler is in place before the file is
// made, and waits for it to be recorded: no signal falls between.
func createTemp(dir, pattern string) (f *os.File, release func(), err error) {
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
	f, err = os.CreateTemp(dir, pattern)
	if err != nil {
		stopSignals()
		return nil, nil, err
	}
	path := f.Name()
	temps.paths[path] = true
	return f, func() {
		temps.Lock()
		defer temps.Unlock()
		delete(temps.paths, path)
		stopSignals()
	}, nil
}

// stopSignals gives the signals back to their default action when no
// temporary file is left. temps is locked.
func stopSignals() {
	if len(temps.paths) == 0 && temps.sig != nil {
		signal.Stop(temps.sig)
		close(temps.sig)
		temps.sig = nil
	}
}

// removeOnSignal waits for a signal on c; on one it removes the temporary
// files and ends the process by that signal.
func removeOnSignal(c chan os.Signal) {
	s, ok := <-c
	if !ok {
		return
	}
	temps.Lock() // held to the end: no temporary file is made after this
	for p := range temps.paths {
		os.Remove(p)
	}
	// Back to the default action, which ends the process (heapest web,
	// which has handlers of its own, writes no files).
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
