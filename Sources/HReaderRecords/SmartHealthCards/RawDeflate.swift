import CZlibChecksum

/// Raw DEFLATE (RFC 1951, no zlib or gzip header) by zlib, the inverse of `RawInflate`: what a JWE
/// with `zip: DEF` compresses before it encrypts (a SMART Health Link's files).
///
///     let compressed = RawDeflate.deflate(Array(json.utf8))
public enum RawDeflate {
    public static func deflate(_ input: [UInt8], level: Int32 = 6) -> [UInt8] {
        var stream = z_stream()
        // -15: raw DEFLATE with a 32 KiB window; memLevel 8 is zlib's default.
        guard deflateInit2_(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            preconditionFailure("zlib could not start deflating (out of memory)")
        }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))))
        var input = input
        let status: Int32 = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = source.baseAddress
                stream.avail_in = UInt32(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(target.count)
                return CZlibChecksum.deflate(&stream, Z_FINISH)
            }
        }
        // deflateBound is an upper bound for one Z_FINISH call: anything else is a zlib bug.
        precondition(status == Z_STREAM_END, "zlib did not finish deflating in deflateBound's space")
        output.removeLast(Int(stream.avail_out))
        return output
    }
}
