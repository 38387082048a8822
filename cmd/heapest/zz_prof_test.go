package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

func TestZZProf(t *testing.T) {
	args := strings.Fields(os.Getenv("ZZARGS"))
	if len(args) == 0 {
		t.Skip()
	}
	code := run(context.Background(), args, strings.NewReader(""), io.Discard, os.Stderr)
	t.Log(code)
}
