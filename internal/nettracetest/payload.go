package nettracetest

import "bytes"

// AllocationSampled is the payload of runtime event 303 (version 0):
// AllocationKind u32, ClrInstanceID u16, TypeID pointer, TypeName UTF-16z,
// Address pointer, ObjectSize u64, SampledByteOffset u64.
func AllocationSampled(ptr int, kind uint32, typeID uint64, typeName string, address, size, offset uint64) []byte {
	var b bytes.Buffer
	put32(&b, kind)
	put16(&b, 1) // ClrInstanceID
	putPtr(&b, ptr, typeID)
	utf16z(&b, typeName)
	putPtr(&b, ptr, address)
	put64(&b, size)
	put64(&b, offset)
	return b.Bytes()
}

// AllocationTick is the payload of GCAllocationTick (runtime event 10) at
// version 0 to 4: AllocationAmount u32, AllocationKind u32; v1+
// ClrInstanceID u16; v2+ AllocationAmount64 u64, TypeID pointer, TypeName
// UTF-16z, HeapIndex u32; v3+ Address pointer; v4+ ObjectSize u64.
func AllocationTick(ptr, version int, amount uint64, kind uint32, typeID uint64, typeName string, address, objectSize uint64) []byte {
	var b bytes.Buffer
	put32(&b, uint32(min(amount, 1<<32-1)))
	put32(&b, kind)
	if version >= 1 {
		put16(&b, 1)
	}
	if version >= 2 {
		put64(&b, amount)
		putPtr(&b, ptr, typeID)
		utf16z(&b, typeName)
		put32(&b, 0) // HeapIndex
	}
	if version >= 3 {
		putPtr(&b, ptr, address)
	}
	if version >= 4 {
		put64(&b, objectSize)
	}
	return b.Bytes()
}

// Method is the payload of MethodLoadVerbose (runtime 143) and
// MethodDC{Start,End}Verbose (rundown 143/144) at version 1: MethodID,
// ModuleID, MethodStartAddress u64, MethodSize, MethodToken, MethodFlags
// u32, MethodNamespace, MethodName, MethodSignature UTF-16z, ClrInstanceID.
func Method(methodID, moduleID, start uint64, size uint32, namespace, name, signature string) []byte {
	var b bytes.Buffer
	put64(&b, methodID)
	put64(&b, moduleID)
	put64(&b, start)
	put32(&b, size)
	put32(&b, 0x06000001) // token
	put32(&b, 0)          // flags
	utf16z(&b, namespace)
	utf16z(&b, name)
	utf16z(&b, signature)
	put16(&b, 1)
	return b.Bytes()
}

// Module is the payload of ModuleLoad (runtime 152) and ModuleDC{Start,End}
// (rundown 153/154) at version 1: ModuleID, AssemblyID u64, ModuleFlags,
// Reserved u32, ModuleILPath, ModuleNativePath UTF-16z, ClrInstanceID.
func Module(moduleID, assemblyID uint64, ilPath string) []byte {
	var b bytes.Buffer
	put64(&b, moduleID)
	put64(&b, assemblyID)
	put32(&b, 0)
	put32(&b, 0)
	utf16z(&b, ilPath)
	utf16z(&b, "")
	put16(&b, 1)
	return b.Bytes()
}

func putPtr(b *bytes.Buffer, ptr int, v uint64) {
	if ptr == 4 {
		put32(b, uint32(v))
		return
	}
	put64(b, v)
}
