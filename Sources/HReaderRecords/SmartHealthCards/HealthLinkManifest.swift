import HReaderJSON

/// The manifest protocol of a SMART Health Link without flag `U`: the receiver POSTs a request
/// `{"recipient", "passcode"?, "embeddedLengthMax"?}` to the link's url and gets
/// `{"files": [{"contentType", "embedded" | "location"}]}`; a wrong passcode is answered 401 with
/// `{"remainingAttempts": n}`.
///
///     let body = HealthLinkManifest.Request(recipient: "hreader", passcode: nil, embeddedLengthMax: 1 << 20).json
///     let manifest = try HealthLinkManifest(bytes)
public struct HealthLinkManifest: Sendable, Equatable {
    /// More files than this in one manifest are refused.
    public static let maxFiles = 100

    public struct File: Sendable, Equatable {
        public let contentType: String
        /// The compact JWE itself, or where to GET it.
        public let embedded: String?
        public let location: String?

        public init(contentType: String, embedded: String?, location: String?) {
            self.contentType = contentType
            self.embedded = embedded
            self.location = location
        }
    }

    public let files: [File]

    public init(files: [File]) { self.files = files }

    public init<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(HealthLinkError) {
        guard let object = try? JSONParser.parse(bytes, duplicateNames: .refused).object else {
            throw .malformed("the manifest is not a JSON object")
        }
        guard let list = object["files"]?.array else { throw .malformed("the manifest has no files array") }
        guard list.count <= Self.maxFiles else { throw .malformed("the manifest lists \(list.count) files, more than \(Self.maxFiles)") }
        var files: [File] = []
        for (i, item) in list.enumerated() {
            guard let file = item.object, let type = file["contentType"]?.string, !type.isEmpty else {
                throw .malformed("the manifest's files[\(i)] has no contentType")
            }
            let embedded = file["embedded"]?.string, location = file["location"]?.string
            guard (embedded == nil) != (location == nil) else {
                throw .malformed("the manifest's files[\(i)] gives \(embedded == nil ? "neither" : "both") embedded and location")
            }
            files.append(File(contentType: type, embedded: embedded, location: location))
        }
        self.files = files
    }

    public var json: JSONValue {
        .object([("files", .array(files.map { file in
            var object: JSONObject = [("contentType", .string(file.contentType))]
            if let embedded = file.embedded { object.members.append(("embedded", .string(embedded))) }
            if let location = file.location { object.members.append(("location", .string(location))) }
            return .object(object)
        }))])
    }

    /// The manifest request the receiver sends.
    public struct Request: Sendable, Equatable {
        public let recipient: String
        public let passcode: String?
        public let embeddedLengthMax: Int?

        public init(recipient: String, passcode: String?, embeddedLengthMax: Int?) {
            self.recipient = recipient
            self.passcode = passcode
            self.embeddedLengthMax = embeddedLengthMax
        }

        public init<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(HealthLinkError) {
            guard let object = try? JSONParser.parse(bytes, duplicateNames: .refused).object else {
                throw .malformed("the manifest request is not a JSON object")
            }
            guard let recipient = object["recipient"]?.string, !recipient.isEmpty else {
                throw .malformed("the manifest request names no recipient")
            }
            if let passcode = object.present("passcode"), passcode.string == nil { throw .malformed("the passcode is not a string") }
            if let limit = object.present("embeddedLengthMax"), (limit.int ?? -1) < 0 {
                throw .malformed("embeddedLengthMax is not a non-negative integer")
            }
            self.recipient = String(recipient.prefix(200))
            passcode = object["passcode"]?.string
            embeddedLengthMax = object["embeddedLengthMax"]?.int
        }

        public var json: JSONValue {
            var object: JSONObject = [("recipient", .string(recipient))]
            if let passcode { object.members.append(("passcode", .string(passcode))) }
            if let embeddedLengthMax { object.members.append(("embeddedLengthMax", .int(embeddedLengthMax))) }
            return .object(object)
        }
    }

    /// The body of a 401 answer: how many tries remain (`{"remainingAttempts": n}`), nil when it says none.
    public static func remainingAttempts<Bytes: Collection<UInt8>>(in body: Bytes) -> Int? {
        (try? JSONParser.parse(body))?.object?["remainingAttempts"]?.int
    }
}
