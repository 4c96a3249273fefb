import CZlibChecksum

/// A zip read front to back, member by member, from its local headers, as its bytes stream by: for a
/// zip inside a zip (Garmin's export keeps its FIT files in zips inside its zip), whose bytes can only
/// be read in order without holding all of them in memory. The central directory at the end is not
/// needed and not read. Only one member's bytes are held, and only a member `next(wanted:)` asks for;
/// the others are inflated and dropped (their CRC checked all the same).
///
///     var zip = SequentialZip(limits: .init(memberBytes: 64 << 20, ratio: 250, members: 200_000), read: source)
///     while let member = try zip.next(wanted: { $0.hasSuffix(".fit") }) { … member.bytes … }
///
/// Members are stored or deflated (a deflated member may state its sizes after its data, as streaming
/// writers do: deflate ends by itself); encrypted members, other methods and a stored member whose
/// size follows its data cannot be read in order and are refused. Untrusted bytes: every failure is a
/// `Failure`, never a trap, and no member inflates past the limits.
public struct SequentialZip {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case damaged(String)
        case tooLarge(String)
        case unsupported(String)

        public var description: String {
            switch self {
            case let .damaged(why), let .tooLarge(why), let .unsupported(why): why
            }
        }
    }

    public struct Limits: Sendable {
        /// The most bytes one member may inflate to.
        public var memberBytes: Int
        /// The most a member may inflate per compressed byte.
        public var ratio: Int
        /// The most members read.
        public var members: Int

        public init(memberBytes: Int, ratio: Int, members: Int) {
            self.memberBytes = memberBytes
            self.ratio = ratio
            self.members = members
        }
    }

    public struct Member {
        public let name: String
        /// The member's bytes when they were wanted, else nil.
        public let bytes: [UInt8]?
    }

    private let limits: Limits
    private let read: (UnsafeMutableRawBufferPointer) throws -> Int
    private var buffer = [UInt8](repeating: 0, count: 256 << 10)
    /// The unread bytes are buffer[start..<end].
    private var start = 0, end = 0
    private var exhausted = false
    private var finished = false
    private var members = 0
    /// Bytes consumed before `buffer[start]`: the offset errors name.
    private var offset = 0

    public init(limits: Limits, read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) {
        self.limits = limits
        self.read = read
    }

    // MARK: Bytes

    /// Makes at least `count` unread bytes available (fewer only at the end of the stream).
    private mutating func fill(_ count: Int) throws {
        precondition(count <= buffer.count)
        if end - start >= count || exhausted { return }
        if start > 0 {
            // The unread bytes to the front (a few, or none: this runs when they ran short).
            for i in 0..<(end - start) { buffer[i] = buffer[start + i] }
            end -= start
            start = 0
        }
        while end - start < count, !exhausted {
            let at = end, read = self.read
            let got = try buffer.withUnsafeMutableBytes { whole in
                try read(UnsafeMutableRawBufferPointer(rebasing: whole[at...]))
            }
            if got <= 0 { exhausted = true } else { end += min(got, buffer.count - at) }
        }
    }

    private mutating func consume(_ count: Int) {
        start += count
        offset += count
    }

    private func le16(_ at: Int) -> Int { Int(buffer[start + at]) | Int(buffer[start + at + 1]) << 8 }
    private func le32(_ at: Int) -> UInt32 {
        UInt32(buffer[start + at]) | UInt32(buffer[start + at + 1]) << 8 | UInt32(buffer[start + at + 2]) << 16 | UInt32(buffer[start + at + 3]) << 24
    }
    private func le64(_ at: Int) -> UInt64 { UInt64(le32(at)) | UInt64(le32(at + 4)) << 32 }

    private static let localHeader: UInt32 = 0x0403_4B50
    private static let centralHeader: UInt32 = 0x0201_4B50
    private static let endOfCentral: UInt32 = 0x0605_4B50
    private static let zip64EndOfCentral: UInt32 = 0x0606_4B50
    private static let descriptor: UInt32 = 0x0807_4B50

    // MARK: Members

    /// The next member, its bytes read when `wanted(name)`; nil after the last (at the central
    /// directory, which a zip cut short lacks: that is a failure).
    public mutating func next(wanted: (String) -> Bool) throws -> Member? {
        if finished { return nil }
        try fill(30)
        // A zip ends with its central directory; bytes that stop before it are a zip cut short.
        guard end - start > 0 else { throw Failure.damaged("the zip ends without its central directory") }
        guard end - start >= 4 else { throw Failure.damaged("the zip ends inside a header at byte \(offset)") }
        let signature = le32(0)
        if signature == Self.centralHeader || signature == Self.endOfCentral || signature == Self.zip64EndOfCentral {
            finished = true
            return nil
        }
        guard signature == Self.localHeader else { throw Failure.damaged("no zip member header at byte \(offset)") }
        guard end - start >= 30 else { throw Failure.damaged("the zip ends inside a header at byte \(offset)") }
        members += 1
        guard members <= limits.members else { throw Failure.tooLarge("the zip holds more than \(limits.members) members") }
        let flags = le16(6), method = le16(8)
        var crc = le32(14)
        var compressed = UInt64(le32(18)), inflated = UInt64(le32(22))
        let nameLength = le16(26), extraLength = le16(28)
        consume(30)
        try fill(nameLength + extraLength)
        guard end - start >= nameLength + extraLength else { throw Failure.damaged("the zip ends inside a member's name at byte \(offset)") }
        let name = String(decoding: buffer[start..<(start + nameLength)], as: UTF8.self)
        // Zip64: sizes of 0xFFFFFFFF are in the extra field 0x0001, the uncompressed size first.
        var zip64 = false
        var at = start + nameLength
        let extraEnd = at + extraLength
        while at + 4 <= extraEnd {
            let id = Int(buffer[at]) | Int(buffer[at + 1]) << 8, size = Int(buffer[at + 2]) | Int(buffer[at + 3]) << 8
            guard at + 4 + size <= extraEnd else { break }
            if id == 0x0001 {
                zip64 = true
                var field = at + 4
                func next64() -> UInt64? {
                    guard field + 8 <= at + 4 + size else { return nil }
                    defer { field += 8 }
                    return (0..<8).reduce(UInt64(0)) { $0 | UInt64(buffer[field + $1]) << (8 * UInt64($1)) }
                }
                if inflated == 0xFFFF_FFFF { inflated = next64() ?? inflated }
                if compressed == 0xFFFF_FFFF { compressed = next64() ?? compressed }
            }
            at += 4 + size
        }
        consume(nameLength + extraLength)
        guard flags & 1 == 0 else { throw Failure.unsupported("\(name) is encrypted") }
        let sizesFollow = flags & 8 != 0
        let keep = wanted(name)
        var output: [UInt8] = []
        var produced = 0
        var sum: UInt = 0
        let consumedBefore = offset, memberBytes = limits.memberBytes
        func take(_ bytes: UnsafeRawBufferPointer) throws {
            produced += bytes.count
            guard produced <= memberBytes else { throw Failure.tooLarge("\(name) inflates past \(memberBytes >> 20) MiB") }
            sum = CZlibChecksum.crc32(sum, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt32(bytes.count))
            if keep { output.append(contentsOf: bytes) }
        }
        switch method {
        case 0:
            guard !sizesFollow else { throw Failure.unsupported("\(name) is stored with its size after its data, which cannot be read in order") }
            guard compressed == inflated else { throw Failure.damaged("\(name) is stored, but its two sizes differ") }
            var left = compressed
            while left > 0 {
                try fill(1)
                let available = min(UInt64(end - start), left)
                guard available > 0 else { throw Failure.damaged("the zip ends inside \(name)") }
                let from = start
                try buffer.withUnsafeBytes { try take(UnsafeRawBufferPointer(rebasing: $0[from..<(from + Int(available))])) }
                consume(Int(available))
                left -= available
            }
        case 8:
            try inflate(name: name, take: take)
        default:
            throw Failure.unsupported("\(name) is compressed by method \(method), which hreader does not read")
        }
        let used = UInt64(offset - consumedBefore)
        if sizesFollow {
            // The data descriptor: an optional signature, the CRC, then both sizes (8 bytes each for zip64).
            try fill(24)
            var at = 0
            if end - start >= 4, le32(0) == Self.descriptor { at = 4 }
            let width = zip64 ? 8 : 4
            guard end - start >= at + 4 + 2 * width else { throw Failure.damaged("the zip ends inside \(name)'s sizes") }
            crc = le32(at)
            compressed = zip64 ? le64(at + 4) : UInt64(le32(at + 4))
            inflated = zip64 ? le64(at + 4 + width) : UInt64(le32(at + 4 + width))
            consume(at + 4 + 2 * width)
        }
        guard compressed == used, inflated == UInt64(produced) else {
            throw Failure.damaged("\(name)'s sizes are not those of its data")
        }
        guard UInt32(truncatingIfNeeded: sum) == crc else { throw Failure.damaged("\(name)'s checksum does not match (damaged)") }
        return Member(name: name, bytes: keep ? output : nil)
    }

    /// Inflates one member's raw DEFLATE data from the stream, handing each piece to `take`; the bytes
    /// after its end stay unread.
    private mutating func inflate(name: String, take: (UnsafeRawBufferPointer) throws -> Void) throws {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Failure.damaged("zlib could not start inflating \(name)")
        }
        defer { inflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: 64 << 10)
        var compressedSoFar = 0, producedSoFar = 0
        while true {
            try fill(1)
            let available = end - start, from = start
            let (status, used, produced) = buffer.withUnsafeBufferPointer { input -> (Int32, Int, Int) in
                out.withUnsafeMutableBufferPointer { target in
                    stream.next_in = input.baseAddress.map { UnsafeMutablePointer(mutating: $0 + from) }
                    stream.avail_in = UInt32(available)
                    stream.next_out = target.baseAddress
                    stream.avail_out = UInt32(target.count)
                    let status = CZlibChecksum.inflate(&stream, Z_NO_FLUSH)
                    return (status, available - Int(stream.avail_in), target.count - Int(stream.avail_out))
                }
            }
            consume(used)
            compressedSoFar += used
            producedSoFar += produced
            if produced > 0 { try out.withUnsafeBytes { try take(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) } }
            guard producedSoFar / max(compressedSoFar, 1) <= limits.ratio || producedSoFar < 1 << 20 else {
                throw Failure.tooLarge("\(name) inflates more than \(limits.ratio) times its size (a zip bomb?)")
            }
            switch status {
            case Z_STREAM_END:
                return
            case Z_OK:
                continue
            case Z_BUF_ERROR where available == 0:
                throw Failure.damaged("the zip ends inside \(name)")
            case Z_BUF_ERROR:
                continue
            default:
                throw Failure.damaged("\(name) is not readable DEFLATE data")
            }
        }
    }
}
