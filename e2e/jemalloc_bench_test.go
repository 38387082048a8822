package e2e

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkJemallocReport times `heapest report --by func` on the synthetic
// dumps of bench/run.sh (bench/gendump, prof_unbias encoding), for iterating
// on speed: go test -run '^$' -bench JemallocReport ./e2e. bench/run.sh is
// the comparison with jeprof.
func BenchmarkJemallocReport(b *testing.B) {
	heapest := heapestBinary(b)
	dir := b.TempDir()
	gendump := filepath.Join(dir, "gendump")
	build := exec.Command("go", "build", "-o", gendump, "./bench/gendump")
	build.Dir = repoRoot(b)
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build ./bench/gendump: %v\n%s", err, out)
	}
	for _, stacks := range []int{5000, 20000} {
		dump := filepath.Join(dir, strconv.Itoa(stacks)+".heap")
		if out, err := exec.Command(gendump, "-binary", heapest, "-unbias",
			"-stacks", strconv.Itoa(stacks), "-o", dump).CombinedOutput(); err != nil {
			b.Fatalf("gendump: %v\n%s", err, out)
		}
		b.Run(strconv.Itoa(stacks)+"stacks", func(b *testing.B) {
			for b.Loop() {
				if _, errOut, err := runErr(nil, heapest, "report", "--by", "func", dump); err != nil {
					b.Fatalf("heapest: %v\n%s", err, errOut)
				}
			}
		})
	}
}
