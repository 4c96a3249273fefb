import Foundation

/// How much document data hreader keeps: per document and per import (the bytes fetched or decoded
/// by one `import` or `sync`), and how much one package of documents (an XDM zip) may inflate to in
/// all. Set by the environment, for a person or a test: `HREADER_DOCUMENT_MAX_BYTES`,
/// `HREADER_DOCUMENTS_MAX_IMPORT_BYTES` and `HREADER_PACKAGE_MAX_BYTES`, sizes such as `64M`,
/// `512K` or `1G` (or plain bytes). A document over the first, or beyond the second, is kept as a
/// reference with the reason, never cut short; a package beyond the third is refused.
public struct DocumentLimits: Sendable, Equatable {
    public var perDocument: Int64 = 64 << 20
    public var perImport: Int64 = 512 << 20
    public var perPackage: Int64 = 256 << 20
    /// PDFs and images one `import` or `sync` reads by the helpers before it returns
    /// (`HREADER_DOCUMENTS_EXTRACT_PER_IMPORT`); the rest wait for the next one or `documents reindex`.
    public var extractPerImport = 20

    public init() {}

    public init(perDocument: Int64, perImport: Int64) {
        self.perDocument = perDocument; self.perImport = perImport
    }

    /// The defaults, overridden by the environment; a malformed value is an error.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> DocumentLimits {
        var limits = DocumentLimits()
        if let text = environment["HREADER_DOCUMENT_MAX_BYTES"] {
            guard let bytes = size(text) else { throw HReaderError.usage("HREADER_DOCUMENT_MAX_BYTES takes a size such as 64M, 512K or 1G") }
            limits.perDocument = bytes
        }
        if let text = environment["HREADER_DOCUMENTS_MAX_IMPORT_BYTES"] {
            guard let bytes = size(text) else { throw HReaderError.usage("HREADER_DOCUMENTS_MAX_IMPORT_BYTES takes a size such as 512M or 2G") }
            limits.perImport = bytes
        }
        if let text = environment["HREADER_PACKAGE_MAX_BYTES"] {
            guard let bytes = size(text) else { throw HReaderError.usage("HREADER_PACKAGE_MAX_BYTES takes a size such as 256M or 1G") }
            limits.perPackage = bytes
        }
        if let text = environment["HREADER_DOCUMENTS_EXTRACT_PER_IMPORT"] {
            guard let count = Int(text), count >= 0 else { throw HReaderError.usage("HREADER_DOCUMENTS_EXTRACT_PER_IMPORT takes a count such as 20 (0: none)") }
            limits.extractPerImport = count
        }
        return limits
    }

    /// A limit as people write it: `256 MiB`, `512 KiB`, `1000 bytes`.
    static func describe(_ bytes: Int64) -> String {
        for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] where bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return "\(bytes >> shift) \(unit)"
        }
        return "\(bytes) bytes"
    }

    /// `64M`, `512K`, `1G`, or bytes.
    static func size(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).uppercased()
        guard let last = trimmed.last else { return nil }
        let multipliers: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        let (digits, multiplier) = multipliers[last].map { (String(trimmed.dropLast()), $0) } ?? (trimmed, 1)
        guard let value = Int64(digits), value > 0, value <= (1 << 40) / multiplier else { return nil }
        return value * multiplier
    }
}
