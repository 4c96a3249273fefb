import Foundation
import HReaderKit
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// SMART Health Cards received (issue 37, docs/sharing.md): cards made here with keys OpenSSL's
/// command line generates and signs with, an issuer served by a real HTTP server on 127.0.0.1,
/// and the real hreader reading them.
/// A test case with an issuer: its key made with OpenSSL's command line and its jwks.json served on
/// 127.0.0.1 (not yet published when `publishesKey` is false: the test publishes what it needs).
class IssuerTestCase: ServerCLITestCase {
    var issuerServer: IssuerServer!
    var key: IssuerKeyPair!

    override func setUpWithError() throws {
        try super.setUpWithError()
        issuerServer = try IssuerServer(root: workDir.appendingPathComponent("www"))
        key = try IssuerKeyPair(in: workDir, name: "issuer")
        if publishesKey { try issuerServer.publish(keys: [key]) }
    }

    override func tearDownWithError() throws {
        issuerServer?.stop()
        try super.tearDownWithError()
    }

    var publishesKey: Bool { true }
}

final class HealthCardTests: IssuerTestCase {

    var iss: String { issuerServer.iss }

    func entries() throws -> [[String: Any]] {
        let patients = try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]] ?? []
        return try patients.flatMap { patient in
            try json(try cli(["entries", "list", "--patient", "\(patient["id"]!)", "--json"]))["entries"] as? [[String: Any]] ?? []
        }
    }

    func cardFile(_ cards: [String], name: String = "vaccination.smart-health-card") throws -> String {
        let data = try JSONSerialization.data(withJSONObject: ["verifiableCredential": cards])
        return try file(name, String(decoding: data, as: UTF8.self))
    }

    // MARK: Verified, untrusted, unverified

    func testCardFromTrustedIssuerIsVerifiedAndImported() throws {
        try ok(withPassword(["issuers", "add", iss, "--name", "Test Clinic"]))
        let card = try HealthCardMaker.card(iss: iss, key: key, bundle: HealthCardMaker.immunizations(family: "Lovelace", doses: 2))
        let path = try cardFile([card])
        let result = try cli(["import", "--file", path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("1 verified"), result.stdout)

        let found = try entries()
        XCTAssertEqual(found.count, 2)
        for entry in found {
            XCTAssertEqual(entry["type"] as? String, "immunization")
            let verification = try XCTUnwrap(entry["verification"] as? [String: Any], "\(entry)")
            XCTAssertEqual(verification["status"] as? String, "verified")
            XCTAssertEqual(verification["iss"] as? String, iss)
            XCTAssertEqual(verification["issuer"] as? String, "Test Clinic")
            XCTAssertEqual(verification["kid"] as? String, key.kid)
            XCTAssertNotNil(verification["verified_at"] as? String)
        }
        let patients = try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]] ?? []
        XCTAssertEqual(patients.first?["last_name"] as? String, "Lovelace")
        XCTAssertEqual(patients.first?["birth_date"] as? String, "1985-12-10")

        let shown = try json(try cli(["entries", "show", "\(found[0]["id"]!)", "--json"]))
        XCTAssertEqual(((shown["entry"] as? [String: Any])?["verification"] as? [String: Any])?["status"] as? String, "verified")
        XCTAssertTrue(try cli(["entries", "show", "\(found[0]["id"]!)"]).stdout.contains("Test Clinic"))

        // The same card again changes nothing: the same patient, the same entries.
        let again = try cli(["import", "--file", path, "--json"])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(try entries().count, 2)
        XCTAssertEqual((try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]])?.count, 1)
    }

    func testCardFromIssuerNotTrustedIsStoredAsUntrusted() throws {
        let card = try HealthCardMaker.card(iss: iss, key: key, bundle: HealthCardMaker.immunizations(family: "Hopper", doses: 1))
        let result = try cli(["import", "--file", try cardFile([card])])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("not among your trusted"), result.stdout)
        let verification = try XCTUnwrap(try entries().first?["verification"] as? [String: Any])
        XCTAssertEqual(verification["status"] as? String, "untrusted-issuer")
        XCTAssertTrue(verification["issuer"] is NSNull, "\(verification)")
    }

    func testUnreachableIssuerRefusesTheCardUnlessUnverified() throws {
        issuerServer.stop()
        let card = try HealthCardMaker.card(iss: iss, key: key, bundle: HealthCardMaker.immunizations(family: "Curie", doses: 1))
        let path = try cardFile([card])
        let before = snapshot()
        let refused = try cli(["import", "--file", path])
        XCTAssertEqual(refused.status, 6, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--unverified"), refused.stderr)
        XCTAssertEqual(refused.stderr.split(separator: "\n").count, 1, refused.stderr)
        XCTAssertEqual(snapshot(), before)

        let taken = try cli(["import", "--file", path, "--unverified"])
        XCTAssertEqual(taken.status, 0, taken.stderr)
        let verification = try XCTUnwrap(try entries().first?["verification"] as? [String: Any])
        XCTAssertEqual(verification["status"] as? String, "unverified")
        XCTAssertEqual(verification["kid"] as? String, key.kid)
    }

    // MARK: Refused: changed, forged, revoked

    func testChangedByteIsRefusedAndVaultUnchanged() throws {
        try ok(withPassword(["issuers", "add", iss]))
        let card = try HealthCardMaker.card(iss: iss, key: key, bundle: HealthCardMaker.immunizations(family: "Noether", doses: 1))
        let parts = card.split(separator: ".").map(String.init)
        // One character changed in the payload, then in the signature (never the last, whose low bits may be padding).
        for (part, position) in [(1, parts[1].count / 2), (2, 10)] {
            var changed = parts
            var characters = Array(changed[part])
            characters[position] = characters[position] == "A" ? "B" : "A"
            changed[part] = String(characters)
            let before = snapshot()
            let result = try cli(["import", "--file", try cardFile([changed.joined(separator: ".")], name: "changed-\(part).smart-health-card")])
            XCTAssertEqual(result.status, 7, "part \(part): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("nothing was imported"), result.stderr)
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
            XCTAssertEqual(snapshot(), before, "part \(part) changed the vault")
        }
        // The card as issued is fine: the refusals were for the changes.
        XCTAssertEqual(try cli(["import", "--file", try cardFile([card])]).status, 0)
    }

    func testCardSignedWithAnotherKeyIsRefused() throws {
        try ok(withPassword(["issuers", "add", iss]))
        let other = try IssuerKeyPair(in: workDir, name: "other")
        let bundle = HealthCardMaker.immunizations(family: "Franklin", doses: 1)
        // Its own kid (a key the issuer does not publish), and the issuer's kid over another key's signature.
        let foreign = try HealthCardMaker.card(iss: iss, key: other, bundle: bundle)
        let impostor = try HealthCardMaker.card(iss: iss, key: other, bundle: bundle, kid: key.kid)
        for (name, card) in [("foreign", foreign), ("impostor", impostor)] {
            let result = try cli(["import", "--file", try cardFile([card], name: "\(name).smart-health-card")])
            XCTAssertEqual(result.status, 7, "\(name): \(result.stderr)")
        }
        XCTAssertEqual(try entries().count, 0)
    }

    func testRevokedCardIsRefused() throws {
        try ok(withPassword(["issuers", "add", iss]))
        let revoking = try IssuerKeyPair(in: workDir, name: "revoking")
        try issuerServer.publish(keys: [key, revoking], crlVersion: [revoking.kid: 2])
        let nbf = Int(Date().timeIntervalSince1970) - 3600
        try issuerServer.publishRevocationList(kid: revoking.kid, counter: 2, rids: ["revokedRid", "laterRid.\(nbf + 60)", "earlierRid.\(nbf - 60)"])
        func card(_ rid: String, _ family: String) throws -> String {
            try HealthCardMaker.card(iss: iss, key: revoking, bundle: HealthCardMaker.immunizations(family: family, doses: 1), nbf: nbf, rid: rid)
        }
        for (rid, expected) in [("revokedRid", Int32(7)), ("laterRid", 7), ("earlierRid", 0), ("goodRid", 0)] {
            let result = try cli(["import", "--file", try cardFile([try card(rid, "Family\(rid)")], name: "\(rid).smart-health-card")])
            XCTAssertEqual(result.status, expected, "\(rid): \(result.stderr)")
            if expected == 7 { XCTAssertTrue(result.stderr.contains("revoked"), result.stderr) }
        }
        XCTAssertEqual(try entries().count, 2)
    }

    func testOneRefusedCardRefusesTheWholeFile() throws {
        try ok(withPassword(["issuers", "add", iss]))
        let good = try HealthCardMaker.card(iss: iss, key: key, bundle: HealthCardMaker.immunizations(family: "Meitner", doses: 1))
        let other = try IssuerKeyPair(in: workDir, name: "other")
        let forged = try HealthCardMaker.card(iss: iss, key: other, bundle: HealthCardMaker.immunizations(family: "Meitner", doses: 2), kid: key.kid)
        let result = try cli(["import", "--file", try cardFile([good, forged])])
        XCTAssertEqual(result.status, 7, result.stderr)
        XCTAssertTrue(result.stderr.contains("card 2 of 2"), result.stderr)
        XCTAssertEqual((try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]])?.count, 0)
    }

    func testOversizedPayloadIsRefusedWithBoundedMemory() throws {
        // 256 MiB of one letter in the Patient's name: a few hundred KiB deflated.
        let card = try HealthCardMaker.card(iss: iss, key: key, bundle: HealthCardMaker.immunizations(family: "Bomb", doses: 1),
                                            padding: 256 << 20)
        XCTAssertLessThan(card.utf8.count, 2 << 20)
        let path = try cardFile([card])
        let (result, peakMB) = try hreaderMeasuringMemory(withPassword(["import", "--file", path]), env: ["TZ": "UTC"])
        XCTAssertEqual(result.status, 7, result.stderr)
        XCTAssertTrue(result.stderr.contains("inflates to more than"), result.stderr)
        XCTAssertLessThan(peakMB, 120, "peak memory \(peakMB) MB: the payload was inflated past its limit")
    }

    // MARK: QR contents

    func testChunkedQRTextIsReassembled() throws {
        try ok(withPassword(["issuers", "add", iss]))
        let chunked = try HealthCardMaker.card(iss: iss, key: key, bundle: HealthCardMaker.immunizations(family: "Johnson", doses: 3))
        let single = try HealthCardMaker.card(iss: iss, key: key, bundle: HealthCardMaker.immunizations(family: "Vaughan", doses: 1))
        let chunks = HealthCardMaker.qrChunks(chunked, count: 3)
        // Scanned out of order, one card whole between the chunks.
        let text = [chunks[1], HealthCardMaker.qrChunks(single, count: 1)[0], chunks[2], chunks[0]].joined(separator: "\n") + "\n"
        let result = try cli(["import", "--file", try file("scanned.txt", text)])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("2 verified"), result.stdout)
        XCTAssertEqual(try entries().count, 4)

        let missing = try cli(["import", "--file", try file("missing.txt", chunks[0] + "\n" + chunks[2] + "\n")])
        XCTAssertEqual(missing.status, 5, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("lacks chunk 2 of 3"), missing.stderr)
    }

    /// A card's QR code as a photo or a scan brings it: a PNG, and a PDF page holding the picture, each
    /// read in the sandboxed child (netpbm or poppler, then zbar); a forged card in a picture is refused
    /// as its text is, and a picture without a card says so.
    func testCardsInAPictureOrAPDFPageAreReadFromTheirQRCodes() throws {
        try ok(withPassword(["issuers", "add", iss]))
        let card = try HealthCardMaker.card(iss: iss, key: key, bundle: HealthCardMaker.immunizations(family: "Lovelace", doses: 2))
        let code = try QRCode(HealthCardMaker.qrChunks(card, count: 1)[0])
        let fromPicture = try cli(["import", "--file", try write("card.png", Data(code.png(scale: 4)))])
        XCTAssertEqual(fromPicture.status, 0, fromPicture.stderr)
        XCTAssertTrue(fromPicture.stdout.contains("1 verified"), fromPicture.stdout)
        XCTAssertEqual(try entries().count, 2)

        // The same card on a PDF page (a picture of grey pixels, no text): read, and nothing new stored.
        let scale = 4, side = code.sideWithMargin * scale
        var pixels = [UInt8](repeating: 255, count: side * side)
        for y in 0..<side { for x in 0..<side where code.isDark(x / scale - QRCode.margin, y / scale - QRCode.margin) { pixels[y * side + x] = 0 } }
        let page = "q 288 0 0 288 150 400 cm /Im0 Do Q"
        let pdf = DocumentTextExtractionTests.pdf([
            Data("<< /Type /Catalog /Pages 2 0 R >>".utf8), Data("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".utf8),
            Data("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>".utf8),
            Data("<< /Length \(page.utf8.count) >>\nstream\n\(page)\nendstream".utf8),
            Data("<< /Type /XObject /Subtype /Image /Width \(side) /Height \(side) /ColorSpace /DeviceGray /BitsPerComponent 8 /Length \(pixels.count) >>\nstream\n".utf8)
                + Data(pixels) + Data("\nendstream".utf8),
        ])
        let fromPDF = try cli(["import", "--file", try write("card.pdf", pdf)])
        XCTAssertEqual(fromPDF.status, 0, fromPDF.stderr)
        XCTAssertTrue(fromPDF.stdout.contains("1 verified"), fromPDF.stdout)
        XCTAssertEqual(try entries().count, 2, "the same card again: nothing new")

        // A changed signature in a picture: refused, exit 7, nothing stored.
        var parts = card.split(separator: ".").map(String.init)
        parts[2] = String(parts[2].reversed())
        let forged = try cli(["import", "--file", try write("forged.png", Data(try QRCode(HealthCardMaker.qrChunks(parts.joined(separator: "."), count: 1)[0]).png(scale: 4)))])
        XCTAssertEqual(forged.status, 7, forged.stderr)

        // A picture whose code is something else, and a picture that is not one.
        let none = try cli(["import", "--file", try write("menu.png", Data(try QRCode("https://restaurant.example/menu").png()))])
        XCTAssertEqual(none.status, 5, none.stderr)
        XCTAssertTrue(none.stderr.contains("no SMART Health Card or Link QR code"), none.stderr)
        let broken = try cli(["import", "--file", try write("broken.png", Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0x41, count: 64)))])
        XCTAssertEqual(broken.status, 5, broken.stderr)
        XCTAssertTrue(broken.stderr.contains("cannot read its QR codes"), broken.stderr)
        // A PNG whose header asks for 65,535 × 65,535 pixels: refused before any decoder sees it.
        var bomb = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]) + Data("IHDR".utf8)
        bomb += Data([0, 0, 0xFF, 0xFF, 0, 0, 0xFF, 0xFF, 8, 0, 0, 0, 0]) + Data(repeating: 0, count: 64)
        let huge = try cli(["import", "--file", try write("bomb.png", bomb)])
        XCTAssertEqual(huge.status, 5, huge.stderr)
        XCTAssertTrue(huge.stderr.contains("65535 × 65535 pixels"), huge.stderr)
        XCTAssertEqual(try entries().count, 2)
    }

    func write(_ name: String, _ data: Data) throws -> String {
        let url = workDir.appendingPathComponent(name)
        try data.write(to: url)
        return url.path
    }

    // MARK: issuers

    func testIssuersCommands() throws {
        try ok(withPassword(["issuers", "add", iss + "/", "--name", "Test Clinic"]))
        let jwks = try file("pinned.json", try issuerServer.jwksText(keys: [key]))
        try ok(withPassword(["issuers", "add", "https://pinned.example.org", "--jwks", jwks]))
        let directory = try file("directory.json", """
            {"participating_issuers": [{"iss": "https://state.example.gov/creds", "name": "State IIS"},
                                       {"iss": "https://pinned.example.org", "name": "Pinned Lab"}]}
            """)
        XCTAssertTrue(try ok(withPassword(["issuers", "import-directory", directory])).stderr.contains("1 new issuer"))
        let listed = try json(try cli(["issuers", "list", "--json"]))["issuers"] as? [[String: Any]] ?? []
        XCTAssertEqual(listed.compactMap { $0["iss"] as? String }, ["http://127.0.0.1:\(issuerServer.port)/issuer", "https://pinned.example.org",
                                                                    "https://state.example.gov/creds"])
        let pinned = try XCTUnwrap(listed.first { $0["iss"] as? String == "https://pinned.example.org" })
        XCTAssertEqual(pinned["pinned"] as? Bool, true)
        XCTAssertEqual(pinned["name"] as? String, "Pinned Lab")
        XCTAssertEqual((pinned["keys"] as? [[String: Any]])?.first?["kid"] as? String, key.kid)

        try ok(withPassword(["issuers", "remove", "https://state.example.gov/creds"]))
        XCTAssertEqual(try cli(["issuers", "remove", "https://state.example.gov/creds"]).status, 2)
        XCTAssertEqual(try cli(["issuers", "add", "http://issuer.example.org"]).status, 2, "plain http to another host")
        XCTAssertEqual((try json(try cli(["issuers", "list", "--json"]))["issuers"] as? [[String: Any]])?.count, 2)
        // Written inside the encrypted vault only.
        assertNoPlaintext(["pinned.example.org", "Pinned Lab", key.kid])
    }

    func testPinnedKeysVerifyWithoutTheIssuerServer() throws {
        let jwks = try file("pinned.json", try issuerServer.jwksText(keys: [key]))
        try ok(withPassword(["issuers", "add", iss, "--jwks", jwks, "--name", "Pinned"]))
        issuerServer.stop()
        let card = try HealthCardMaker.card(iss: iss, key: key, bundle: HealthCardMaker.immunizations(family: "Lamarr", doses: 1))
        let result = try cli(["import", "--file", try cardFile([card])])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual((try entries().first?["verification"] as? [String: Any])?["status"] as? String, "verified")
        // Another key of the same issuer is not pinned: refused, never fetched.
        let other = try IssuerKeyPair(in: workDir, name: "other")
        let unpinned = try HealthCardMaker.card(iss: iss, key: other, bundle: HealthCardMaker.immunizations(family: "Lamarr", doses: 2))
        XCTAssertEqual(try cli(["import", "--file", try cardFile([unpinned], name: "other.smart-health-card")]).status, 7)
    }
}

// MARK: - Making cards (independently of hreader: OpenSSL's command line, Python's zlib)

/// An issuer's P-256 key, generated by `openssl ecparam`.
struct IssuerKeyPair {
    let privateKeyPath: String
    let x: String
    let y: String
    /// The RFC 7638 thumbprint, computed with `openssl dgst`.
    let kid: String

    init(in directory: URL, name: String) throws {
        privateKeyPath = directory.appendingPathComponent("\(name)-key.pem").path
        try Tools.run("/usr/bin/openssl", ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", privateKeyPath])
        let der = try Tools.run("/usr/bin/openssl", ["ec", "-in", privateKeyPath, "-pubout", "-outform", "DER"])
        let point = Array(der.suffix(64))
        x = Tools.base64url(Data(point[0..<32]))
        y = Tools.base64url(Data(point[32..<64]))
        let canonical = "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"\(x)\",\"y\":\"\(y)\"}"
        kid = Tools.base64url(try Tools.run("/usr/bin/openssl", ["dgst", "-sha256", "-binary"], input: Data(canonical.utf8)))
    }

    func jwk(crlVersion: Int? = nil) -> [String: Any] {
        var jwk: [String: Any] = ["kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid, "x": x, "y": y]
        if let crlVersion { jwk["crlVersion"] = crlVersion }
        return jwk
    }

    /// The raw r || s ES256 signature of `message` (OpenSSL writes DER).
    func sign(_ message: Data) throws -> Data {
        let der = try Tools.run("/usr/bin/openssl", ["dgst", "-sha256", "-sign", privateKeyPath], input: message)
        // SEQUENCE { INTEGER r, INTEGER s }, each as short as it can be, with a leading zero when its top bit is set.
        var i = 2
        if der[1] & 0x80 != 0 { i += Int(der[1] & 0x7f) }
        func integer() -> Data {
            let length = Int(der[der.startIndex + i + 1])
            let value = der[(der.startIndex + i + 2)..<(der.startIndex + i + 2 + length)].drop { $0 == 0 }
            i += 2 + length
            return Data(repeating: 0, count: 32 - value.count) + value
        }
        return integer() + integer()
    }
}

enum HealthCardMaker {
    /// A card: a Patient (name and birth date only) and `doses` Immunizations, as issuers minify them.
    static func immunizations(family: String, doses: Int) -> [String: Any] {
        var entries: [[String: Any]] = [["fullUrl": "resource:0", "resource": [
            "resourceType": "Patient", "name": [["family": family, "given": ["Ada"]]], "birthDate": "1985-12-10"] as [String: Any]]]
        for dose in 0..<doses {
            entries.append(["fullUrl": "resource:\(dose + 1)", "resource": [
                "resourceType": "Immunization", "status": "completed",
                "vaccineCode": ["coding": [["system": "http://hl7.org/fhir/sid/cvx", "code": "208"]]],
                "patient": ["reference": "resource:0"], "occurrenceDateTime": "2021-0\(dose + 1)-01",
                "lotNumber": "LOT\(dose)"] as [String: Any]])
        }
        return ["resourceType": "Bundle", "type": "collection", "entry": entries]
    }

    /// The compact JWS of a card, signed with `key` (its header naming `kid`, by default the key's own).
    static func card(iss: String, key: IssuerKeyPair, bundle: [String: Any], kid: String? = nil, nbf: Int? = nil, rid: String? = nil,
                     padding: Int = 0) throws -> String {
        var vc: [String: Any] = ["type": ["https://smarthealth.cards#health-card", "https://smarthealth.cards#immunization"],
                                 "credentialSubject": ["fhirVersion": "4.0.1", "fhirBundle": bundle]]
        if let rid { vc["rid"] = rid }
        let claims: [String: Any] = ["iss": iss, "nbf": nbf ?? Int(Date().timeIntervalSince1970) - 60, "vc": vc]
        var payload = try JSONSerialization.data(withJSONObject: claims)
        if padding > 0 {
            // An extra member holding `padding` letters, spliced in as bytes (JSONSerialization of it would take long).
            payload.removeLast()
            payload += Data(",\"padding\":\"".utf8) + Data(repeating: UInt8(ascii: "a"), count: padding) + Data("\"}".utf8)
        }
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "zip": "DEF", "kid": kid ?? key.kid], options: [.sortedKeys])
        let deflated = try Tools.run("/usr/bin/env", ["python3", "-c",
            "import sys, zlib; c = zlib.compressobj(9, zlib.DEFLATED, -15); sys.stdout.buffer.write(c.compress(sys.stdin.buffer.read()) + c.flush())"],
            input: payload)
        let signingInput = Tools.base64url(header) + "." + Tools.base64url(deflated)
        return signingInput + "." + Tools.base64url(try key.sign(Data(signingInput.utf8)))
    }

    /// The QR contents of a card in `count` chunks (`shc:/` alone for one): each character as two digits, its code minus 45.
    static func qrChunks(_ jws: String, count: Int) -> [String] {
        let characters = Array(jws.utf8)
        let size = (characters.count + count - 1) / count
        return (0..<count).map { i in
            let piece = characters[(i * size)..<min(characters.count, (i + 1) * size)]
            let digits = piece.map { String(format: "%02d", Int($0) - 45) }.joined()
            return count == 1 ? "shc:/" + digits : "shc:/\(i + 1)/\(count)/" + digits
        }
    }
}

/// An issuer's web site: `python3 -m http.server` on 127.0.0.1 over a directory holding
/// `issuer/.well-known/jwks.json` and `issuer/.well-known/crl/KID.json`.
final class IssuerServer {
    let root: URL
    let process: Process
    let port: Int
    var iss: String { "http://127.0.0.1:\(port)/issuer" }

    init(root: URL) throws {
        self.root = root
        try FileManager.default.createDirectory(at: root.appendingPathComponent("issuer/.well-known/crl"), withIntermediateDirectories: true)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", root.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        var buffer = Data()
        let deadline = Date().addingTimeInterval(30)
        while !buffer.contains(0x0a), Date() < deadline, process.isRunning {
            buffer.append(pipe.fileHandleForReading.availableData)
        }
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        let line = String(decoding: buffer, as: UTF8.self)
        guard let range = line.range(of: "port "), let port = Int(line[range.upperBound...].prefix { $0.isNumber }) else {
            process.terminate()
            throw NSError(domain: "IssuerServer", code: 1, userInfo: [NSLocalizedDescriptionKey: "http.server did not start: \(line)"])
        }
        self.port = port
    }

    func jwksText(keys: [IssuerKeyPair], crlVersion: [String: Int] = [:]) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: ["keys": keys.map { $0.jwk(crlVersion: crlVersion[$0.kid]) }])
        return String(decoding: data, as: UTF8.self)
    }

    func publish(keys: [IssuerKeyPair], crlVersion: [String: Int] = [:]) throws {
        try Data(try jwksText(keys: keys, crlVersion: crlVersion).utf8).write(to: root.appendingPathComponent("issuer/.well-known/jwks.json"))
    }

    func publishRevocationList(kid: String, counter: Int, rids: [String]) throws {
        let data = try JSONSerialization.data(withJSONObject: ["kid": kid, "method": "rid", "ctr": counter, "rids": rids] as [String: Any])
        try data.write(to: root.appendingPathComponent("issuer/.well-known/crl/\(kid).json"))
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    deinit { stop() }
}

enum Tools {
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], input: Data? = nil) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe(), inputPipe = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
        try process.run()
        if let input {
            // Written on another thread: a large input would otherwise fill the pipe while the output does too.
            let handle = inputPipe.fileHandleForWriting
            let writer = Thread { handle.write(input); try? handle.close() }
            writer.start()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "Tools", code: Int(process.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: "\(executable) \(arguments.prefix(2).joined(separator: " ")) failed"])
        }
        return data
    }

    static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
