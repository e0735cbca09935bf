#if canImport(Glibc)
import Glibc
#endif

/// Large pixel buffers backed by 2 MiB pages where the kernel offers them (transparent huge pages in
/// `madvise` mode, Debian's default): a fresh 12 MB decode buffer then costs 6 page faults instead of
/// 3,000 — first-touch page faults are a large part of a whole-process run.
enum HugePages {
    static let size = 2 << 20

    /// Advises the 2 MiB-aligned interior of a freshly allocated buffer, before it is first written.
    static func advise(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        #if os(Linux)
        guard buffer.count >= 2 * size, let base = buffer.baseAddress else { return }
        let start = (Int(bitPattern: base) + size - 1) & ~(size - 1)
        let end = (Int(bitPattern: base) + buffer.count) & ~(size - 1)
        guard end > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(pointer, end - start, MADV_HUGEPAGE)
        #endif
    }
}
