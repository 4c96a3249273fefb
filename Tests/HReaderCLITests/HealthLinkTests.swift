import Foundation
@testable import HReaderKit
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// SMART Health Links (issue 37, docs/sharing.md): `share create` and `import --link` as real
/// processes, files on a static `python3 -m http.server`, passcode links against the real
/// `hreader serve --shares`. Links the tests make themselves are sealed by Python's `cryptography`
/// (AES-GCM), not by hreader, so a fault shared by both sides would not pass unseen.
final class HealthLinkTests: ServerCLITestCase {
    var host: IssuerServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        host = try IssuerServer(root: workDir.appendingPathComponent("www"))
    }

    override func tearDownWithError() throws {
        host?.stop()
        try super.tearDownWithError()
    }

    var hostBase: String { "http://127.0.0.1:\(host.port)" }

    /// Ada with a condition, a medication, an allergy and a recent heart rate, in `vault`.
    func seed(_ vault: URL?) throws {
        func run(_ arguments: [String]) throws {
            let result = try cli(arguments, vault: vault)
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
        }
        try run(["patients", "add", "--first", "Ada", "--last", "Lovelace", "--birth-date", "1985-12-10", "--gender", "female", "--as", "me"])
        try run(["entries", "add", "--patient", "1", "--type", "condition", "--description", "Essential hypertension", "--status", "active",
                 "--date", "2026-11-06", "--code", "SNOMED=59621000"])
        try run(["entries", "add", "--patient", "1", "--type", "medication", "--description", "Lisinopril 10 mg tablet",
                 "--dose", "10 mg daily", "--date", "2026-11-06"])
        try run(["entries", "add", "--patient", "1", "--type", "allergy", "--description", "Penicillin", "--date", "2020-01-01"])
        try run(["entries", "add", "--patient", "1", "--type", "vital_sign", "--description", "Heart rate", "--value", "64", "--unit", "/min",
                 "--date", "2026-11-03T08:30:00Z", "--code", "LOINC=8867-4"])
    }

    /// The clinical facts of a vault: who, and each entry's type, description, value and unit (the
    /// IPS's own Composition, kept as an observation on import, is the document, not a fact).
    func facts(in vault: URL?) throws -> [String] {
        let patients = try json(try cli(["patients", "list", "--json"], vault: vault))["patients"] as? [[String: Any]] ?? []
        var out: [String] = []
        for patient in patients {
            out.append("patient \(patient["first_name"] ?? "") \(patient["last_name"] ?? "") \(patient["birth_date"] ?? "")")
            let entries = try json(try cli(["entries", "list", "--patient", "\(patient["id"]!)", "--json"], vault: vault))["entries"]
                as? [[String: Any]] ?? []
            for entry in entries where !((entry["description"] as? String ?? "").hasPrefix("Composition")) {
                out.append(["type", "description", "value", "unit"].map { "\(entry[$0] ?? "")" }.joined(separator: " | "))
            }
        }
        return out.sorted()
    }

    func shareOut(_ vault: URL?, extra: [String] = []) throws -> (link: String, id: String) {
        let result = try cli(["share", "create", "--patient", "1", "--out", host.root.path, "--base-url", hostBase, "--json"] + extra, vault: vault)
        XCTAssertEqual(result.status, 0, result.stderr)
        let object = try json(result)
        let share = try XCTUnwrap(object["share"] as? [String: Any])
        return (try XCTUnwrap(object["link"] as? String), try XCTUnwrap(share["id"] as? String))
    }

    // MARK: Round trip through a static host

    func testShareToStaticHostThenImportLinkGivesTheSameFacts() throws {
        let sharer = try makeVault("sharer")
        try seed(sharer)
        let (link, id) = try shareOut(sharer, extra: ["--label", "Ada's summary", "--viewer", "https://viewer.example.org/"])
        XCTAssertTrue(link.hasPrefix("shlink:/"), link)
        XCTAssertEqual(id.count, 43, "an unguessable name: 32 random bytes")

        // Only ciphertext on the host: one file, named by the id, no health data in it.
        let written = try FileManager.default.contentsOfDirectory(atPath: host.root.path).filter { $0 != "issuer" }
        XCTAssertEqual(written, [id])
        let stored = try Data(contentsOf: host.root.appendingPathComponent(id))
        for secret in ["Lisinopril", "Lovelace", "hypertension", "Penicillin"] {
            XCTAssertFalse(stored.containsBytes(Data(secret.utf8)), "\(secret) is readable on the host")
        }
        XCTAssertEqual(String(decoding: stored, as: UTF8.self).split(separator: ".", omittingEmptySubsequences: false).count, 5)

        let result = try cli(["import", "--link", link])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("SMART Health Link"), result.stdout)
        XCTAssertEqual(try facts(in: nil), try facts(in: sharer))
        let received = try facts(in: nil)
        XCTAssertTrue(received.contains("medication | Lisinopril 10 mg tablet |  | "), "\(received)")

        // The viewer form of the same link reads alike, and a second import changes no fact.
        let viewer = "https://viewer.example.org/#" + link
        XCTAssertEqual(try cli(["import", "--link", viewer]).status, 0)
        XCTAssertEqual(try facts(in: nil), try facts(in: sharer))

        // Listed, then revoked: the file is gone from the host, and the link with it.
        let listed = try json(try cli(["share", "list", "--json"], vault: sharer))["shares"] as? [[String: Any]] ?? []
        XCTAssertEqual(listed.first?["label"] as? String, "Ada's summary")
        XCTAssertEqual(listed.first?["flag"] as? String, "U")
        XCTAssertNil(listed.first?["key"], "the key is never listed")
        XCTAssertEqual(try cli(["share", "revoke", id], vault: sharer).status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: host.root.appendingPathComponent(id).path))
        let gone = try cli(["import", "--link", link])
        XCTAssertEqual(gone.status, 6, gone.stderr)
        XCTAssertTrue(gone.stderr.contains("no longer served"), gone.stderr)
    }

    // MARK: Refused

    func testExpiredLinkIsRefusedAndNothingStored() throws {
        let sealed = try LinkMaker.seal(Data(#"{"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"urn:uuid:p1","resource":{"resourceType":"Patient","id":"p1","name":[{"family":"Curie","given":["Marie"]}],"birthDate":"1967-11-07"}}]}"#.utf8),
                                         contentType: "application/fhir+json")
        try sealed.jwe.write(to: host.root.appendingPathComponent("expired"))
        let link = LinkMaker.link(["url": hostBase + "/expired", "key": sealed.key, "flag": "U", "exp": Int(Date().timeIntervalSince1970) - 60])
        let before = snapshot()
        let result = try cli(["import", "--link", link])
        XCTAssertEqual(result.status, 5, result.stderr)
        XCTAssertTrue(result.stderr.contains("expired at"), result.stderr)
        XCTAssertEqual(snapshot(), before)
        // The same link without exp is taken: it was the date that refused it.
        let fresh = LinkMaker.link(["url": hostBase + "/expired", "key": sealed.key, "flag": "U"])
        let taken = try cli(["import", "--link", fresh])
        XCTAssertEqual(taken.status, 0, taken.stderr)
    }

    func testTamperedCiphertextOrWrongKeyIsRefusedAndNothingStored() throws {
        let sharer = try makeVault("sharer")
        try seed(sharer)
        let (link, id) = try shareOut(sharer)
        let file = host.root.appendingPathComponent(id)
        let original = try Data(contentsOf: file)
        var parts = String(decoding: original, as: UTF8.self).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var characters = Array(parts[3])
        characters[characters.count / 2] = characters[characters.count / 2] == "A" ? "B" : "A"
        parts[3] = String(characters)
        try Data(parts.joined(separator: ".").utf8).write(to: file)

        let before = snapshot()
        let changed = try cli(["import", "--link", link])
        XCTAssertEqual(changed.status, 7, changed.stderr)
        XCTAssertTrue(changed.stderr.contains("nothing was imported"), changed.stderr)
        XCTAssertEqual(snapshot(), before)

        // The file as written, under another key: refused alike.
        try original.write(to: file)
        let payload = try LinkMaker.payload(of: link)
        var other = payload
        other["key"] = try LinkMaker.seal(Data("x".utf8), contentType: "text/plain").key
        let wrongKey = try cli(["import", "--link", LinkMaker.link(other)])
        XCTAssertEqual(wrongKey.status, 7, wrongKey.stderr)
        XCTAssertEqual(snapshot(), before)

        // As written and with its own key, it imports: the refusals were for the changes.
        XCTAssertEqual(try cli(["import", "--link", link]).status, 0)
    }

    // MARK: Passcodes, against hreader serve --shares

    func testPasscodeLinkServedByHreaderRightWrongAndLocked() throws {
        try seed(nil)
        let served = try serve(["--shares"])
        defer { stop(served) }
        let code = try file("code.txt", "4711\n"), wrong = try file("wrong.txt", "1234\n")
        let created = try cli(["share", "create", "--patient", "1", "--passcode-file", code, "--base-url", served.base, "--label", "for Dr. Who",
                               "--json"])
        XCTAssertEqual(created.status, 0, created.stderr)
        let link = try XCTUnwrap(try json(created)["link"] as? String)
        XCTAssertEqual(try LinkMaker.payload(of: link)["flag"] as? String, "P")

        let receiver = try makeVault("receiver")
        let missing = try cli(["import", "--link", link], vault: receiver)
        XCTAssertEqual(missing.status, 3, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("--passcode-file"), missing.stderr)

        let refused = try cli(["import", "--link", link, "--passcode-file", wrong], vault: receiver)
        XCTAssertEqual(refused.status, 3, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("4 attempts remain"), refused.stderr)
        XCTAssertEqual(try facts(in: receiver), [])

        let taken = try cli(["import", "--link", link, "--passcode-file", code], vault: receiver)
        XCTAssertEqual(taken.status, 0, taken.stderr)
        XCTAssertEqual(try facts(in: receiver), try facts(in: nil))

        // Without embeddedLengthMax the file comes by location, short-lived and only for this link.
        let id = String(try XCTUnwrap(URL(string: try XCTUnwrap(try LinkMaker.payload(of: link)["url"] as? String))).lastPathComponent)
        let manifest = try RawHTTP.send(port: served.port, method: "POST", path: "/shl/\(id)", host: served.authority,
                                        headers: [("Content-Type", "application/json")], body: Data(#"{"recipient":"test","passcode":"4711"}"#.utf8))
        XCTAssertEqual(manifest.status, 200, manifest.body)
        let files = (try JSONSerialization.jsonObject(with: Data(manifest.body.utf8)) as? [String: Any])?["files"] as? [[String: Any]]
        let location = try XCTUnwrap(files?.first?["location"] as? String)
        let fetched = try RawHTTP.send(port: served.port, method: "GET", path: String(location.dropFirst(served.base.count)), host: served.authority)
        XCTAssertEqual(fetched.status, 200)
        XCTAssertEqual(fetched.body.split(separator: ".", omittingEmptySubsequences: false).count, 5)
        let forged = try RawHTTP.send(port: served.port, method: "GET", path: "/shl/\(id)/file/AAAA", host: served.authority)
        XCTAssertEqual(forged.status, 404)

        // Four more wrong tries lock it; then even the right passcode is refused.
        for remaining in [3, 2, 1, 0] {
            let again = try cli(["import", "--link", link, "--passcode-file", wrong], vault: receiver)
            XCTAssertEqual(again.status, 3, again.stderr)
            XCTAssertTrue(again.stderr.contains(remaining == 0 ? "locked" : "\(remaining) attempt"), again.stderr)
        }
        let locked = try cli(["import", "--link", link, "--passcode-file", code], vault: receiver)
        XCTAssertEqual(locked.status, 3, locked.stderr)
        XCTAssertTrue(locked.stderr.contains("locked"), locked.stderr)

        // Every access is in the sharer's audit log; the list says how many and that it is locked.
        let listed = try json(try cli(["share", "list", "--json"]))["shares"] as? [[String: Any]] ?? []
        XCTAssertEqual(listed.first?["passcode"] as? Bool, true)
        XCTAssertEqual(listed.first?["attempts_left"] as? Int, 0)
        XCTAssertGreaterThanOrEqual(listed.first?["accesses"] as? Int ?? 0, 2)
    }

    func testRevokedServedLinkAnswers404() throws {
        try seed(nil)
        let served = try serve(["--shares"])
        defer { stop(served) }
        let created = try json(try cli(["share", "create", "--patient", "1", "--base-url", served.base, "--json"]))
        let link = try XCTUnwrap(created["link"] as? String)
        let id = try XCTUnwrap((created["share"] as? [String: Any])?["id"] as? String)
        let receiver = try makeVault("receiver")
        XCTAssertEqual(try cli(["import", "--link", link], vault: receiver).status, 0)
        XCTAssertEqual(try cli(["share", "revoke", id]).status, 0)
        let gone = try cli(["import", "--link", link], vault: receiver)
        XCTAssertEqual(gone.status, 6, gone.stderr)
        let raw = try RawHTTP.send(port: served.port, method: "POST", path: "/shl/\(id)", host: served.authority,
                                   headers: [("Content-Type", "application/json")], body: Data(#"{"recipient":"test"}"#.utf8))
        XCTAssertEqual(raw.status, 404)
    }

    func testPasscodeWithOutDirectoryIsRefused() throws {
        try seed(nil)
        let code = try file("code.txt", "4711\n")
        let result = try cli(["share", "create", "--patient", "1", "--passcode-file", code, "--out", host.root.path, "--base-url", hostBase])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("serve --shares"), result.stderr)
    }

    /// A share's id is a file name and a command-line argument: never one that reads as an option
    /// (base64url starts with `-` once in 64; `share revoke -x…` was refused as an unknown option).
    func testAShareIDNeverStartsWithADash() throws {
        for _ in 0..<2_000 {
            let id = try OpenVault.newShareID()
            XCTAssertFalse(id.hasPrefix("-"), id)
            XCTAssertEqual(id.count, 43)
        }
    }

    // MARK: QR codes

    func succeeded(_ arguments: [String]) throws -> CLIResult {
        let result = try cli(arguments)
        XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
        return result
    }

    /// `--qr`: the PNG that libqrencode's modules make is read back by zbar as the link a phone opens
    /// (the viewer's, when given); the SVG holds the same modules; both owner-only, as the link is a key.
    func testShareCreateWritesTheLinksQRCodeThatZbarReadsBack() throws {
        try seed(nil)
        let png = workDir.appendingPathComponent("link.png"), svg = workDir.appendingPathComponent("link.svg")
        let created = try json(try succeeded(["share", "create", "--patient", "1", "--out", host.root.path, "--base-url", hostBase,
                                       "--viewer", "https://viewer.example.org/", "--qr", png.path, "--json"]))
        let viewerLink = try XCTUnwrap(created["viewer_link"] as? String)
        XCTAssertEqual(created["qr_file"] as? String, png.path)
        XCTAssertEqual(try zbar(png), [viewerLink])
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: png.path)[.posixPermissions] as? Int, 0o600)

        let plain = try json(try succeeded(["share", "create", "--patient", "1", "--out", host.root.path, "--base-url", hostBase,
                                     "--qr", svg.path, "--json"]))
        let link = try XCTUnwrap(plain["link"] as? String)
        let code = try QRCode(link)
        XCTAssertEqual(try darkModules(ofSVG: String(contentsOf: svg, encoding: .utf8)), Set((0..<code.size).flatMap { y in
            (0..<code.size).filter { x in code.isDark(x, y) }.map { x in [x + QRCode.margin, y + QRCode.margin] }
        }))
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: svg.path)[.posixPermissions] as? Int, 0o600)

        let refused = try cli(["share", "create", "--patient", "1", "--out", host.root.path, "--base-url", hostBase,
                               "--qr", workDir.appendingPathComponent("link.gif").path])
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains(".png or an .svg"), refused.stderr)
    }

    /// The QR code `share create --qr` wrote, photographed as it were: `import --file` reads the link
    /// in it (zbar in the sandboxed child) and imports what it carries.
    func testALinksQRCodeInAPictureImportsLikeTheLink() throws {
        try seed(nil)
        let png = workDir.appendingPathComponent("link.png")
        XCTAssertEqual(try cli(["share", "create", "--patient", "1", "--out", host.root.path, "--base-url", hostBase, "--qr", png.path]).status, 0)
        let receiver = try makeVault("receiver")
        let taken = try cli(["import", "--file", png.path], vault: receiver)
        XCTAssertEqual(taken.status, 0, taken.stderr)
        XCTAssertEqual(try facts(in: receiver), try facts(in: nil))
    }

    /// On a terminal the code is drawn under the link, two rows of modules a line; piped, only the link.
    func testShareCreateDrawsTheCodeOnATerminalOnly() throws {
        try seed(nil)
        let arguments = ["share", "create", "--patient", "1", "--out", host.root.path, "--base-url", hostBase, "--quiet"]
        let piped = try succeeded(arguments)
        XCTAssertEqual(piped.stdout.split(separator: "\n").count, 1, piped.stdout)
        XCTAssertFalse(piped.stdout.contains("█"))

        // util-linux's script(1) gives hreader a terminal for its standard output.
        let command = ([Self.binary.path] + withPassword(arguments)).map { "'\($0)'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        process.environment = environment([:])
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, text)
        let lines = text.split(whereSeparator: \.isNewline).map(String.init)
        let link = try XCTUnwrap(lines.first { $0.hasPrefix("shlink:/") }, text)
        let drawn = lines.filter { $0.contains(where: { "█▀▄".contains($0) }) }
        let side = try QRCode(link).sideWithMargin
        XCTAssertEqual(drawn.count, (side + 1) / 2, text)
        XCTAssertTrue(drawn.allSatisfy { $0.count == side }, text)
    }

    // MARK: The web view's Share page

    /// The patient page's Share button: a form that makes a served link (CSRF-checked), the page then
    /// showing it with its QR code; a second vault imports the link from this same server; Revoke ends it.
    func testTheWebSharePageMakesALinkAnotherVaultImportsAndRevokesIt() throws {
        try seed(nil)
        let served = try serve(["--shares"])
        defer { stop(served) }
        let session = try XCTUnwrap(try served.send("/?token=\(served.token)").header("Set-Cookie")).split(separator: ";")[0]
        let cookie = ("Cookie", String(session)), form = ("Content-Type", "application/x-www-form-urlencoded")
        let patientPage = try served.send("/patients/1", headers: [cookie]).body
        XCTAssertTrue(patientPage.contains("/patients/"), patientPage)
        XCTAssertTrue(patientPage.contains("share-link"), "the patient page has the Share button")
        let empty = try served.send("/patients/1/share", headers: [cookie])
        XCTAssertEqual(empty.status, 200, empty.body)
        let csrf = try XCTUnwrap(ServeTests.csrf(in: empty.body))
        let body = "label=For+Dr.+Lee&expires=7d&passcode=&base_url=\(FormEncoding.encode(served.base))"

        let forged = try served.send("POST", "/patients/1/share", headers: [cookie, form], body: Data(body.utf8))
        XCTAssertEqual(forged.status, 403, "no CSRF token, no link")
        XCTAssertEqual((try json(try cli(["share", "list", "--json"]))["shares"] as? [[String: Any]])?.count, 0)

        let made = try served.send("POST", "/patients/1/share", headers: [cookie, form], body: Data("csrf_token=\(csrf)&\(body)".utf8))
        XCTAssertEqual(made.status, 303, made.body)
        let page = try served.send("/patients/1/share", headers: [cookie]).body
        XCTAssertTrue(page.contains("<svg"), "the QR code, inline")
        XCTAssertTrue(page.contains("For Dr. Lee"), page)
        let link = try XCTUnwrap(page.range(of: "shlink:/").map { start in String(page[start.lowerBound...].prefix { $0 != "<" }) })
        XCTAssertEqual(try LinkMaker.payload(of: link)["label"] as? String, "For Dr. Lee")
        XCTAssertEqual(made.header("Location")?.hasSuffix("#share-" + (URL(string: try XCTUnwrap(try LinkMaker.payload(of: link)["url"] as? String))?
            .lastPathComponent ?? "?")), true, made.header("Location") ?? "")

        let receiver = try makeVault("receiver")
        let taken = try cli(["import", "--link", link], vault: receiver)
        XCTAssertEqual(taken.status, 0, taken.stderr)
        XCTAssertEqual(try facts(in: receiver), try facts(in: nil))

        let id = try XCTUnwrap(page.range(of: "id=\"share-").map { String(page[$0.upperBound...].prefix { $0 != "\"" }) })
        let revoked = try served.send("POST", "/patients/1/share/\(id)/revoke", headers: [cookie, form], body: Data("csrf_token=\(csrf)".utf8))
        XCTAssertEqual(revoked.status, 303, revoked.body)
        XCTAssertFalse(try served.send("/patients/1/share", headers: [cookie]).body.contains("shlink:/"), "a revoked link is no longer shown")
        let gone = try cli(["import", "--link", link], vault: try makeVault("late"))
        XCTAssertEqual(gone.status, 6, gone.stderr)
    }

    /// What zbarimg (zbar-tools, installed by `make deps`) reads in an image, one text per code.
    func zbar(_ image: URL) throws -> [String] {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/zbarimg") else {
            XCTFail("zbarimg is missing: run 'make deps' (zbar-tools)")
            return []
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/zbarimg")
        process.arguments = ["--quiet", "--raw", image.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(whereSeparator: \.isNewline).map(String.init)
    }

    /// The cells an SVG's `M x y h n v1 h-n z` runs cover.
    func darkModules(ofSVG svg: String) throws -> Set<[Int]> {
        let path = try XCTUnwrap(svg.range(of: " d=\"").map { svg[$0.upperBound...].prefix { $0 != "\"" } })
        var cells: Set<[Int]> = []
        for run in path.split(separator: "M") {
            let numbers = run.split(whereSeparator: { !$0.isNumber && $0 != "-" }).compactMap { Int($0) }
            guard numbers.count == 5, numbers[3] == 1, numbers[4] == -numbers[2] else { XCTFail("odd run \(run)"); continue }
            for x in numbers[0]..<(numbers[0] + numbers[2]) { cells.insert([x, numbers[1]]) }
        }
        return cells
    }

    // MARK: A link carrying SMART Health Cards

    func testLinkCarryingHealthCardIsVerifiedLikeACard() throws {
        let key = try IssuerKeyPair(in: workDir, name: "issuer")
        let iss = "http://127.0.0.1:\(host.port)/issuer"
        try host.publish(keys: [key])
        try ok(withPassword(["issuers", "add", iss, "--name", "Test Clinic"]))
        let card = try HealthCardMaker.card(iss: iss, key: key, bundle: HealthCardMaker.immunizations(family: "Hopper", doses: 2))
        func cardLink(_ jws: String, name: String) throws -> String {
            let content = try JSONSerialization.data(withJSONObject: ["verifiableCredential": [jws]])
            let sealed = try LinkMaker.seal(content, contentType: "application/smart-health-card")
            try sealed.jwe.write(to: host.root.appendingPathComponent(name))
            return LinkMaker.link(["url": hostBase + "/" + name, "key": sealed.key, "flag": "U", "label": "Vaccinations"])
        }
        // A card changed by one character, sealed properly: the link decrypts, the card is refused as with --file.
        var parts = card.split(separator: ".").map(String.init)
        var characters = Array(parts[1])
        characters[characters.count / 2] = characters[characters.count / 2] == "A" ? "B" : "A"
        parts[1] = String(characters)
        let before = snapshot()
        let changed = try cli(["import", "--link", try cardLink(parts.joined(separator: "."), name: "changed")])
        XCTAssertEqual(changed.status, 7, changed.stderr)
        XCTAssertEqual(snapshot(), before)

        let result = try cli(["import", "--link", try cardLink(card, name: "card")])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("1 verified"), result.stdout)
        let patients = try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]] ?? []
        let entries = try json(try cli(["entries", "list", "--patient", "\(patients.first?["id"] ?? 0)", "--json"]))["entries"] as? [[String: Any]] ?? []
        XCTAssertEqual(entries.count, 2)
        for entry in entries {
            XCTAssertEqual((entry["verification"] as? [String: Any])?["status"] as? String, "verified", "\(entry)")
            XCTAssertEqual((entry["verification"] as? [String: Any])?["issuer"] as? String, "Test Clinic")
        }
    }

    // MARK: share create --serve

    /// Starts `share create --serve` with `extra` and waits for the link it prints first.
    func shareServing(_ extra: [String]) throws -> (running: Running, link: String) {
        let running = try start(withPassword(["share", "create", "--patient", "1", "--serve"] + extra), env: ["TZ": "UTC"])
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let out = (try? String(contentsOf: running.out, encoding: .utf8)) ?? ""
            if let first = out.split(separator: "\n").first, out.contains("\n") { return (running, String(first)) }
            if !running.process.isRunning {
                let result = running.finish()
                XCTFail("share create --serve stopped (\(result.status)): \(result.stderr)")
                throw NSError(domain: "share", code: Int(result.status))
            }
            usleep(20_000)
        }
        kill(running.process.processIdentifier, SIGKILL)
        throw NSError(domain: "share", code: -1, userInfo: [NSLocalizedDescriptionKey: "share create --serve printed no link within 60 s"])
    }

    func testShareCreateServeServesAPasscodeLinkUntilStopped() throws {
        try seed(nil)
        let code = try file("code.txt", "4711\n"), wrong = try file("wrong.txt", "1234\n")
        let (running, link) = try shareServing(["--passcode-file", code, "--label", "for Dr. Who"])
        let payload = try LinkMaker.payload(of: link)
        XCTAssertEqual(payload["flag"] as? String, "P")
        XCTAssertEqual(payload["label"] as? String, "for Dr. Who")
        let url = try XCTUnwrap(URL(string: try XCTUnwrap(payload["url"] as? String)))
        XCTAssertEqual(url.host, "127.0.0.1")
        XCTAssertTrue(url.path.hasPrefix("/shl/"), url.path)

        let receiver = try makeVault("receiver")
        let refused = try cli(["import", "--link", link, "--passcode-file", wrong], vault: receiver)
        XCTAssertEqual(refused.status, 3, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("4 attempts remain"), refused.stderr)
        let taken = try cli(["import", "--link", link, "--passcode-file", code], vault: receiver)
        XCTAssertEqual(taken.status, 0, taken.stderr)
        XCTAssertEqual(try facts(in: receiver), try facts(in: nil))
        // Only the link is served: the vault's web view is not there, with or without a token.
        let other = try RawHTTP.send(port: url.port!, method: "GET", path: "/", host: "127.0.0.1:\(url.port!)")
        XCTAssertNotEqual(other.status, 200)

        // SIGTERM stops it; the share stays, its accesses counted.
        kill(running.process.processIdentifier, SIGTERM)
        let finished = running.finish()
        XCTAssertEqual(finished.status, 0, finished.stderr)
        let listed = try json(try cli(["share", "list", "--json"]))["shares"] as? [[String: Any]] ?? []
        XCTAssertEqual(listed.count, 1)
        XCTAssertGreaterThanOrEqual(listed.first?["accesses"] as? Int ?? 0, 1)
        XCTAssertEqual(try cli(["import", "--link", link, "--passcode-file", code], vault: receiver).status, 6, "nothing serves it now")
    }

    func testShareCreateServeRefusesWhatCannotBeServed() throws {
        try seed(nil)
        let out = try cli(["share", "create", "--patient", "1", "--serve", "--out", host.root.path, "--base-url", hostBase])
        XCTAssertEqual(out.status, 2, out.stderr)
        let long = try cli(["share", "create", "--patient", "1", "--serve", "--label", String(repeating: "x", count: 81)])
        XCTAssertEqual(long.status, 2, long.stderr)
        let nobody = try cli(["share", "create", "--patient", "99", "--serve"])
        XCTAssertNotEqual(nobody.status, 0)
        XCTAssertEqual((try json(try cli(["share", "list", "--json"]))["shares"] as? [[String: Any]] ?? []).count, 0)
    }

    // MARK: The sample server's links

    func testImportsAPasscodeLinkFromTheSampleServer() throws {
        let code = try file("code.txt", "sesame\n"), wrong = try file("wrong.txt", "guess\n")
        for locationOnly in [false, true] {
            let server = try SampleServer(["--patients", "2", "--shl", "--shl-passcode-file", code] + (locationOnly ? ["--shl-location-only"] : []),
                                          workDir: workDir)
            defer { server.stop() }
            let links = try server.json("/shl/links")["links"] as? [[String: Any]] ?? []
            XCTAssertEqual(links.count, 2)
            let link = try XCTUnwrap(links.first?["link"] as? String)
            XCTAssertEqual(try LinkMaker.payload(of: link)["flag"] as? String, "P")

            let receiver = try makeVault("receiver-\(locationOnly)")
            let refused = try cli(["import", "--link", link, "--passcode-file", wrong], vault: receiver)
            XCTAssertEqual(refused.status, 3, refused.stderr)
            XCTAssertTrue(refused.stderr.contains("4 attempts remain"), refused.stderr)
            XCTAssertEqual(try facts(in: receiver), [])
            let taken = try cli(["import", "--link", link, "--passcode-file", code], vault: receiver)
            XCTAssertEqual(taken.status, 0, taken.stderr)
            let facts = try facts(in: receiver)
            XCTAssertEqual(facts.filter { $0.hasPrefix("patient ") }.count, 1, "\(facts)")
            XCTAssertGreaterThan(facts.count, 5, "\(facts)")
        }
    }

    func testSampleServerManifestEmbedsWhatFitsAndCountsWrongPasscodes() throws {
        let code = try file("code.txt", "sesame\n")
        let server = try SampleServer(["--patients", "1", "--shl", "--shl-passcode-file", code], workDir: workDir)
        defer { server.stop() }
        let link = try XCTUnwrap((try server.json("/shl/links")["links"] as? [[String: Any]])?.first?["link"] as? String)
        let path = try XCTUnwrap(URL(string: try XCTUnwrap(try LinkMaker.payload(of: link)["url"] as? String))).path
        func post(_ body: String) throws -> (status: Int, object: [String: Any]) {
            let (status, data) = try server.request(path, method: "POST", body: Data(body.utf8), headers: ["Content-Type": "application/json"])
            return (status, (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:])
        }
        XCTAssertEqual(try post(#"{"passcode":"sesame"}"#).status, 400, "a recipient is required")
        let embedded = try post(#"{"recipient":"test","passcode":"sesame","embeddedLengthMax":10000000}"#)
        XCTAssertEqual(embedded.status, 200)
        XCTAssertNotNil((embedded.object["files"] as? [[String: Any]])?.first?["embedded"] as? String)
        let located = try post(#"{"recipient":"test","passcode":"sesame","embeddedLengthMax":10}"#)
        let location = try XCTUnwrap((located.object["files"] as? [[String: Any]])?.first?["location"] as? String)
        let file = try server.request(String(location.dropFirst(server.base.absoluteString.count)))
        XCTAssertEqual(file.status, 200)
        XCTAssertEqual(String(decoding: file.body, as: UTF8.self).split(separator: ".", omittingEmptySubsequences: false).count, 5)
        for remaining in [4, 3, 2, 1, 0, 0] {
            let wrong = try post(#"{"recipient":"test","passcode":"nope"}"#)
            XCTAssertEqual(wrong.status, 401)
            XCTAssertEqual(wrong.object["remainingAttempts"] as? Int, remaining)
        }
        XCTAssertEqual(try post(#"{"recipient":"test","passcode":"sesame"}"#).status, 401, "locked")
        XCTAssertEqual(try post(#"{"recipient":"test"}"#).status, 401)
        XCTAssertEqual(try server.request("/shl/unknown", method: "POST", body: Data(#"{"recipient":"t"}"#.utf8)).status, 404)
    }

    func testMalformedLinksAreBadInput() throws {
        for text in ["shlink:/not-base64!", "https://viewer.example.org/#nothing", "shlink:/" + Tools.base64url(Data(#"{"url":"https://x.org/m"}"#.utf8)),
                     LinkMaker.link(["url": "https://x.org/m", "key": String(repeating: "A", count: 43), "flag": "PU"])] {
            let result = try cli(["import", "--link", text])
            XCTAssertEqual(result.status, 5, "\(text): \(result.stderr)")
        }
    }
}

/// Links and their files made outside hreader: the JWE sealed by Python's `cryptography`
/// (AES-256-GCM, alg dir, zip DEF), the payload written here.
enum LinkMaker {
    static let sealer = """
        import sys, os, json, base64, zlib
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
        key = os.urandom(32); iv = os.urandom(12)
        header = b64(json.dumps({"alg": "dir", "enc": "A256GCM", "cty": sys.argv[1], "zip": "DEF"}).encode())
        c = zlib.compressobj(9, zlib.DEFLATED, -15); body = c.compress(sys.stdin.buffer.read()) + c.flush()
        sealed = AESGCM(key).encrypt(iv, body, header.encode())
        print(b64(key)); print(".".join([header, "", b64(iv), b64(sealed[:-16]), b64(sealed[-16:])]))
        """

    static func seal(_ content: Data, contentType: String) throws -> (key: String, jwe: Data) {
        let out = String(decoding: try Tools.run("/usr/bin/env", ["python3", "-c", sealer, contentType], input: content), as: UTF8.self)
        let lines = out.split(separator: "\n").map(String.init)
        return (lines[0], Data(lines[1].utf8))
    }

    static func link(_ payload: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])) ?? Data()
        return "shlink:/" + Tools.base64url(data)
    }

    static func payload(of link: String) throws -> [String: Any] {
        var text = String(link.dropFirst("shlink:/".count)).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: try XCTUnwrap(Data(base64Encoded: text))) as? [String: Any])
    }
}
