// libFuzzer target "avcc_record": feeds each input to FuzzEntryPoints.avcCRecord (Sources/H264/FuzzEntryPoints.swift).
// Built by scripts/fuzz.sh together with the H264 sources: swiftc -sanitize=fuzzer -parse-as-library.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = [UInt8](UnsafeRawBufferPointer(start: start, count: count))
    FuzzEntryPoints.avcCRecord(bytes)
    return 0
}
