package unbias

import (
	"math/bits"
	"sort"
)

// gperftools' tcmalloc samples an allocation by the size of its size
// class, and records the size asked for (tcmalloc.cc: do_malloc passes
// class_to_size to SampleAllocation, DoSampledAllocation keeps size).
// Unbiasing by the recorded size makes a request below its class look
// rarer than it was: malloc(65), sampled as 80 bytes, weighed 80/65 too
// much. Its classes are computed at start-up (common.cc, SizeMap::Init);
// this is that computation for gperftools' default build on Linux x86-64:
// 8 KiB pages (kPageShift 13), 16-byte minimum alignment, kMaxSize 256 KiB
// and TCMALLOC_TRANSFER_NUM_OBJ 32, the same from gperftools 2.0 to 2.17.
const (
	tcPageSize  = 8 << 10
	tcMaxSize   = 256 << 10
	tcAlignment = 8
	tcMinAlign  = 16
	tcTransfer  = 32
)

var tcClasses = tcmallocClasses()

// tcmallocClasses is SizeMap::Init's class_to_size, ascending.
func tcmallocClasses() []uint64 {
	var sizes, pages []uint64
	for size, align := uint64(tcAlignment), uint64(tcAlignment); size <= tcMaxSize; size += align {
		align = tcAlignmentFor(size)
		move := tcNumMove(size) / 4
		psize := uint64(0)
		for {
			psize += tcPageSize
			// Enough pages that at most an eighth is left over.
			for psize%size > psize>>3 {
				psize += tcPageSize
			}
			if psize/size >= move {
				break
			}
		}
		np := psize / tcPageSize
		if n := len(sizes); n > 0 && np == pages[n-1] && np*tcPageSize/size == np*tcPageSize/sizes[n-1] {
			// As many objects a span as the class before: it grows to
			// take this size too.
			sizes[n-1] = size
			continue
		}
		sizes, pages = append(sizes, size), append(pages, np)
	}
	return sizes
}

// tcAlignmentFor is common.cc's AlignmentForSize below kMaxSize.
func tcAlignmentFor(size uint64) uint64 {
	switch {
	case size >= 128:
		// At most an eighth wasted by alignment.
		return min(uint64(1)<<(bits.Len64(size)-1)/8, tcPageSize)
	case size >= tcMinAlign:
		return tcMinAlign
	}
	return tcAlignment
}

// tcNumMove is SizeMap::NumMoveSize: about 64 KiB of objects a transfer
// between the thread and central caches, 2 to TCMALLOC_TRANSFER_NUM_OBJ.
func tcNumMove(size uint64) uint64 {
	return min(max(64<<10/size, 2), tcTransfer)
}

// TcmallocSampledSize is the size gperftools' tcmalloc sampled a request
// of size bytes by: its size class up to 256 KiB, the request itself above
// (allocated whole pages, sampled by the size asked for).
func TcmallocSampledSize(size uint64) uint64 {
	if size > tcMaxSize {
		return size
	}
	i := sort.Search(len(tcClasses), func(i int) bool { return tcClasses[i] >= size })
	return tcClasses[i]
}
