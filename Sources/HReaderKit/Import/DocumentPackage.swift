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

    /// An opened XDM zip: the documents each `METADATA.XML` names (XML ones), else every `.xml` under
    /// `IHE_XDM/`, never the README, the stylesheet or the metadata itself. The documents are
    /// inflated one at a time, when the import comes to them (`read`), so that a package's memory is
    /// one document's, however many it holds; all the inflated bytes of one package (its metadata
    /// included) are bounded together by `maxBytes`. A member listed twice, or two names holding one
    /// member's data (two central-directory entries for one local file), refuse the package: the
    /// same bytes would be inflated and kept again for each.
    final class XDM {
        struct Member {
            /// `IHE_XDM/SUBSET01/DOC0001.XML`.
            let name: String
            fileprivate let entry: Entry
            /// What the metadata says of it (size in bytes, SHA-1), to check against what it holds.
            fileprivate let size: Int?
            fileprivate let sha1: String?
            fileprivate let metadata: String?
        }

        let name: String
        let members: [Member]
        /// Listed members that are no clinical document in XML (a PDF, an image).
        let passedOver: [String]
        private let archive: Archive
        private let maxBytes: Int64
        private let stall: TimeInterval
        private var inflated: Int64 = 0

        init(_ url: URL, maxBytes: Int64, inflateStall: TimeInterval = AppleHealthExportSource.defaultInflateStall) throws {
            name = url.lastPathComponent
            self.maxBytes = maxBytes
            stall = inflateStall
            do {
                archive = try Archive(url: url, accessMode: .read)
            } catch {
                throw HReaderError.badInput("\(url.lastPathComponent) is not a readable zip file (truncated or damaged)")
            }
            var files: [String: Entry] = [:]
            for (index, entry) in archive.enumerated() where entry.type == .file {
                guard index < maxMembers else { throw HReaderError.badInput("\(name) holds more than \(maxMembers) files; refusing it") }
                guard files.updateValue(entry, forKey: entry.path) == nil else {
                    throw HReaderError.badInput("\(name) holds \(entry.path) twice; refusing the package")
                }
            }
            let inPackage = files.keys.filter { $0.uppercased().hasPrefix("IHE_XDM/") && !$0.split(separator: "/").contains("..") }
            guard !inPackage.isEmpty else {
                throw HReaderError.badInput("\(name) is a zip without an IHE_XDM folder: not an XDM package of clinical documents")
            }
            let metadata = inPackage.filter { ($0 as NSString).lastPathComponent.uppercased() == "METADATA.XML" }.sorted()
            var members: [Member] = []
            var passedOver: [String] = []
            if metadata.isEmpty {
                members = inPackage.sorted().filter { $0.lowercased().hasSuffix(".xml") }
                    .map { Member(name: $0, entry: files[$0]!, size: nil, sha1: nil, metadata: nil) }
            }
            var budget: Int64 = 0
            let byFolded = Dictionary(files.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
            var listedPaths: Set<String> = []
            for path in metadata {
                let folder = (path as NSString).deletingLastPathComponent
                let listed: [XDMMetadata.Document]
                do {
                    listed = try XDMMetadata.documents(in: try Self.inflate(files[path]!, of: archive, in: name, stall: inflateStall,
                                                                             charging: &budget, maxBytes: maxBytes))
                } catch let error as RecordsError {
                    throw HReaderError.badInput("\(name): \(path): \(error.description)")
                }
                for item in listed {
                    let parts = item.uri.split(separator: "/")
                    guard !item.uri.hasPrefix("/"), !parts.contains(".."), !item.uri.contains("://") else {
                        throw HReaderError.badInput("\(name): \(path) names \(item.uri), outside its folder; refusing the package")
                    }
                    let member = folder + "/" + item.uri
                    guard let entry = files[member] ?? byFolded[member.lowercased()] else {
                        throw HReaderError.badInput("\(name): \(path) names \(item.uri), which the package does not hold")
                    }
                    guard listedPaths.insert(entry.path).inserted else {
                        throw HReaderError.badInput("\(name): \(path) lists \(item.uri) twice; refusing the package")
                    }
                    let isXML = item.mimeType.map { $0.contains("xml") } ?? member.lowercased().hasSuffix(".xml")
                    guard isXML else {
                        passedOver.append("\(member) (\(item.mimeType ?? "not XML")): not a clinical document in XML")
                        continue
                    }
                    members.append(Member(name: member, entry: entry, size: item.size, sha1: item.sha1, metadata: path))
                }
            }
            // One local file under two names has one checksum and size (a name whose central record
            // lies about them fails its checksum or its size limit when inflated).
            var seen: [String: String] = [:]
            for member in members where member.entry.uncompressedSize > 0 {
                let key = "\(member.entry.checksum)/\(member.entry.uncompressedSize)"
                if let first = seen.updateValue(member.name, forKey: key) {
                    throw HReaderError.badInput("\(name): \(first) and \(member.name) hold the same data (one file listed twice); refusing the package")
                }
            }
            self.members = members
            self.passedOver = passedOver
            inflated = budget
        }

        /// One member's bytes, inflated now, its size and hash checked against the metadata.
        func read(_ member: Member) throws -> Data {
            let data = try Self.inflate(member.entry, of: archive, in: name, stall: stall, charging: &inflated, maxBytes: maxBytes)
            if let size = member.size, size != data.count, let path = member.metadata {
                throw HReaderError.badInput("\(name): \(member.name) holds \(data.count) bytes where \(path) says \(size): the package was changed or damaged")
            }
            if let expected = member.sha1, let path = member.metadata {
                let actual = SHA1.hash([UInt8](data)).map { String(format: "%02x", $0) }.joined()
                guard actual == expected else {
                    throw HReaderError.badInput("\(name): \(member.name) does not match the hash \(path) gives: the package was changed or damaged")
                }
            }
            return data
        }

        /// A member inflated into memory (`ZipMemberStream`), bounded in size and ratio, its CRC
        /// checked, and charged (at the size it declares, which bounds what it may inflate to) to
        /// the package's total.
        private static func inflate(_ entry: Entry, of archive: Archive, in name: String, stall: TimeInterval,
                                    charging total: inout Int64, maxBytes: Int64) throws -> Data {
            guard entry.uncompressedSize <= UInt64(maxDocumentBytes) else {
                throw HReaderError.badInput("\(name): \(entry.path) is larger than \(maxDocumentBytes >> 20) MiB; refusing it")
            }
            guard total + Int64(entry.uncompressedSize) <= maxBytes else {
                throw HReaderError.badInput("\(name) inflates to more than \(DocumentLimits.describe(maxBytes)) in all; refusing it "
                                            + "(HREADER_PACKAGE_MAX_BYTES sets the limit)")
            }
            total += Int64(entry.uncompressedSize)
            let messages = ZipMemberStream.Messages(
                tooLarge: { HReaderError.badInput("\(name): \(entry.path) inflates beyond its limit; refusing it as a zip bomb") },
                checksum: { HReaderError.badInput("\(name): \(entry.path)'s checksum does not match (the zip is damaged)") },
                unreadable: { _ in HReaderError.badInput("\(name): \(entry.path) cannot be read (its data is damaged)") },
                stalled: { HReaderError.badInput("\(name): \(entry.path) stopped inflating (its compressed data is damaged or truncated)") })
            return try ZipMemberStream.read(entry, of: archive, limit: min(entry.uncompressedSize, UInt64(maxDocumentBytes)),
                                            ratio: UInt64(maxCompressionRatio), stall: stall, messages: messages)
        }
    }

    /// The document a Blue Button page carries, or nil when none of its scripts holds one.
    static func page(_ url: URL, data: Data) -> Document? {
        BlueButtonPage.embeddedDocument(in: data).map { Document(name: url.lastPathComponent, data: $0) }
    }
}
