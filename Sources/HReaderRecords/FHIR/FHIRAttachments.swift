import HReaderJSON

/// The attachments a FHIR resource carries, as documents to keep: DocumentReference
/// `content[].attachment`, DiagnosticReport `presentedForm[]` and Media `content`. Pure reading of
/// the resource; what is fetched, decoded and stored is HReaderKit's.
///
///     for attachment in FHIRAttachments.attachments(raw: entry.content.raw!, remoteID: entry.remoteID) {
///         print(attachment.origin, attachment.contentType ?? "?", attachment.url ?? "inline")
///     }
public enum FHIRAttachments {
    public struct Attachment: Sendable, Equatable {
        /// The resource and the attachment's place in it: `DocumentReference/abc#content[0]`.
        public var origin: String
        public var resourceType: String
        public var title: String
        public var contentType: String?
        /// Inline base64 `data`, as given.
        public var data: String?
        public var url: String?
        public var size: Int64?
        /// `attachment.hash`: base64 SHA-1 of the bytes.
        public var hash: String?
        /// When the document was written (attachment.creation, else the resource's date).
        public var date: String?
        /// The resource's `meta.versionId`.
        public var version: String?
    }

    public static let resourceTypes: Set<String> = ["DocumentReference", "DiagnosticReport", "Media"]

    /// The attachments of `raw` (a resource's JSON); none for other resources or unreadable JSON.
    public static func attachments(raw: String, remoteID: String) -> [Attachment] {
        // A byte search first lets every other resource skip the parse (Foundation's `contains` compared
        // UTF-16 and took a quarter of a 12,000-entry C-CDA import).
        guard ByteSearch.contains(any: ["\"attachment\"", "\"presentedForm\"", "\"Media\""], in: raw),
              let value = try? JSONParser.parse(raw, limits: .init(maxDepth: 64, maxBytes: 256 << 20)),
              let resource = value.object, let type = resource["resourceType"]?.string, resourceTypes.contains(type) else { return [] }
        let version = resource["meta"]?["versionId"]?.string
        var found: [(JSONObject, String)] = []
        switch type {
        case "DocumentReference":
            for (i, content) in (resource["content"]?.array ?? []).enumerated() {
                if let attachment = content["attachment"]?.object { found.append((attachment, "content[\(i)]")) }
            }
        case "DiagnosticReport":
            for (i, form) in (resource["presentedForm"]?.array ?? []).enumerated() {
                if let attachment = form.object { found.append((attachment, "presentedForm[\(i)]")) }
            }
        default:
            if let attachment = resource["content"]?.object { found.append((attachment, "content")) }
        }
        let base = remoteID.contains("/") ? remoteID : "\(type)/\(remoteID)"
        let fallbackTitle = title(of: resource, type: type)
        let resourceDate = date(of: resource, type: type)
        return found.compactMap { attachment, place in
            let data = attachment["data"]?.string
            let url = Lenient.text(attachment["url"])
            guard data != nil || url != nil else { return nil }
            return Attachment(origin: "\(base)#\(place)", resourceType: type,
                              title: Lenient.text(attachment["title"]) ?? fallbackTitle,
                              contentType: Lenient.text(attachment["contentType"]), data: data, url: url,
                              size: attachment["size"]?.int.map(Int64.init), hash: Lenient.text(attachment["hash"]),
                              date: Lenient.text(attachment["creation"]) ?? resourceDate, version: version)
        }
    }

    static func title(of resource: JSONObject, type: String) -> String {
        func concept(_ value: JSONValue?) -> String? {
            Lenient.text(value?["text"]) ?? (value?["coding"]?.array ?? []).lazy.compactMap { Lenient.text($0["display"]) }.first
        }
        switch type {
        case "DocumentReference":
            return Lenient.text(resource["description"]) ?? concept(resource["type"])
                ?? (resource["category"]?.array ?? []).lazy.compactMap(concept).first ?? "Clinical document"
        case "DiagnosticReport":
            return concept(resource["code"]) ?? "Report"
        default:
            return concept(resource["type"]) ?? concept(resource["modality"]) ?? "Media"
        }
    }

    static func date(of resource: JSONObject, type: String) -> String? {
        switch type {
        case "DocumentReference":
            return Lenient.text(resource["date"]) ?? Lenient.text(resource["context"]?["period"]?["start"])
        case "DiagnosticReport":
            return Lenient.text(resource["effectiveDateTime"]) ?? Lenient.text(resource["effectivePeriod"]?["start"])
                ?? Lenient.text(resource["issued"])
        default:
            return Lenient.text(resource["createdDateTime"]) ?? Lenient.text(resource["createdPeriod"]?["start"]) ?? Lenient.text(resource["issued"])
        }
    }

    /// A FHIR `Binary` resource's `contentType` and base64 `data`, when `json` is one.
    public static func binary(_ json: [UInt8]) -> (contentType: String?, data: String)? {
        guard let value = try? JSONParser.parse(json, limits: .init(maxDepth: 16, maxBytes: 512 << 20)),
              value["resourceType"]?.string == "Binary", let data = value["data"]?.string else { return nil }
        return (Lenient.text(value["contentType"]), data)
    }
}
