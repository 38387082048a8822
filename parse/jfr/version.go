package jfr

import (
	"fmt"
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
// and why. JDK-8307488: the first event of a thread weighs every byte the
// thread allocated since it started, not since the recording started
// (event added in JDK 16; fixed in JDK 21; no fix in upstream 17u, where
// we measured it on 17.0.15, docs/jfr.md). JDK-8362573: the same symptom
// came back (a regression) and was fixed in JDK 26; which 21–25 updates
// carry it is not established, so those are warned about too.
func firstSampleWarning(v jdkVersion) string {
	const tail = "the first ObjectAllocationSample of each thread may weigh the bytes the thread allocated before the recording started; " +
		"a thread that allocated much before that shows as one huge sample (look for a single sample with a very large weight in --by stack)"
	switch {
	case !v.known():
		return "JDK version unknown (no java.vm.version in the recording): if it is 16–20, 17u, or 21–25, " + tail + " (JDK-8307488, JDK-8362573)"
	case v.major < 16 || v.major >= 26:
		return ""
	case v.major <= 20:
		return fmt.Sprintf("JDK %s has JDK-8307488 (fixed in 21): %s", v.text, tail)
	default:
		return fmt.Sprintf("JDK %s may have JDK-8362573 (a regression of JDK-8307488, fixed in 26): %s", v.text, tail)
	}
}
