import Foundation
import HReaderCrypto
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Documents end to end (issue 26): your own files added, listed, shown, read back byte for byte and
/// removed; notes and reports fetched on import from a real sample server (inline, `Binary` urls, a
/// fetch that fails once and is retried by sync, an attachment on another host never fetched nor
/// given credentials); search across entries and documents; backup, restore and check; and nothing
/// of it in plaintext in the vault directory.
final class DocumentsTests: ServerCLITestCase {
    func documents(_ extra: [String] = [], vault: URL? = nil) throws -> [[String: Any]] {
        try json(try cli(["documents", "list", "--json"] + extra, vault: vault))["documents"] as? [[String: Any]] ?? []
    }

    func sha256(_ data: Data) -> String { SHA256.hash([UInt8](data)).map { String(format: "%02x", $0) }.joined() }

    func testAddListShowGetAndRemoveYourOwnDocuments() throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Byron"]))
        // A several-MB file, with a known string inside it, read back byte for byte.
        var big = Data("%PDF-1.4\n".utf8)
        var generator = SystemRandomNumberGenerator()
        for i in 0..<(6 << 20) / 8 { var word = generator.next() as UInt64; if i == 1000 { big.append(Data("BYTES-CANARY-7731".utf8)) }; big.append(Data(bytes: &word, count: 8)) }
        let bigURL = workDir.appendingPathComponent("scan.pdf")
        try big.write(to: bigURL)
        let html = try file("visit.html", "<html><head><style>x{}</style></head><body><p>Marigold-Visit and <b>metformin</b></p><script>Scriptwhistle()</script></body></html>")
        let rtf = try file("letter.rtf", #"{\rtf1\ansi{\fonttbl{\f0 Arial;}}Dear colleague, Vellichor-Letter \u8364? 5\par}"#)

        let (added, peakMB) = try hreaderMeasuringMemory(withPassword(["documents", "add", bigURL.path, "--patient", "1", "--title", "Big scan",
                                                                       "--date", "2024-03-02", "--json"]))
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertLessThan(peakMB, 200, "the file is stored in chunks, never whole in memory")
        let scan = try XCTUnwrap(try json(added)["document"] as? [String: Any])
        XCTAssertEqual(scan["size"] as? Int, big.count)
        XCTAssertEqual(scan["sha256"] as? String, sha256(big))
        XCTAssertEqual(scan["origin"] as? String, "added by you")
        XCTAssertEqual(scan["content_type"] as? String, "application/pdf")
        try ok(withPassword(["documents", "add", html, "--patient", "1"]))
        try ok(withPassword(["documents", "add", rtf, "--patient", "1", "--title", "Letter"]))
        let exe = try file("tool.exe", "MZ")
        XCTAssertEqual(try hreader(withPassword(["documents", "add", exe, "--patient", "1"])).status, 5, "a type not on the allow list")

        let listed = try documents(["--patient", "1"])
        XCTAssertEqual(Set(listed.compactMap { $0["title"] as? String }), ["Big scan", "visit", "Letter"])
        for document in listed {
            XCTAssertEqual(Set(document.keys).isSuperset(of: ["id", "patient_id", "title", "content_type", "size", "date", "sha256", "origin"]), true)
        }
        let id = { (title: String) in "\(listed.first { $0["title"] as? String == title }!["id"]!)" }

        let out = workDir.appendingPathComponent("out.pdf")
        try ok(withPassword(["documents", "get", id("Big scan"), "--out", out.path]))
        XCTAssertEqual(sha256(try Data(contentsOf: out)), sha256(big))
        var info = stat()
        XCTAssertEqual(stat(out.path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        let again = try hreader(withPassword(["documents", "get", id("Big scan"), "--out", out.path]))
        XCTAssertEqual(again.status, 2, "an existing file is kept without --force: \(again.stderr)")
        try ok(withPassword(["documents", "get", id("Letter"), "--out", out.path, "--force"]))
        XCTAssertEqual(try Data(contentsOf: out), try Data(contentsOf: URL(fileURLWithPath: rtf)))
        // A symlink at that name is a name taken: never followed, refused without --force.
        let victim = workDir.appendingPathComponent("victim.txt"), link = workDir.appendingPathComponent("link.pdf")
        try Data("untouched".utf8).write(to: victim)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)
        XCTAssertEqual(try hreader(withPassword(["documents", "get", id("Letter"), "--out", link.path])).status, 2)
        XCTAssertEqual(try String(contentsOf: victim, encoding: .utf8), "untouched")
        let stdout = try ok(withPassword(["documents", "get", id("visit"), "--out", "-"]))
        XCTAssertEqual(stdout.stdout, try String(contentsOfFile: html, encoding: .utf8))

        let shown = try ok(withPassword(["documents", "show", id("visit")]))
        XCTAssertTrue(shown.stdout.contains("Marigold-Visit and metformin"), shown.stdout)
        XCTAssertFalse(shown.stdout.contains("Scriptwhistle"), "no script content in the text")
        XCTAssertTrue(try ok(withPassword(["documents", "show", id("Letter")])).stdout.contains("Dear colleague, Vellichor-Letter € 5"))
        // A document's text goes through the terminal filter: no escape sequence reaches the terminal.
        let hostile = try file("hostile.txt", "Clipboard \u{1B}]52;c;ZWNobyBoaQ==\u{07} and \u{1B}[2J clear \u{9B}31m")
        let hostileID = "\((try json(try ok(withPassword(["documents", "add", hostile, "--patient", "1", "--json"])))["document"] as? [String: Any])?["id"] ?? "")"
        let filtered = try ok(withPassword(["documents", "show", hostileID])).stdout
        XCTAssertTrue(filtered.contains("Clipboard \u{FFFD}]52;c;ZWNobyBoaQ==\u{FFFD} and \u{FFFD}[2J clear \u{FFFD}31m"), filtered)
        XCTAssertFalse(filtered.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x9B })
        try ok(withPassword(["documents", "remove", hostileID]))

        let hits = try json(try ok(withPassword(["search", "vellichor", "--json"])))["hits"] as? [[String: Any]] ?? []
        XCTAssertEqual(hits.count, 1)
        XCTAssertEqual(hits.first?["kind"] as? String, "document")
        XCTAssertEqual("\(hits.first?["id"] ?? "")", id("Letter"))
        XCTAssertEqual(hits.first?["title"] as? String, "Letter")
        XCTAssertTrue((hits.first?["snippet"] as? String ?? "").contains("‹Vellichor›"))
        XCTAssertNotNil(hits.first?["patient_id"] as? Int)
        try ok(withPassword(["check"]))

        assertNoPlaintext(["BYTES-CANARY-7731", "Marigold-Visit", "Vellichor-Letter", "Scriptwhistle"])

        try ok(withPassword(["documents", "remove", id("Letter")]))
        XCTAssertEqual((try json(try ok(withPassword(["search", "vellichor", "--json"])))["hits"] as? [Any])?.count, 0)
        XCTAssertEqual(try documents().count, 2)
    }

    /// `documents get --out -` gives a pipe or a file the exact bytes, escape sequences included; on a
    /// terminal, where those would set the clipboard or clear the screen, it refuses in one line (exit 2)
    /// unless --force is given.
    func testGetToATerminalIsRefusedUnlessForced() throws {
        try ok(withPassword(["patients", "add", "--first", "Tia", "--last", "Tty"]))
        let note = "Discharge note\n\u{1B}]52;c;cm0gLXJmIH4K\u{07}\u{1B}[2J\u{1B}[1;1HAll results normal.\n"
        let added = try json(try ok(withPassword(["documents", "add", try file("note.txt", note), "--patient", "1", "--json"])))
        let id = "\((added["document"] as? [String: Any])?["id"] ?? "")"

        func onTerminal(_ extra: [String]) throws -> (status: Int32, output: String) {
            let terminal = try OnTerminal(Self.binary, withPassword(["documents", "get", id, "--out", "-"] + extra),
                                          workDir: workDir, environment: environment())
            defer { terminal.stop() }
            let status = terminal.finish()
            return (status, terminal.outputText)
        }
        let refused = try onTerminal([])
        XCTAssertEqual(refused.status, 2, refused.output)
        let lines = refused.output.split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) }
        XCTAssertEqual(lines.count, 1, refused.output)
        XCTAssertTrue(refused.output.hasPrefix("hreader: ") && refused.output.contains("use --out FILE, a pipe, or --force"), refused.output)
        XCTAssertFalse(refused.output.contains("\u{1B}") || refused.output.contains("All results normal"), refused.output)

        let forced = try onTerminal(["--force"])
        XCTAssertEqual(forced.status, 0, forced.output)
        XCTAssertTrue(forced.output.contains("\u{1B}]52;c;cm0gLXJmIH4K\u{07}\u{1B}[2J"), "with --force, the bytes as they are")

        // A file (the harness's stdout is one) and a pipe: the exact bytes, without --force.
        XCTAssertEqual(try ok(withPassword(["documents", "get", id, "--out", "-"])).stdout, note)
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = withPassword(["documents", "get", id, "--out", "-"])
        process.environment = environment()
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let piped = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertEqual(piped, Data(note.utf8))
    }

    func testImportFetchesAttachmentsKeepsOtherHostsAsReferencesAndSyncRetriesTheFailedOne() throws {
        let other = try SampleServer(workDir: workDir)
        let server = try SampleServer(["--documents", "--other-host", other.base.absoluteString], workDir: workDir)
        let imported = try json(try cli(["import", "--server", server.fhir, "--patient", "p1", "--json"]))
        let counts = try XCTUnwrap((imported["summary"] as? [String: Any])?["documents"] as? [String: Any])
        XCTAssertEqual(counts["stored"] as? Int, 5, "\(counts)")
        XCTAssertEqual(counts["failed"] as? Int, 1, "the Binary that fails once is counted: \(counts)")
        let byOrigin = Dictionary(uniqueKeysWithValues: try documents().map { ($0["origin"] as! String, $0) })
        XCTAssertEqual(byOrigin["DocumentReference/doc-inline#content[0]"]?["state"] as? String, "fetched")
        XCTAssertEqual(byOrigin["DocumentReference/doc-text#content[0]"]?["state"] as? String, "fetched")
        XCTAssertEqual(byOrigin["DocumentReference/doc-html#content[0]"]?["state"] as? String, "fetched", "absolute url on the same server")
        XCTAssertEqual(byOrigin["DocumentReference/doc-pdf#content[0]"]?["content_type"] as? String, "application/pdf")
        XCTAssertEqual(byOrigin["DiagnosticReport/dr-imaging#presentedForm[0]"]?["state"] as? String, "fetched")
        XCTAssertEqual(byOrigin["DocumentReference/doc-flaky#content[0]"]?["state"] as? String, "failed")
        XCTAssertEqual(byOrigin["DocumentReference/doc-exe#content[0]"]?["state"] as? String, "reference")
        XCTAssertTrue((byOrigin["DocumentReference/doc-exe#content[0]"]?["reason"] as? String ?? "").contains("not on the allow list"))
        XCTAssertEqual(byOrigin["DocumentReference/doc-elsewhere#content[0]"]?["state"] as? String, "reference")
        XCTAssertTrue((byOrigin["DocumentReference/doc-elsewhere#content[0]"]?["reason"] as? String ?? "").contains("another host"))
        XCTAssertEqual(try other.json("/probe/stats")["requests"] as? Int, 0, "the other host is never asked")

        // The PDF's bytes are exactly the server's; the HTML note's script never reaches its text.
        let pdfID = "\(byOrigin["DocumentReference/doc-pdf#content[0]"]!["id"]!)"
        let pdf = try cli(["documents", "get", pdfID, "--out", "-"])
        XCTAssertTrue(pdf.stdout.hasPrefix("%PDF-1.4"), pdf.stdout)
        // A document with no bytes here (kept as a reference) cannot be written: the file already at
        // that name is kept exactly, even with --force, and nothing is left beside it.
        let kept = workDir.appendingPathComponent("kept.txt")
        try Data("my own notes".utf8).write(to: kept)
        let refused = try cli(["documents", "get", "\(byOrigin["DocumentReference/doc-exe#content[0]"]!["id"]!)", "--out", kept.path, "--force"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("has no bytes in the vault"), refused.stderr)
        XCTAssertEqual(try String(contentsOf: kept, encoding: .utf8), "my own notes")
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: workDir.path).contains { $0.hasPrefix(".kept.txt.tmp-") })
        let html = try cli(["documents", "show", "\(byOrigin["DocumentReference/doc-html#content[0]"]!["id"]!)"])
        XCTAssertTrue(html.stdout.contains("Marigoldine clinic visit"), html.stdout)
        XCTAssertTrue(html.stdout.contains("the leaflet (https://example.org/leaflet)"), html.stdout)
        XCTAssertFalse(html.stdout.contains("Scriptwhistle") || html.stdout.contains("steal"), html.stdout)

        // Search finds note text beside entries.
        let hits = try json(try cli(["search", "quillfeather", "--json"]))["hits"] as? [[String: Any]] ?? []
        XCTAssertEqual(hits.map { $0["kind"] as? String }, ["document"])
        XCTAssertEqual(hits.first?["title"] as? String, "Progress note")
        let thistle = try json(try cli(["search", "thistlewaite", "--json"]))["hits"] as? [[String: Any]] ?? []
        XCTAssertEqual(thistle.first?["title"] as? String, "Chest X-ray report", "a DiagnosticReport's presentedForm")

        // Sync: the failed one is fetched now; what did not change is not fetched again.
        let before = try server.json("/probe/stats")["log"] as? [String] ?? []
        let synced = try cli(["sync"])
        XCTAssertEqual(synced.status, 0, synced.stderr)
        XCTAssertTrue(synced.stdout.contains("documents: 1 stored"), synced.stdout)
        let after = try server.json("/probe/stats")["log"] as? [String] ?? []
        let binaryFetches = after.dropFirst(before.count).filter { $0.contains("/Binary/") }
        XCTAssertEqual(binaryFetches, ["GET /fhir/Binary/bin-flaky"], "only the failed one is fetched again")
        let flaky = try documents().first { $0["origin"] as? String == "DocumentReference/doc-flaky#content[0]" }
        XCTAssertEqual(flaky?["state"] as? String, "fetched")
        XCTAssertEqual(try json(try cli(["search", "ravenhollow", "--json"]))["hits"].map { ($0 as? [Any])?.count }, 1)
        XCTAssertEqual(try other.json("/probe/stats")["requests"] as? Int, 0)

        XCTAssertEqual(try cli(["check"]).status, 0)
        assertNoPlaintext(["Quillfeather", "Brambleworth", "Marigoldine", "Thistlewaite", "Ravenhollow", "Scriptwhistle"])
    }

    /// An attachment's fetch does not follow a redirect out of the source's FHIR base, to another origin
    /// (another server on this machine, as an intranet page would be) or to another path of its own
    /// server: the document is kept as a reference with the reason, and nothing is asked there, so
    /// nothing of what is served there is kept as the source's (security review 3, L-2).
    func testAttachmentRedirectsOutOfTheBaseAreNotFollowed() throws {
        let other = try SampleServer(["--documents"], workDir: workDir)
        let server = try SampleServer(["--documents", "--faults", "--redirect-target", other.fhir], workDir: workDir)
        let imported = try cli(["import", "--server", server.base.absoluteString + "/faults/redirect-binary/fhir", "--patient", "p1"])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        var byOrigin = Dictionary(uniqueKeysWithValues: try documents().map { ($0["origin"] as! String, $0) })
        XCTAssertEqual(byOrigin["DocumentReference/doc-inline#content[0]"]?["state"] as? String, "fetched", "inline data is not fetched")
        for origin in ["DocumentReference/doc-text#content[0]", "DocumentReference/doc-pdf#content[0]"] {
            XCTAssertEqual(byOrigin[origin]?["state"] as? String, "reference", "\(byOrigin[origin] ?? [:])")
            XCTAssertEqual(byOrigin[origin]?["reason"] as? String, "redirected to another origin (http://127.0.0.1:\(other.port)); not followed")
            XCTAssertTrue(byOrigin[origin]?["sha256"] is NSNull)
        }
        XCTAssertEqual(try other.json("/probe/stats")["requests"] as? Int, 0, "the other origin is never asked")
        XCTAssertEqual((try json(try cli(["search", "brambleworth", "--json"]))["hits"] as? [Any])?.count, 0, "its text is not kept")

        // A hop to another path of the same server (out of the base, where the source's credentials would go too).
        let sameHost = try SampleServer(["--documents", "--faults", "--redirect-target", "/fhir"], workDir: workDir)
        let vault = try makeVault("same-host")
        let again = try cli(["import", "--server", sameHost.base.absoluteString + "/faults/redirect-binary/fhir", "--patient", "p1"], vault: vault)
        XCTAssertEqual(again.status, 0, again.stderr)
        byOrigin = Dictionary(uniqueKeysWithValues: try documents(vault: vault).map { ($0["origin"] as! String, $0) })
        XCTAssertEqual(byOrigin["DocumentReference/doc-text#content[0]"]?["state"] as? String, "reference")
        XCTAssertEqual(byOrigin["DocumentReference/doc-text#content[0]"]?["reason"] as? String,
                       "redirected outside /faults/redirect-binary/fhir/ on its server (http://127.0.0.1:\(sameHost.port)/fhir/Binary/bin-text); not followed")
        let log = try sameHost.json("/probe/stats")["log"] as? [String] ?? []
        XCTAssertFalse(log.contains { $0.hasPrefix("GET /fhir/Binary/") }, "\(log)")
    }

    /// A new version of a DocumentReference whose attachment gives no size or hash: the Binary is asked
    /// again with the ETag it had (304 keeps the bytes); an unchanged one is not asked at all.
    func testANewVersionIsAskedAgainWithItsETag() throws {
        let server = try SampleServer(["--documents"], workDir: workDir)
        XCTAssertEqual(try cli(["import", "--server", server.fhir, "--patient", "p1"]).status, 0)
        for (id, title) in [("doc-text", "Discharge summary (amended)"), ("doc-pdf", "Cardiology letter (renamed)")] {
            var resource = try server.json("/fhir/DocumentReference/\(id)")
            resource["description"] = title
            let body = try JSONSerialization.data(withJSONObject: resource)
            _ = try server.json("/fhir/DocumentReference/\(id)", method: "PUT", body: body, headers: ["Content-Type": "application/fhir+json"])
        }
        let before = try server.json("/probe/stats")["log"] as? [String] ?? []
        let synced = try json(try cli(["sync", "--json"]))
        let counts = (synced["summary"] as? [String: Any])?["documents"] as? [String: Any] ?? [:]
        let after = try server.json("/probe/stats")["log"] as? [String] ?? []
        XCTAssertEqual(after.dropFirst(before.count).filter { $0.contains("/Binary/") }.sorted(),
                       ["GET /fhir/Binary/bin-flaky", "GET /fhir/Binary/bin-text"], "the failed one, and the new version")
        XCTAssertEqual(counts["stored"] as? Int, 1, "only the one that failed before: \(counts)")
        let text = try documents().first { $0["origin"] as? String == "DocumentReference/doc-text#content[0]" }
        XCTAssertEqual(text?["title"] as? String, "Discharge summary (amended)")
        XCTAssertEqual(text?["state"] as? String, "fetched")
        // The PDF's attachment declares its size, which did not change: not fetched, but renamed.
        let pdf = try documents().first { $0["origin"] as? String == "DocumentReference/doc-pdf#content[0]" }
        XCTAssertEqual(pdf?["title"] as? String, "Cardiology letter (renamed)")
        XCTAssertNotNil(pdf?["sha256"] as? String)
    }

    func testLimitsKeepLargeDocumentsAsReferences() throws {
        let server = try SampleServer(["--documents"], workDir: workDir)
        let limited = try hreader(withPassword(["import", "--server", server.fhir, "--patient", "p1", "--json"]),
                                  env: ["TZ": "UTC", "HREADER_DOCUMENT_MAX_BYTES": "200"])
        XCTAssertEqual(limited.status, 0, limited.stderr)
        let byOrigin = Dictionary(uniqueKeysWithValues: try documents().map { ($0["origin"] as! String, $0) })
        XCTAssertEqual(byOrigin["DocumentReference/doc-pdf#content[0]"]?["state"] as? String, "reference", "declared over the limit: never asked")
        XCTAssertTrue((byOrigin["DocumentReference/doc-pdf#content[0]"]?["reason"] as? String ?? "").contains("too large"))
        XCTAssertEqual(byOrigin["DocumentReference/doc-html#content[0]"]?["state"] as? String, "reference", "over the limit when fetched")
        XCTAssertEqual(byOrigin["DocumentReference/doc-text#content[0]"]?["state"] as? String, "fetched")
        let log = try server.json("/probe/stats")["log"] as? [String] ?? []
        XCTAssertFalse(log.contains("GET /fhir/Binary/bin-pdf"))

        let big = try file("big.txt", String(repeating: "x", count: 2000))
        let refused = try hreader(withPassword(["documents", "add", big, "--patient", "1"]), env: ["HREADER_DOCUMENT_MAX_BYTES": "1K"])
        XCTAssertEqual(refused.status, 5, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("limit"), refused.stderr)
        XCTAssertEqual(try hreader(withPassword(["documents", "list"]), env: ["HREADER_DOCUMENT_MAX_BYTES": "lots"]).status, 0,
                       "the limits matter only where documents are stored")
        XCTAssertEqual(try hreader(withPassword(["documents", "add", big, "--patient", "1"]), env: ["HREADER_DOCUMENT_MAX_BYTES": "lots"]).status, 2)

        // Removing the patient removes their documents.
        try ok(withPassword(["patients", "remove", "1"]))
        XCTAssertEqual(try documents().count, 0)
    }

    func testCredentialsNeverReachTheOtherHost() throws {
        let other = try SampleServer(workDir: workDir)
        let credentials = try file("basic", "reader:correct horse battery")
        let server = try SampleServer(["--documents", "--other-host", other.base.absoluteString, "--basic-credentials-file", credentials],
                                      workDir: workDir)
        let secret = try file("good", "correct horse battery")
        let base = server.base.absoluteString + "/basic/fhir"
        _ = try cli(["sources", "login", "--server", base, "--kind", "fhir", "--auth", "basic", "--user", "reader", "--secret-file", secret])
        let result = try cli(["import", "--server", base, "--patient", "p1"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let byOrigin = Dictionary(uniqueKeysWithValues: try documents().map { ($0["origin"] as! String, $0) })
        XCTAssertEqual(byOrigin["DocumentReference/doc-text#content[0]"]?["state"] as? String, "fetched", "fetched with the source's credentials")
        XCTAssertEqual(byOrigin["DocumentReference/doc-elsewhere#content[0]"]?["state"] as? String, "reference")
        XCTAssertEqual(byOrigin["DocumentReference/doc-html#content[0]"]?["state"] as? String, "reference",
                       "an absolute url outside this source's base (/fhir, not /basic/fhir) is not followed with its credentials")
        let stats = try other.json("/probe/stats")
        XCTAssertEqual(stats["requests"] as? Int, 0)
        XCTAssertEqual(stats["requests_with_credentials"] as? Int, 0)

        // Removing the source removes what came from it, its documents included.
        XCTAssertEqual(try cli(["sources", "remove", base, "--with-patients"]).status, 0)
        XCTAssertEqual(try documents().count, 0)
    }

    func testMinimalServerServesDocumentsToo() throws {
        let server = try SampleServer(["--documents", "--profile", "minimal"], workDir: workDir)
        let result = try cli(["import", "--server", server.fhir, "--patient", "p1"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let states = Dictionary(uniqueKeysWithValues: try documents().map { ($0["origin"] as! String, $0["state"] as! String) })
        XCTAssertEqual(states["DocumentReference/doc-text#content[0]"], "fetched", "\(states)")
        XCTAssertEqual(states["DiagnosticReport/dr-imaging#presentedForm[0]"], "fetched", "\(states)")
    }

    func testFileImportKeepsInlineAttachmentsAndCCDANonXMLBodies() throws {
        let note = Data("Inline note of Wintergreen-File".utf8).base64EncodedString()
        let bundle = """
            {"resourceType":"Bundle","type":"collection","entry":[
              {"resource":{"resourceType":"Patient","id":"f1","name":[{"family":"Fileson","given":["Fay"]}]}},
              {"resource":{"resourceType":"DocumentReference","id":"n1","status":"current","subject":{"reference":"Patient/f1"},
               "description":"Inline note","content":[{"attachment":{"contentType":"text/plain","data":"\(note)"}},
               {"attachment":{"contentType":"text/plain","url":"https://portal.example.org/Binary/1"}}]}}]}
            """
        XCTAssertEqual(try cli(["import", "--file", try file("bundle.json", bundle)]).status, 0)
        let found = try documents()
        XCTAssertEqual(found.count, 2)
        XCTAssertEqual(found.first { $0["state"] as? String == "fetched" }?["title"] as? String, "Inline note")
        XCTAssertTrue((found.first { $0["state"] as? String == "reference" }?["reason"] as? String ?? "").contains("not fetched"))
        // Importing the same file again changes nothing.
        let again = try json(try cli(["import", "--file", workDir.appendingPathComponent("bundle.json").path, "--json"]))
        XCTAssertEqual(((again["summary"] as? [String: Any])?["documents"] as? [String: Any])?["stored"] as? Int, 0)
        XCTAssertEqual(try documents().count, 2)

        let body = Data("Nonxml body of Lanternfield".utf8).base64EncodedString()
        let ccda = """
            <?xml version="1.0" encoding="UTF-8"?>
            <ClinicalDocument xmlns="urn:hl7-org:v3">
              <typeId root="2.16.840.1.113883.1.3" extension="POCD_HD000040"/>
              <templateId root="2.16.840.1.113883.10.20.22.1.1" extension="2015-08-01"/>
              <templateId root="2.16.840.1.113883.10.20.22.1.10" extension="2015-08-01"/>
              <id root="2.16.840.1.113883.19.5.99999.1" extension="U-1"/>
              <code code="11506-3" codeSystem="2.16.840.1.113883.6.1" displayName="Progress note"/>
              <title>Scanned progress note</title>
              <effectiveTime value="20240105101500+0000"/>
              <recordTarget><patientRole><id root="2.16.840.1.113883.19.5.99999.2" extension="77"/>
                <patient><name><given>Nora</given><family>Nonxml</family></name>
                <administrativeGenderCode code="F" codeSystem="2.16.840.1.113883.5.1"/><birthTime value="19700101"/></patient>
              </patientRole></recordTarget>
              <component><nonXMLBody><text mediaType="text/plain" representation="B64">\(body)</text></nonXMLBody></component>
            </ClinicalDocument>
            """
        let ccdaResult = try cli(["import", "--file", try file("note.xml", ccda)])
        XCTAssertEqual(ccdaResult.status, 0, ccdaResult.stderr)
        let hits = try json(try cli(["search", "lanternfield", "--json"]))["hits"] as? [[String: Any]] ?? []
        XCTAssertEqual(hits.first?["kind"] as? String, "document", "the nonXMLBody is kept as a document")
        XCTAssertEqual(hits.first?["title"] as? String, "Scanned progress note")
        assertNoPlaintext(["Wintergreen-File", "Lanternfield"])
    }

    /// A source's `contentType` is kept only in its clean form: one with CR LF in it (a forged line in
    /// `documents list`, a forged header in the web's answer) is refused and the document kept as a
    /// reference; a messy but valid one is lower-cased and loses its other parameters, in the list and
    /// in the web view's `Content-Type` alike (security review 3, L-6).
    func testContentTypesFromASourceAreKeptOnlyInTheirCleanForm() throws {
        func inline(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
        let hostile = #"text/html\r\nSet-Cookie: hreader_session=attacker; Path=/\r\nX-Injected: 1"#
        let messy = #"TEXT/HTML ; Charset=\"UTF-8\" ; profile=\"x;y\""#
        let bundle = """
            {"resourceType":"Bundle","type":"collection","entry":[
              {"resource":{"resourceType":"Patient","id":"c1","name":[{"family":"Typeson","given":["Cal"]}]}},
              {"resource":{"resourceType":"DocumentReference","id":"hostile","status":"current","subject":{"reference":"Patient/c1"},
               "description":"Hostile type","content":[{"attachment":{"contentType":"\(hostile)","data":"\(inline("<p>Hostile-typed note</p>"))"}}]}},
              {"resource":{"resourceType":"DocumentReference","id":"messy","status":"current","subject":{"reference":"Patient/c1"},
               "description":"Messy type","content":[{"attachment":{"contentType":"\(messy)","data":"\(inline("<p>Messy-typed note</p>"))"}}]}}]}
            """
        let imported = try cli(["import", "--file", try file("types.json", bundle)])
        XCTAssertEqual(imported.status, 0, imported.stderr)

        let listed = try cli(["documents", "list"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        for forged in ["Set-Cookie", "X-Injected", "attacker", "TEXT/HTML", "profile", "Charset"] {
            XCTAssertFalse(listed.stdout.contains(forged), listed.stdout)
        }
        XCTAssertEqual(listed.stdout.split(separator: "\n").count, 3, "a heading and one line per document: \(listed.stdout)")
        let byTitle = Dictionary(uniqueKeysWithValues: try documents().map { ($0["title"] as! String, $0) })
        XCTAssertEqual(byTitle["Hostile type"]?["state"] as? String, "reference")
        XCTAssertTrue(byTitle["Hostile type"]?["content_type"] is NSNull, "\(byTitle)")
        XCTAssertEqual(byTitle["Hostile type"]?["reason"] as? String, "the content type is not a media type (type/subtype, RFC 6838)")
        XCTAssertEqual(byTitle["Messy type"]?["state"] as? String, "fetched")
        XCTAssertEqual(byTitle["Messy type"]?["content_type"] as? String, "text/html; charset=utf-8")

        let served = try serve()
        defer { stop(served) }
        let file = try served.bearer("/documents/\(byTitle["Messy type"]!["id"]!)/file")
        XCTAssertEqual(file.status, 200)
        XCTAssertEqual(file.headers("Content-Type"), ["text/html; charset=utf-8"])
        XCTAssertEqual(file.body, "<p>Messy-typed note</p>")
        let refused = try served.bearer("/documents/\(byTitle["Hostile type"]!["id"]!)/file")
        XCTAssertEqual(refused.status, 404, "no bytes were kept")
        XCTAssertTrue(refused.headers("Set-Cookie").allSatisfy { !$0.contains("attacker") })
        XCTAssertTrue(refused.headers("X-Injected").isEmpty)
    }

    /// The web view: a patient's documents, one document's text (escaped), and its bytes under a CSP
    /// sandbox so an HTML note never runs script in the app's origin; search and the API as the CLI's.
    func testTheWebViewListsShowsAndServesDocumentsUnderASandbox() throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Byron"]))
        let htmlText = "<html><body><p>Quinceworth visit &amp; plan</p><script>document.title='Scriptwhistle'</script></body></html>"
        let html = try file("visit.html", htmlText)
        let pdfText = "%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n"
        let pdf = try file("letter.pdf", pdfText)
        let htmlID = "\((try json(try ok(withPassword(["documents", "add", html, "--patient", "1", "--json"])))["document"] as? [String: Any])?["id"] ?? "")"
        let pdfID = "\((try json(try ok(withPassword(["documents", "add", pdf, "--patient", "1", "--json"])))["document"] as? [String: Any])?["id"] ?? "")"
        let served = try serve()
        defer { stop(served) }

        let list = try served.bearer("/patients/1/documents")
        XCTAssertEqual(list.status, 200)
        XCTAssertTrue(list.body.contains("href=\"\(served.prefix)/documents/\(htmlID)\""), list.body)
        XCTAssertTrue(try served.bearer("/patients/1").body.contains("/patients/\(try XCTUnwrap(patientUUID()))/documents"), "linked from the summary")

        let page = try served.bearer("/documents/\(htmlID)")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains("Quinceworth visit &amp; plan"), page.body)
        XCTAssertFalse(page.body.contains("Scriptwhistle"), "the note's script is not in its text")
        XCTAssertEqual(page.header("Content-Security-Policy"), try served.bearer("/").header("Content-Security-Policy"))

        let file = try served.bearer("/documents/\(htmlID)/file")
        XCTAssertEqual(file.status, 200)
        XCTAssertEqual(file.body, htmlText, "the exact bytes")
        XCTAssertEqual(file.header("Content-Type"), "text/html")
        XCTAssertTrue(file.header("Content-Security-Policy")?.hasPrefix("sandbox;") ?? false, "\(file.headers)")
        XCTAssertFalse(file.header("Content-Security-Policy")?.contains("allow-scripts") ?? true)
        XCTAssertEqual(file.header("X-Content-Type-Options"), "nosniff")
        XCTAssertEqual(file.header("Content-Disposition"), "inline")
        let letter = try served.bearer("/documents/\(pdfID)/file")
        XCTAssertEqual(letter.header("Content-Type"), "application/pdf")
        XCTAssertEqual(letter.body, pdfText)
        XCTAssertEqual(try served.bearer("/documents/999").status, 404)
        XCTAssertEqual(try served.bearer("/documents/999/file").status, 404)

        let api = try served.bearer("/api/patients/1/documents")
        let cli = try json(try ok(withPassword(["documents", "list", "--patient", "1", "--json"])))
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(api.body.utf8)) as? NSDictionary, cli as NSDictionary)
        let apiSearch = try served.bearer("/api/search?q=quinceworth")
        let cliSearch = try json(try ok(withPassword(["search", "quinceworth", "--json"])))
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(apiSearch.body.utf8)) as? NSDictionary, cliSearch as NSDictionary)
        XCTAssertEqual((cliSearch["hits"] as? [[String: Any]])?.first?["kind"] as? String, "document")
        let found = try served.bearer("/search?q=quinceworth")
        XCTAssertTrue(found.body.contains("class=\"hit document-hit\""), found.body)
        XCTAssertTrue(found.body.contains("href=\"\(served.prefix)/documents/\(htmlID)\""), found.body)
    }

    func patientUUID() throws -> String? {
        (try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as? [[String: Any]])?.first?["uuid"] as? String
    }

    /// Merging people moves a person's documents to the one kept; unmerging moves them back.
    func testMergeAndUnmergeMoveDocumentsWithThePerson() throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Byron"]))
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Lovelace"]))
        try ok(withPassword(["documents", "add", try file("a.txt", "Note of the first"), "--patient", "1"]))
        try ok(withPassword(["documents", "add", try file("b.txt", "Note of the second"), "--patient", "2"]))
        try ok(withPassword(["patients", "merge", "1", "2"]))
        XCTAssertEqual(try documents(["--patient", "1"]).count, 2)
        XCTAssertEqual((try json(try ok(withPassword(["search", "second", "--patient", "1", "--json"])))["hits"] as? [Any])?.count, 1)
        try ok(withPassword(["patients", "unmerge", "1"]))
        XCTAssertEqual(try documents(["--patient", "1"]).map { $0["title"] as? String }, ["a"])
        XCTAssertEqual(try documents(["--patient", "2"]).map { $0["title"] as? String }, ["b"])
    }

    /// Security review 3, M-3: a document and Apple Health samples that come with the other
    /// person's record while two people are merged go back with them on unmerge: nothing of the
    /// other person is listed, searched or exported under the one kept, and a re-import finds what
    /// it brought before (no second copy).
    func testUnmergeGivesBackWhatTheOtherRecordBroughtWhileMerged() throws {
        func bundle(_ id: String, _ given: String, _ family: String, _ resources: String = "") -> String {
            #"{"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Patient","id":"\#(id)","#
                + #""identifier":[{"system":"urn:oid:1.2.3","value":"\#(id)"}],"name":[{"family":"\#(family)","given":["\#(given)"]}],"birthDate":"1980-01-01"}}"#
                + #",{"resource":{"resourceType":"Condition","id":"c-\#(id)","subject":{"reference":"Patient/\#(id)"},"code":{"text":"Asthma of \#(given)"}}}"#
                + resources + "]}"
        }
        let letter = Data("Bob Baker: HIV-1 antibody test REACTIVE".utf8).base64EncodedString()
        let bobDocument = bundle("bob", "Bob", "Baker", #",{"resource":{"resourceType":"DocumentReference","id":"d1","status":"current","subject":{"reference":"Patient/bob"},"description":"Bob lab letter","content":[{"attachment":{"contentType":"text/plain","data":"\#(letter)","title":"Bob lab letter"}}]}}"#)
        func health(_ type: String, _ unit: String, _ value: String) throws -> String {
            try file("export-\(type).xml", """
                <?xml version="1.0" encoding="UTF-8"?>
                <HealthData locale="en_US"><ExportDate value="2024-05-01 10:00:00 -0400"/>
                <Record type="HKQuantityTypeIdentifier\(type)" sourceName="Bob's Watch" unit="\(unit)" creationDate="2024-05-01 09:00:00 -0400" startDate="2024-05-01 09:00:00 -0400" endDate="2024-05-01 09:00:00 -0400" value="\(value)"/>
                </HealthData>
                """)
        }
        try ok(withPassword(["import", "--file", try file("alice.json", bundle("alice", "Alice", "Able"))]))
        try ok(withPassword(["import", "--file", try file("bob.json", bundle("bob", "Bob", "Baker"))]))
        try ok(withPassword(["import", "--apple-health", try health("HeartRate", "count/min", "61"), "--patient", "2"]))
        let sources = try json(try ok(withPassword(["sources", "list", "--json"])))["sources"] as? [[String: Any]] ?? []
        XCTAssertEqual(sources.compactMap { $0["name"] as? String }.sorted(), ["Apple Health (Bob's Watch)", "alice.json", "bob.json"],
                       "each file by its name, the export by the device that wrote it")
        try ok(withPassword(["patients", "merge", "1", "2"]))
        // While merged: Bob's record brings a document and a new series of samples.
        try ok(withPassword(["import", "--file", try file("bob-doc.json", bobDocument)]))
        try ok(withPassword(["import", "--apple-health", try health("BodyMass", "kg", "81"), "--patient", "2"]))
        XCTAssertEqual(try documents(["--patient", "1"]).count, 1)
        XCTAssertEqual(try entries(patient: "1", type: "vital_sign").count, 2)
        try ok(withPassword(["patients", "unmerge", "1"]))

        XCTAssertEqual(try documents(["--patient", "1"]).count, 0, "Alice keeps nothing of Bob's")
        XCTAssertEqual(try documents(["--patient", "2"]).map { $0["title"] as? String }, ["Bob lab letter"])
        XCTAssertEqual(try entries(patient: "1", type: "vital_sign").count, 0)
        XCTAssertEqual(try entries(patient: "2", type: "vital_sign").count, 2)
        let hits = try json(try ok(withPassword(["search", "HIV", "--json"])))["hits"] as? [[String: Any]] ?? []
        XCTAssertEqual(hits.map { $0["patient_id"] as? Int }, [2])
        let exported = workDir.appendingPathComponent("alice-export.json")
        try ok(withPassword(["export", "--patient", "1", "--out", exported.path, "--with-documents"]))
        let text = try String(contentsOf: exported, encoding: .utf8)
        XCTAssertFalse(text.contains("DocumentReference") || text.contains("Baker") || text.contains(letter), "Alice's export holds Bob's letter")
        // The same document again: found where it went, not a second copy.
        try ok(withPassword(["import", "--file", workDir.appendingPathComponent("bob-doc.json").path]))
        XCTAssertEqual(try documents().count, 1)
    }

    func entries(patient: String, type: String) throws -> [[String: Any]] {
        try json(try ok(withPassword(["entries", "list", "--patient", patient, "--type", type, "--json"])))["entries"] as? [[String: Any]] ?? []
    }

    /// A file that starts as a PDF does, then `bytes` bytes of a pattern (no text to find in it).
    private func pdfFile(_ name: String, bytes count: Int, step: Int) throws -> (URL, Data) {
        var bytes = Data("%PDF-1.4\n".utf8)
        for i in 0..<count { bytes.append(UInt8(truncatingIfNeeded: i &* step)) }
        let url = workDir.appendingPathComponent(name)
        try bytes.write(to: url)
        return (url, bytes)
    }

    func testBackupAndRestoreCarryDocumentsAndCheckVerifiesThem() throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Byron"]))
        let (pdf, bytes) = try pdfFile("a.pdf", bytes: 600_000, step: 7)
        try ok(withPassword(["documents", "add", pdf.path, "--patient", "1"]))
        let backupFile = workDir.appendingPathComponent("b.hrbackup")
        try ok(withPassword(["backup", "--out", backupFile.path]))
        let restored = workDir.appendingPathComponent("restored/vault")
        try ok(withPassword(["restore", backupFile.path, "--vault", restored.path]))
        try ok(withPassword(["check", "--vault", restored.path]))
        let list = try documents(vault: restored)
        XCTAssertEqual(list.first?["sha256"] as? String, sha256(bytes))
        // export leaves documents out, unless --with-documents (then DocumentReference + inline attachment).
        let plain = workDir.appendingPathComponent("plain.json"), full = workDir.appendingPathComponent("full.json")
        try ok(withPassword(["export", "--patient", "1", "--out", plain.path]))
        XCTAssertFalse(try String(contentsOf: plain, encoding: .utf8).contains("DocumentReference"))
        try ok(withPassword(["export", "--patient", "1", "--out", full.path, "--with-documents"]))
        let bundle = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: full)) as? [String: Any])
        let references = (bundle["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
            .filter { $0["resourceType"] as? String == "DocumentReference" }
        XCTAssertEqual(references.count, 1)
        let attachment = ((references.first?["content"] as? [[String: Any]])?.first?["attachment"] as? [String: Any]) ?? [:]
        XCTAssertEqual(Data(base64Encoded: attachment["data"] as? String ?? ""), bytes)
        XCTAssertEqual(attachment["contentType"] as? String, "application/pdf")

        let out = workDir.appendingPathComponent("back.pdf")
        try ok(withPassword(["documents", "get", "\(list.first!["id"]!)", "--out", out.path, "--vault", restored.path]))
        XCTAssertEqual(try Data(contentsOf: out), bytes)
    }

    /// `export --server --with-documents` creates each document once on the server, as a DocumentReference
    /// with its bytes inline and hreader's identifier: the second export finds them there. Against the full
    /// server (conditional creates in transactions) and the minimal one (identifiers looked up first).
    func testExportWithDocumentsCreatesEachDocumentOnceOnTheServer() throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Byron"]))
        let (pdf, bytes) = try pdfFile("letter.pdf", bytes: 40_000, step: 13)
        try ok(withPassword(["documents", "add", pdf.path, "--patient", "1", "--title", "Cardiology letter"]))
        for profile in ["full", "minimal"] {
            let server = try SampleServer(["--patients", "0", "--profile", profile], workDir: workDir)
            defer { server.stop() }
            let first = try json(try ok(withPassword(["export", "--patient", "1", "--server", server.fhir, "--with-documents", "--json"])))
            let export = try XCTUnwrap(first["export"] as? [String: Any])
            XCTAssertEqual(export["documents"] as? Int, 1, profile)
            XCTAssertEqual(export["documents_created"] as? Int, 1, profile)
            let found = try server.json("/fhir/DocumentReference?identifier=urn:hreader:document%7C")
            let references = (found["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
            let stored = try XCTUnwrap(references.first { $0["resourceType"] as? String == "DocumentReference" }, "\(profile): \(found)")
            let attachment = ((stored["content"] as? [[String: Any]])?.first?["attachment"] as? [String: Any]) ?? [:]
            XCTAssertEqual(Data(base64Encoded: attachment["data"] as? String ?? ""), bytes, profile)
            XCTAssertEqual((stored["subject"] as? [String: Any])?["reference"] as? String != nil, true)
            let again = try json(try ok(withPassword(["export", "--patient", "1", "--server", server.fhir, "--with-documents", "--json"])))
            let second = try XCTUnwrap(again["export"] as? [String: Any])
            XCTAssertEqual(second["documents_created"] as? Int, 0, "\(profile): created once")
            XCTAssertEqual(second["documents_existing"] as? Int, 1, profile)
        }
    }
}
