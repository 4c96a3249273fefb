import Foundation
import HReaderJSON

/// The ways SMART Health Cards arrive as files, told apart by content (docs/sharing.md):
///
/// - a `.smart-health-card` file: `{"verifiableCredential": ["<JWS>", …]}`;
/// - a `$health-cards-issue` answer: a FHIR `Parameters` with `verifiableCredential` strings;
/// - text holding QR contents, one or more `shc:/<digits>` (each pair of digits + 45 is one
///   character of the JWS), chunked ones `shc:/<i>/<n>/<digits>` reassembled in any order.
///
///     if HealthCardFile.recognizes(data) { let jwss = try HealthCardFile.credentials(in: data) }
public enum HealthCardFile {
    /// At most this many cards are read from one file.
    public static let maxCards = 1000

    /// Whether `data` is one of the forms above (a quick look; `credentials` says what is wrong).
    public static func recognizes(_ data: Data) -> Bool {
        guard let first = data.firstIndex(where: { ![0x20, 0x09, 0x0a, 0x0d, 0xef, 0xbb, 0xbf].contains($0) }) else { return false }
        if data[first...].prefix(5).map({ $0 | 0x20 }) == Array("shc:/".utf8) { return true }
        // The member's name first (a byte search): a large FHIR Bundle is not parsed twice to learn it is no card.
        guard data[first] == UInt8(ascii: "{"),
              data.withUnsafeBytes({ ByteSearch.find("\"verifiableCredential\"", in: $0.bindMemory(to: UInt8.self)) }) != nil,
              let object = (try? JSONParser.parse(data))?.object else { return false }
        if object["verifiableCredential"] != nil { return true }
        return object["resourceType"]?.string == "Parameters"
            && (object["parameter"]?.array ?? []).contains { $0.object?["name"]?.string == "verifiableCredential" }
    }

    /// The compact JWS of every card in `data`, in the order they appear (a chunked card where its
    /// first chunk appears).
    public static func credentials(in data: Data) throws(HealthCardError) -> [String] {
        let text = String(decoding: data, as: UTF8.self)
        let trimmed = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        let cards: [String]
        if trimmed.prefix(5).lowercased() == "shc:/" {
            cards = try fromQRText(String(trimmed))
        } else {
            cards = try fromJSON(data)
        }
        guard !cards.isEmpty else { throw .malformed("the file holds no SMART Health Card") }
        guard cards.count <= maxCards else { throw .malformed("the file holds \(cards.count) cards, more than the \(maxCards) read at once") }
        return cards
    }

    private static func fromJSON(_ data: Data) throws(HealthCardError) -> [String] {
        let value: JSONValue
        do { value = try JSONParser.parse(data, duplicateNames: .refused) } catch {
            throw .malformed("not a SMART Health Card file: \(error)")
        }
        guard let object = value.object else { throw .malformed("not a SMART Health Card file (not a JSON object)") }
        if object["resourceType"]?.string == "Parameters" {
            return (object["parameter"]?.array ?? []).compactMap(\.object).filter { $0["name"]?.string == "verifiableCredential" }
                .compactMap { $0["valueString"]?.string }
        }
        guard let list = object["verifiableCredential"]?.array else {
            throw .malformed("verifiableCredential is not an array of cards")
        }
        var cards: [String] = []
        for (i, item) in list.enumerated() {
            guard let jws = item.string else { throw .malformed("verifiableCredential[\(i)] is \(item.kindDescription), expected a card (a JWS string)") }
            cards.append(jws)
        }
        return cards
    }

    /// One QR code's content: which chunk of how many, and the JWS text it carries.
    struct QRChunk: Equatable {
        let index: Int
        let count: Int
        let text: String
    }

    /// The cards of a text of QR contents, separated by any whitespace.
    static func fromQRText(_ text: String) throws(HealthCardError) -> [String] {
        var cards: [(position: Int, parts: [Int: String], count: Int)] = []
        for (position, token) in text.split(whereSeparator: \.isWhitespace).enumerated() {
            let chunk = try qrContent(String(token))
            if chunk.count == 1 {
                cards.append((position, [1: chunk.text], 1))
                continue
            }
            // A chunk joins the first card of as many chunks that still lacks its number.
            if let open = cards.firstIndex(where: { $0.count == chunk.count && $0.parts[chunk.index] == nil }) {
                cards[open].parts[chunk.index] = chunk.text
            } else {
                cards.append((position, [chunk.index: chunk.text], chunk.count))
            }
            guard cards.count <= maxCards else { throw .malformed("the text holds more than \(maxCards) cards") }
        }
        return try cards.map { card throws(HealthCardError) -> String in
            let missing = (1...card.count).filter { card.parts[$0] == nil }
            guard missing.isEmpty else {
                let which = missing.map(String.init).joined(separator: ", ")
                throw .malformed("a card in \(card.count) QR chunks lacks chunk\(missing.count > 1 ? "s" : "") \(which) of \(card.count); "
                                 + "scan every QR code of the card")
            }
            return (1...card.count).map { card.parts[$0]! }.joined()
        }
    }

    /// `shc:/<digits>` or `shc:/<i>/<n>/<digits>`, decoded.
    static func qrContent(_ token: String) throws(HealthCardError) -> QRChunk {
        guard token.prefix(5).lowercased() == "shc:/" else {
            throw .malformed("\"\(token.prefix(20))…\" is not a SMART Health Card QR content (shc:/…)")
        }
        let fields = token.dropFirst(5).split(separator: "/", omittingEmptySubsequences: false)
        let index: Int, count: Int, digits: Substring
        switch fields.count {
        case 1:
            (index, count, digits) = (1, 1, fields[0])
        case 3:
            guard let i = Int(fields[0]), let n = Int(fields[1]), n >= 1, n <= 99, i >= 1, i <= n else {
                throw .malformed("shc:/\(fields[0])/\(fields[1])/…: a chunk's number and count must be 1 ≤ i ≤ n ≤ 99")
            }
            (index, count, digits) = (i, n, fields[2])
        default:
            throw .malformed("shc:/…: expected shc:/DIGITS or shc:/I/N/DIGITS")
        }
        let bytes = Array(digits.utf8)
        guard !bytes.isEmpty, bytes.count % 2 == 0, bytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw .malformed("shc:/…: the numeric part must be an even number of digits")
        }
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count / 2)
        var i = 0
        while i < bytes.count {
            let value = Int(bytes[i] - UInt8(ascii: "0")) * 10 + Int(bytes[i + 1] - UInt8(ascii: "0"))
            // 45 ('-') to 122 ('z'): the characters of base64url and the dots between its parts.
            guard value <= 77 else { throw .malformed("shc:/…: the digits \(value) encode no character (at most 77)") }
            text.append(UInt8(value + 45))
            i += 2
        }
        return QRChunk(index: index, count: count, text: String(decoding: text, as: UTF8.self))
    }
}
