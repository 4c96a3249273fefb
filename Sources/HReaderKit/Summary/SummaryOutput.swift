import Foundation
import HReaderCrypto
import HReaderModel
import HReaderRecords

/// `hreader summary --format`: the applet-tile summary on a terminal (`text`), or a summary for a
/// clinician as an IPS document Bundle (`ips`) or a printable page (`html`).
public enum SummaryFormat: String, CaseIterable, Sendable {
    case text, ips, html
}

extension ClinicalSummary {
    /// The International Patient Summary document Bundle, as pretty JSON text ending in a newline.
    public func ipsJSON() throws -> String {
        try IPSDocument(summary: self).bundle().serialized(pretty: true) + "\n"
    }

    public var html: String { SummaryPage.html(self) }
}

extension OpenVault {
    /// Records that a summary of the patient was handed out (to `file`, or to stdout), and writes it
    /// to `file` when there is one: mode 0600, replacing it atomically (a temporary file beside it,
    /// fsync, rename), so a reader never sees half a summary.
    public func deliverSummary(_ text: String, format: SummaryFormat, of patient: Patient, to file: URL?) throws {
        if let file {
            var isDirectory: ObjCBool = false
            let directory = file.deletingLastPathComponent().path
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw HReaderError.usage("the directory of --out \(file.path) does not exist")
            }
            do {
                try AtomicFile.write(Array(text.utf8), to: file, mode: 0o600)
            } catch {
                throw HReaderError.from(error)
            }
        }
        try recordSummary(format: format, of: patient, to: file?.path ?? "stdout")
    }

    /// The audit record of a summary handed out: where to, whose, which format (never its content).
    public func recordSummary(format: SummaryFormat, of patient: Patient, to destination: String) throws {
        try write {
            try audit.record("summary", subject: destination, detail: "patient \(patient.uuid): \(format.rawValue)")
        }
    }
}
