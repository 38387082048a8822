package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

func TestZZProf(t *testing.T) {
	a := os.Getenv("ZZARGS")
	if a == "" {
		t.Skip()
	}
	for i := 0; i < 3; i++ {
		run(context.Background(), strings.Fields(a), os.Stdin, io.Discard, io.Discard)
	}
}
