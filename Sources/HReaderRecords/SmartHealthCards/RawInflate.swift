import CZlibChecksum

/// Raw DEFLATE (RFC 1951, no zlib or gzip header), inflated in memory by zlib, refusing output past
/// `limit` bytes as soon as it gets there: a few hundred bytes that inflate to gigabytes (a
/// "DEFLATE bomb") cost at most `limit` plus one buffer. A SMART Health Card's payload is such a
/// stream (`zip: "DEF"`).
///
///     let json = try RawInflate.inflate(compressed, limit: 1 << 20)
public enum RawInflate {
    public enum Failure: Error, Equatable {
        /// The stream inflates to more than the limit.
        case tooLarge(limit: Int)
        /// Not a complete raw DEFLATE stream (damaged, truncated, or with bytes after its end).
        case damaged(String)
    }

    /// Not a zlib status: the output passed the limit.
    private static let exceeded: Int32 = -1000

    public static func inflate(_ input: [UInt8], limit: Int) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        // -15: raw DEFLATE with a 32 KiB window, no header or trailer.
        guard inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .damaged("zlib could not start inflating")
        }
        defer { inflateEnd(&stream) }
        let chunk = 64 << 10
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        var input = input
        let result: Int32 = input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = UInt32(source.count)
            while true {
                let (status, produced) = buffer.withUnsafeMutableBufferPointer { target -> (Int32, Int) in
                    stream.next_out = target.baseAddress
                    stream.avail_out = UInt32(target.count)
                    let status = CZlibChecksum.inflate(&stream, Z_NO_FLUSH)
                    return (status, target.count - Int(stream.avail_out))
                }
                if produced > 0 {
                    if output.count + produced > limit { return Self.exceeded }
                    output.append(contentsOf: buffer[0..<produced])
                }
                switch status {
                case Z_STREAM_END: return stream.avail_in == 0 ? Z_STREAM_END : Z_DATA_ERROR
                case Z_OK: continue
                case Z_BUF_ERROR where stream.avail_in == 0: return Z_BUF_ERROR   // truncated: no more input to finish with
                case Z_BUF_ERROR: continue
                default: return status
                }
            }
        }
        switch result {
        case Z_STREAM_END: return output
        case Self.exceeded: throw .tooLarge(limit: limit)
        case Z_BUF_ERROR: throw .damaged("the compressed data ends before its last block")
        default:
            if let message = stream.msg { throw .damaged(String(cString: message)) }
            throw .damaged("not raw DEFLATE data")
        }
    }
}
