package jfr

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// jdkVersion is a Java runtime version as java.vm.version gives it
// ("17.0.2+8-86", "21+35", "1.8.0_292-b10"): feature (major) release,
// interim and update numbers. The zero value is unknown.
type jdkVersion struct {
	major, minor, update int
	text                 string
}

func (v jdkVersion) known() bool { return v.major > 0 }

// parseJDKVersion reads the leading numbers of a version string; JDK 8
// and older write "1.8.0_292".
func parseJDKVersion(s string) jdkVersion {
	v := jdkVersion{text: s}
	head := s
	if i := strings.IndexAny(head, "+-"); i >= 0 {
		head = head[:i]
	}
	if rest, ok := strings.CutPrefix(head, "1."); ok {
		// 1.8.0_292: feature 8, update 292.
		parts := strings.SplitN(rest, "_", 2)
		nums := strings.Split(parts[0], ".")
		v.major, _ = strconv.Atoi(nums[0])
		if len(parts) == 2 {
			v.update, _ = strconv.Atoi(parts[1])
		}
		return v
	}
	nums := strings.Split(head, ".")
	for i, p := range nums {
		n, err := strconv.Atoi(p)
		if err != nil {
			break
		}
		switch i {
		case 0:
			v.major = n
		case 1:
			v.minor = n
		case 2:
			v.update = n
		}
	}
	return v
}

// firstSampleWarning says whether the first jdk.ObjectAllocationSample of
// each thread in a recording made by runtime v may carry a wrong weight,
// and why. JDK-8307488: the first event of a thread also weighs the bytes
// the thread allocated before the recording started (the event came in
// JDK 16; fixed in JDK 21; measured still there in OpenJDK 17.0.15).
// JDK-8362573: the same fault came back and was fixed in JDK 26 (measured
// in Temurin 25.0.3); which 21–24 updates have it is not established, so
// they are warned about too. docs/jfr.md has the measurements.
func firstSampleWarning(v jdkVersion) string {
	const what = "the first ObjectAllocationSample of each thread also weighs the bytes the thread allocated before the recording started"
	switch {
	case !v.known():
		return "JDK version unknown (no java.vm.version in the recording): on JDK 16 to 25 " + what + " (JDK-8307488, JDK-8362573)"
	case v.major < 16 || v.major >= 26:
		return ""
	case v.major <= 20:
		return fmt.Sprintf("JDK %s has JDK-8307488 (fixed in 21; 17.0.15 measured still has it): %s", v.text, what)
	default:
		return fmt.Sprintf("JDK %s may have JDK-8362573 (JDK-8307488 back, fixed in 26; 25.0.3 measured has it): %s", v.text, what)
	}
}

// firstSamples keeps, per thread, the weight of its first
// ObjectAllocationSample and the sum and count of the others: enough to
// point at the threads whose first sample looks like JDK-8307488's.
type firstSamples map[string]*threadWeights

type threadWeights struct {
	first, rest float64
	n           int
}

func (f *firstSamples) add(thread string, w float64) {
	if *f == nil {
		*f = firstSamples{}
	}
	t := (*f)[thread]
	if t == nil {
		(*f)[thread] = &threadWeights{first: w}
		return
	}
	t.rest += w
	t.n++
}

// suspectRatio and suspectBytes decide which first samples are named: at
// least 1 MiB and 20 times the thread's later samples' mean (measured:
// 516 MB against 2 MB when a thread allocated 500 MiB before the
// recording, docs/jfr.md).
const (
	suspectRatio = 20
	suspectBytes = 1 << 20
)

// suspects names the threads whose first sample outweighs their later ones
// by far, for the first-sample warning ("" when none does). A thread the
// recording saw start (jdk.ThreadStart: started) allocated nothing before
// it: a heavy first sample of its is the throttle's, not yet settled.
func (f firstSamples) suspects(started threadTimes) string {
	var names []string
	var sum float64
	for name, t := range f {
		if t.first < suspectBytes || t.n > 0 && t.first < suspectRatio*t.rest/float64(t.n) {
			continue
		}
		if _, ok := started[name]; ok {
			continue
		}
		names = append(names, fmt.Sprintf("%s %s", name, human(t.first)))
		sum += t.first
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	n := len(names)
	if n > 5 {
		names = append(names[:5], fmt.Sprintf("and %d more", n-5))
	}
	threads := "threads"
	if n == 1 {
		threads = "thread"
	}
	return fmt.Sprintf(". Here the first samples of %d %s weigh %s in all, far more than their later ones: %s", n, threads, human(sum), strings.Join(names, ", "))
}

// human writes a byte count in GiB, MiB or KiB, for warnings.
func human(b float64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	}
	if b >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", b/(1<<10))
}
