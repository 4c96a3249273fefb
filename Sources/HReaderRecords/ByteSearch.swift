import CByteSearch
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
            // memmem (glibc's and the BSDs'): the markers begin with a quote, which JSON has every few
            // bytes, so a memchr for the first byte and a memcmp at each stopped about every eighth byte.
            guard let hit = pattern.withUnsafeBufferPointer({ hreader_memmem(base + start, haystack.count - start, $0.baseAddress, $0.count) })
            else { return nil }
            return UnsafePointer(hit.assumingMemoryBound(to: UInt8.self)) - base
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
