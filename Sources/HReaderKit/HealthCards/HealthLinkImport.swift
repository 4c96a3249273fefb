import Foundation
import HReaderModel
import HReaderNet
import HReaderRecords

extension OpenVault {
    /// How this receiver names itself in a link's manifest request (`recipient`), which the sharer's server logs.
    public static let linkRecipient = "hreader (a personal health record)"
    /// Files at most this long are asked to come embedded in the manifest; larger ones come by `location`.
    public static let linkEmbeddedLengthMax = 256 << 10

    /// `hreader import --link LINK` (docs/sharing.md, "Receiving links"): reads the `shlink:/`
    /// payload, refuses it once `exp` has passed, fetches its files (flag `U`: the one file by GET;
    /// else the manifest by POST with the passcode, then each file embedded or by GET from its
    /// `location`), decrypts every file with the link's key and only then imports them, as
    /// `import --file` would: SMART Health Cards verified, FHIR Bundles (an IPS among them) filed by
    /// the identity rules. Any file that does not decrypt or is not what its type says refuses the
    /// whole link, nothing stored (exit 7); a wrong passcode is exit 3 with the tries left.
    public func importLink(_ text: String, passcode: String?, into patient: Patient? = nil, relationship: Relationship? = nil,
                           unverifiedCards: Bool = false, now: Date = Date(), clients: APIClients = .shared,
                           progress: (String) -> Void = { _ in }) throws -> (format: String, summary: ImportSummary) {
        let link: HealthLink
        do { link = try HealthLink(text: text) } catch { throw HReaderError.badInput("\(error); nothing was imported") }
        let name = link.label.map { "the link \"\($0)\"" } ?? "the link"
        if link.hasExpired(at: Int64(now.timeIntervalSince1970)) {
            throw HReaderError.badInput("\(name) expired at \(RFC3339.utc(link.expires!)); ask its sender for a new one; nothing was imported")
        }
        if link.needsPasscode, passcode == nil {
            throw HReaderError(.authentication, "\(name) needs a passcode: give it with --passcode-file FILE; nothing was imported")
        }
        let client = HealthLinkClient(clients: clients)
        var encrypted: [(type: String?, jwe: String)] = []
        do {
            if link.isDirectFile {
                progress("fetching the link's file")
                encrypted = [(nil, try client.directFile(link.url, recipient: Self.linkRecipient))]
            } else {
                progress("fetching the link's manifest")
                let request = HealthLinkManifest.Request(recipient: Self.linkRecipient, passcode: link.needsPasscode ? passcode : nil,
                                                         embeddedLengthMax: Self.linkEmbeddedLengthMax)
                let manifest = try HealthLinkManifest(try client.manifest(link.url, request: request))
                for (i, file) in manifest.files.enumerated() {
                    if let embedded = file.embedded {
                        encrypted.append((file.contentType, embedded))
                    } else if let location = file.location {
                        progress("fetching file \(i + 1) of \(manifest.files.count)")
                        encrypted.append((file.contentType, try client.file(at: location)))
                    }
                }
            }
        } catch let refusal as HealthLinkClient.Refusal {
            switch refusal {
            case let .passcode(remaining?) where remaining <= 0:
                throw HReaderError(.authentication, "the passcode was refused and no attempts remain: \(name) is locked; nothing was imported")
            case let .passcode(remaining?):
                throw HReaderError(.authentication, "the passcode was refused; \(remaining) attempt\(remaining == 1 ? "" : "s") remain\(remaining == 1 ? "s" : ""); nothing was imported")
            case .passcode(nil):
                throw HReaderError(.authentication, "the passcode was refused; nothing was imported")
            case .gone:
                throw HReaderError(.network, "\(name) is no longer served (revoked, expired, or unknown to its server); nothing was imported")
            }
        } catch let error as NetError {
            // Its server cannot be reached (or answers with a failure): exit 6, as every network failure.
            throw HReaderError.from(network: error)
        } catch let error as HealthLinkError {
            throw HReaderError.badInput("\(name): \(error); nothing was imported")
        }
        guard !encrypted.isEmpty else { throw HReaderError.badInput("\(name) carries no file; nothing was imported") }

        // Every file decrypted and told apart before anything is imported.
        var files: [RecordFile] = []
        var passedOver: [String] = []
        for (i, item) in encrypted.enumerated() {
            let which = encrypted.count == 1 ? "its file" : "file \(i + 1) of \(encrypted.count)"
            let opened: (contentType: String?, content: [UInt8])
            do { opened = try HealthLinkFile.open(item.jwe, key: link.keyBytes) } catch {
                throw HReaderError(.integrity, "\(name): \(which) is refused: \(error); nothing was imported")
            }
            let data = Data(opened.content)
            let fileName = "\(link.label ?? "SMART Health Link") (\(which))"
            let type = (item.type ?? opened.contentType)?.lowercased()
            switch type {
            case HealthLinkFile.healthCard?:
                guard HealthCardFile.recognizes(data) else {
                    throw HReaderError.badInput("\(name): \(which) says it holds SMART Health Cards but does not; nothing was imported")
                }
                files.append(RecordFile(name: fileName, data: data, format: .healthCards))
            case HealthLinkFile.fhirJSON?, "application/json"?, nil:
                if type == nil, HealthCardFile.recognizes(data) {
                    files.append(RecordFile(name: fileName, data: data, format: .healthCards))
                    continue
                }
                guard RecordFileFormat.detect(data) == .fhirJSON else {
                    throw HReaderError.badInput("\(name): \(which) is not a FHIR resource or Bundle; nothing was imported")
                }
                files.append(RecordFile(name: fileName, data: data, format: .fhirJSON))
            case let other?:
                passedOver.append("\(which): content type \(other.prefix(60)), which hreader does not import")
            }
        }
        guard !files.isEmpty else {
            throw HReaderError.badInput("\(name) carries nothing hreader imports (" + passedOver.joined(separator: "; ") + "); nothing was imported")
        }
        var notes = ["a SMART Health Link from \(URL(string: link.url)?.host ?? "?")" + (link.label.map { ": \($0)" } ?? "")
                     + ", \(files.count) file\(files.count == 1 ? "" : "s") decrypted"]
        if let expires = link.expires { notes.append("the link expires at \(RFC3339.utc(expires))") }
        let result = try importRecordFiles(files, name: link.label ?? "SMART Health Link", into: patient, relationship: relationship,
                                           unverifiedCards: unverifiedCards, limits: try DocumentLimits.fromEnvironment(),
                                           passedOver: passedOver, notes: notes, progress: progress)
        try write { try audit.record("import.link", subject: URL(string: link.url)?.host, detail: "\(files.count) file(s)") }
        return (link.isDirectFile ? "SMART Health Link (U)" : "SMART Health Link", result.summary)
    }
}
