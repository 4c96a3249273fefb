#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Finding an ASCII marker in bytes that are not parsed (yet): the test that lets most inputs skip a
/// parse, or the cut that takes a document out of a page. Byte for byte, never through String (whose
/// search compares characters, and in Foundation UTF-16).
enum ByteSearch {
    /// The offset of the first `needle` in `haystack` at or after `start`; with `ignoringCase`, ASCII
    /// letters match either case. Nil when it is not there (or `needle` is empty).
    static func find(_ needle: String, in haystack: UnsafeBufferPointer<UInt8>, from start: Int = 0, ignoringCase: Bool = false) -> Int? {
        let pattern = Array(needle.utf8)
        guard let base = haystack.baseAddress, !pattern.isEmpty, start >= 0, haystack.count - start >= pattern.count else { return nil }
        if !ignoringCase {
            // memchr to each place the first byte is, then memcmp (memmem is a GNU extension).
            let end = base + haystack.count
            var at = base + start
            while end - at >= pattern.count, let hit = memchr(at, Int32(pattern[0]), end - at - pattern.count + 1) {
                let place = UnsafePointer(hit.assumingMemoryBound(to: UInt8.self))
                if memcmp(place, pattern, pattern.count) == 0 { return place - base }
                at = place + 1
            }
            return nil
        }
        func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte }
        let first = lower(pattern[0])
        var i = start
        while i <= haystack.count - pattern.count {
            if lower(haystack[i]) == first {
                var j = 1
                while j < pattern.count, lower(haystack[i + j]) == lower(pattern[j]) { j += 1 }
                if j == pattern.count { return i }
            }
            i += 1
        }
        return nil
    }

    static func find(_ needle: String, in haystack: [UInt8], from start: Int = 0, ignoringCase: Bool = false) -> Int? {
        haystack.withUnsafeBufferPointer { find(needle, in: $0, from: start, ignoringCase: ignoringCase) }
    }

    /// Whether `text`'s UTF-8 holds one of `needles`.
    static func contains(any needles: [String], in text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in needles.contains { find($0, in: bytes) != nil } }
    }
}
