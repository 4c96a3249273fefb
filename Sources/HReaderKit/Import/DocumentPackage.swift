import Foundation
import HReaderCrypto
import HReaderRecords
import ZIPFoundation

/// Clinical documents as portals hand them out packed: an IHE XDM zip ("download my record":
/// `IHE_XDM/SUBSET01/DOC0001.XML` beside `METADATA.XML`, a stylesheet and a README) or a "Blue
/// Button" HTML page that carries the document in a `<script>` element. Nothing is written to disk:
/// members are inflated into memory under the same limits as an Apple Health export's.
enum DocumentPackage {
    struct Document {
        /// For messages: `IHE_XDM/SUBSET01/DOC0001.XML`, or the page's file name.
        let name: String
        let data: Data
    }

    /// A member larger than this is refused (a C-CDA of years of results is a few MB).
    static let maxDocumentBytes = 64 << 20
    /// Refuse members that inflate more than this many times their compressed size (a zip bomb).
    static let maxCompressionRatio = 250
    static let maxMembers = 10_000

    static func isZip(_ data: Data) -> Bool {
        data.starts(with: [0x50, 0x4B, 0x03, 0x04]) || data.starts(with: [0x50, 0x4B, 0x05, 0x06])
    }

    /// The documents of an XDM zip, with what was passed over: those each `METADATA.XML` names
    /// (XML ones; their size and SHA-1 checked against it), else every `.xml` under `IHE_XDM/`.
    /// Never the README, the stylesheet or the metadata itself.
    static func xdm(_ url: URL, inflateStall: TimeInterval = AppleHealthExportSource.defaultInflateStall) throws
        -> (documents: [Document], passedOver: [String]) {
        let name = url.lastPathComponent
        let archive: Archive
        do {
            archive = try Archive(url: url, accessMode: .read)
        } catch {
            throw HReaderError.badInput("\(name) is not a readable zip file (truncated or damaged)")
        }
        var files: [String: Entry] = [:]
        for (index, entry) in archive.enumerated() where entry.type == .file {
            guard index < maxMembers else { throw HReaderError.badInput("\(name) holds more than \(maxMembers) files; refusing it") }
            files[entry.path] = entry
        }
        let inPackage = files.keys.filter { $0.uppercased().hasPrefix("IHE_XDM/") && !$0.split(separator: "/").contains("..") }
        guard !inPackage.isEmpty else {
            throw HReaderError.badInput("\(name) is a zip without an IHE_XDM folder: not an XDM package of clinical documents")
        }
        let metadata = inPackage.filter { ($0 as NSString).lastPathComponent.uppercased() == "METADATA.XML" }.sorted()
        var documents: [Document] = []
        var passedOver: [String] = []
        if metadata.isEmpty {
            for path in inPackage.sorted() where path.lowercased().hasSuffix(".xml") {
                documents.append(Document(name: path, data: try read(files[path]!, of: archive, in: name, stall: inflateStall)))
            }
            return (documents, passedOver)
        }
        for path in metadata {
            let folder = (path as NSString).deletingLastPathComponent
            let listed: [XDMMetadata.Document]
            do {
                listed = try XDMMetadata.documents(in: try read(files[path]!, of: archive, in: name, stall: inflateStall))
            } catch let error as RecordsError {
                throw HReaderError.badInput("\(name): \(path): \(error.description)")
            }
            for item in listed {
                let parts = item.uri.split(separator: "/")
                guard !item.uri.hasPrefix("/"), !parts.contains(".."), !item.uri.contains("://") else {
                    throw HReaderError.badInput("\(name): \(path) names \(item.uri), outside its folder; refusing the package")
                }
                let member = folder + "/" + item.uri
                guard let entry = files[member] ?? files.first(where: { $0.key.caseInsensitiveCompare(member) == .orderedSame })?.value else {
                    throw HReaderError.badInput("\(name): \(path) names \(item.uri), which the package does not hold")
                }
                let isXML = item.mimeType.map { $0.contains("xml") } ?? member.lowercased().hasSuffix(".xml")
                guard isXML else {
                    passedOver.append("\(member) (\(item.mimeType ?? "not XML")): not a clinical document in XML")
                    continue
                }
                let data = try read(entry, of: archive, in: name, stall: inflateStall)
                if let size = item.size, size != data.count {
                    throw HReaderError.badInput("\(name): \(member) holds \(data.count) bytes where \(path) says \(size): the package was changed or damaged")
                }
                if let expected = item.sha1 {
                    let actual = SHA1.hash([UInt8](data)).map { String(format: "%02x", $0) }.joined()
                    guard actual == expected else {
                        throw HReaderError.badInput("\(name): \(member) does not match the hash \(path) gives: the package was changed or damaged")
                    }
                }
                documents.append(Document(name: member, data: data))
            }
        }
        return (documents, passedOver)
    }

    /// The document a Blue Button page carries, or nil when none of its scripts holds one.
    static func page(_ url: URL, data: Data) -> Document? {
        BlueButtonPage.embeddedDocument(in: data).map { Document(name: url.lastPathComponent, data: $0) }
    }

    /// A member inflated into memory (`ZipMemberStream`), bounded in size and ratio, its CRC checked.
    private static func read(_ entry: Entry, of archive: Archive, in name: String, stall: TimeInterval) throws -> Data {
        guard entry.uncompressedSize <= UInt64(maxDocumentBytes) else {
            throw HReaderError.badInput("\(name): \(entry.path) is larger than \(maxDocumentBytes >> 20) MiB; refusing it")
        }
        let messages = ZipMemberStream.Messages(
            tooLarge: { HReaderError.badInput("\(name): \(entry.path) inflates beyond its limit; refusing it as a zip bomb") },
            checksum: { HReaderError.badInput("\(name): \(entry.path)'s checksum does not match (the zip is damaged)") },
            unreadable: { _ in HReaderError.badInput("\(name): \(entry.path) cannot be read (its data is damaged)") },
            stalled: { HReaderError.badInput("\(name): \(entry.path) stopped inflating (its compressed data is damaged or truncated)") })
        return try ZipMemberStream.read(entry, of: archive, limit: min(entry.uncompressedSize, UInt64(maxDocumentBytes)),
                                        ratio: UInt64(maxCompressionRatio), stall: stall, messages: messages)
    }
}
