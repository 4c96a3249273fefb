import CQREncode
import CZlibChecksum
import Foundation
import HReaderCrypto

/// A QR code of a SMART Health Link, its modules made by libqrencode (loaded the first time one is
/// drawn), and the three ways hreader draws it: a PNG, an SVG, and lines of a terminal.
///
/// Level M error correction (15% of the code may be unreadable: a screen's glare, a crease), the
/// smallest version that holds the text, byte mode, and the four-module light margin the QR
/// standard asks for on every side.
///
///     let code = try QRCode("shlink:/eyJ1cmwiOi…")
///     try Data(code.png()).write(to: file)
public struct QRCode: Sendable {
    /// Modules per side, the margin left out.
    public let size: Int
    private let dark: [Bool]
    /// The light margin, in modules, on every side (ISO/IEC 18004: at least four).
    public static let margin = 4

    public enum Failure: Error, Equatable {
        /// More than the largest QR code (version 40) holds.
        case tooLong(bytes: Int)
    }

    public init(_ text: String) throws {
        let encoded = text.withCString { QRcode_encodeString($0, 0, QR_ECLEVEL_M, QR_MODE_8, 1) }
        guard let encoded else { throw Failure.tooLong(bytes: text.utf8.count) }
        defer { QRcode_free(encoded) }
        let width = Int(encoded.pointee.width)
        // libqrencode's module byte: bit 0 is dark; the other bits say what the module is part of.
        let modules = UnsafeBufferPointer(start: encoded.pointee.data, count: width * width)
        self.init(size: width, dark: modules.map { $0 & 1 == 1 })
    }

    init(size: Int, dark: [Bool]) {
        precondition(dark.count == size * size)
        self.size = size
        self.dark = dark
    }

    /// Whether the module at column `x`, row `y` is dark; the margin (outside 0..<size) is light.
    public func isDark(_ x: Int, _ y: Int) -> Bool {
        x >= 0 && y >= 0 && x < size && y < size && dark[y * size + x]
    }

    /// Modules per side with the margin.
    public var sideWithMargin: Int { size + 2 * Self.margin }

    /// An 8-bit greyscale PNG, `scale` pixels per module, margin included.
    public func png(scale: Int = 8) -> [UInt8] {
        let side = sideWithMargin * scale
        // Each row: filter type 0 (none), then one byte per pixel.
        var raw = [UInt8]()
        raw.reserveCapacity((side + 1) * side)
        for row in 0..<sideWithMargin {
            var line: [UInt8] = [0]
            line.reserveCapacity(side + 1)
            for column in 0..<sideWithMargin {
                let value: UInt8 = isDark(column - Self.margin, row - Self.margin) ? 0 : 255
                line.append(contentsOf: repeatElement(value, count: scale))
            }
            for _ in 0..<scale { raw.append(contentsOf: line) }
        }
        var header = [UInt8]()
        header.appendBigEndian(UInt32(side))
        header.appendBigEndian(UInt32(side))
        header += [8, 0, 0, 0, 0]   // bit depth 8, greyscale, deflate, adaptive filtering, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + Self.chunk("IHDR", header) + Self.chunk("IDAT", Self.zlibStream(raw)) + Self.chunk("IEND", [])
    }

    /// An SVG of one path, a module one user unit, margin included: it scales to any size sharply.
    public func svg() -> String {
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x, y) else { x += 1; continue }
                var run = 1
                while isDark(x + run, y) { run += 1 }
                path += "M\(x + Self.margin) \(y + Self.margin)h\(run)v1h-\(run)z"
                x += run
            }
        }
        let side = sideWithMargin
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" width="\(side * 8)" height="\(side * 8)" \
            shape-rendering="crispEdges"><rect width="\(side)" height="\(side)" fill="#fff"/><path fill="#000" d="\(path)"/></svg>

            """
    }

    /// The code as lines of text, two rows of modules per line in half blocks, for a terminal that
    /// writes light text on a dark background (most do): light modules are drawn, dark ones left blank,
    /// as `qrencode -t UTF8` draws them. Phones read the margin as light.
    public func terminalLines() -> [String] {
        var lines: [String] = []
        let first = -Self.margin, end = size + Self.margin
        for top in stride(from: first, to: end, by: 2) {
            var line = ""
            for x in first..<end {
                let upper = !isDark(x, top), lower = top + 1 < end && !isDark(x, top + 1)
                line.append(upper ? (lower ? "█" : "▀") : (lower ? "▄" : " "))
            }
            lines.append(line)
        }
        return lines
    }

    /// The file formats `write(to:)` knows, by the file name's extension.
    public enum FileFormat: Sendable {
        case png, svg

        public init?(path: String) {
            switch URL(fileURLWithPath: path).pathExtension.lowercased() {
            case "png": self = .png
            case "svg": self = .svg
            default: return nil
            }
        }
    }

    /// The code as a PNG or an SVG (by `url`'s extension; PNG otherwise), written as the vault's other
    /// outputs are, owner-only and whole or not at all: a link's code opens the record.
    public func write(to url: URL) throws {
        let bytes = FileFormat(path: url.path) == .svg ? Array(svg().utf8) : png()
        do { try AtomicFile.write(bytes, to: url, mode: 0o600) } catch { throw HReaderError.from(error) }
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        out.appendBigEndian(UInt32(data.count))
        let typed = Array(type.utf8) + data
        out += typed
        let crc = typed.withUnsafeBufferPointer { crc32(0, $0.baseAddress, UInt32($0.count)) }
        out.appendBigEndian(UInt32(crc))
        return out
    }

    /// `bytes` as a zlib stream (RFC 1950), as PNG's IDAT holds it.
    private static func zlibStream(_ bytes: [UInt8]) -> [UInt8] {
        var length = compressBound(UInt(bytes.count))
        var out = [UInt8](repeating: 0, count: Int(length))
        let status = out.withUnsafeMutableBufferPointer { o in
            bytes.withUnsafeBufferPointer { i in compress2(o.baseAddress, &length, i.baseAddress, UInt(i.count), 9) }
        }
        // compressBound is enough for any input: anything else is a zlib bug.
        precondition(status == Z_OK, "zlib's compress2 failed (\(status))")
        return Array(out.prefix(Int(length)))
    }
}

private extension Array where Element == UInt8 {
    mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }
}
