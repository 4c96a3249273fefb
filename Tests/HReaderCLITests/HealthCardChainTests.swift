import Foundation
import XCTest

/// x5c certificate chains on SMART Health Card issuers' keys (issue 37, docs/sharing.md,
/// "Certificate chains"): certificate authorities and leaf certificates made here with OpenSSL's
/// command line, the issuer's jwks.json served on 127.0.0.1, the real hreader checking the chain.
final class HealthCardChainTests: IssuerTestCase {
    override var publishesKey: Bool { false }

    var iss: String { issuerServer.iss }

    /// A certificate authority: its key and self-signed certificate (PEM paths).
    func authority(_ name: String) throws -> (key: String, certificate: String) {
        let key = workDir.appendingPathComponent("\(name)-key.pem").path
        let certificate = workDir.appendingPathComponent("\(name).pem").path
        try Tools.run("/usr/bin/openssl", ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key])
        try Tools.run("/usr/bin/openssl", ["req", "-x509", "-new", "-key", key, "-subj", "/CN=\(name)", "-days", "30",
                                           "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign", "-out", certificate])
        return (key, certificate)
    }

    /// A leaf certificate for `subjectKey` (a PEM private key file), signed by `authority`, valid
    /// `days` days from now (negative: expired), with subjectAltName `URI:uri`; its DER in base64.
    func leaf(for subjectKey: String, by authority: (key: String, certificate: String), uri: String, days: Int = 30) throws -> String {
        let name = UUID().uuidString
        let request = workDir.appendingPathComponent("\(name).csr").path
        let extensions = try file("\(name).cnf", "subjectAltName=URI:\(uri)\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n")
        try Tools.run("/usr/bin/openssl", ["req", "-new", "-key", subjectKey, "-subj", "/CN=issuer", "-out", request])
        let der = try Tools.run("/usr/bin/openssl", ["x509", "-req", "-in", request, "-CA", authority.certificate, "-CAkey", authority.key,
                                                     "-CAcreateserial", "-days", "\(days)", "-extfile", extensions, "-outform", "DER"])
        return der.base64EncodedString()
    }

    /// Publishes the issuer's key with this x5c chain.
    func publish(x5c: [String]) throws {
        var jwk = key.jwk()
        jwk["x5c"] = x5c
        let data = try JSONSerialization.data(withJSONObject: ["keys": [jwk]])
        try data.write(to: issuerServer.root.appendingPathComponent("issuer/.well-known/jwks.json"))
    }

    func importCard(family: String) throws -> CLIResult {
        let card = try HealthCardMaker.card(iss: iss, key: key, bundle: HealthCardMaker.immunizations(family: family, doses: 1))
        let data = try JSONSerialization.data(withJSONObject: ["verifiableCredential": [card]])
        return try cli(["import", "--file", try file("\(family).smart-health-card", String(decoding: data, as: UTF8.self))])
    }

    func entryCount() throws -> Int {
        (try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]] ?? []).count
    }

    func testChainToTheGivenAnchorIsVerified() throws {
        let root = try authority("Registry CA")
        try ok(withPassword(["issuers", "add", iss, "--name", "State IIS", "--ca", root.certificate]))
        let listed = try json(try cli(["issuers", "list", "--json"]))["issuers"] as? [[String: Any]] ?? []
        XCTAssertEqual(listed.first?["trust_anchors"] as? Int, 1)
        try publish(x5c: [try leaf(for: key.privateKeyPath, by: root, uri: iss)])

        let result = try importCard(family: "Lovelace")
        XCTAssertEqual(result.status, 0, result.stderr)
        let patient = try XCTUnwrap((try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]])?.first)
        let entries = try json(try cli(["entries", "list", "--patient", "\(patient["id"]!)", "--json"]))["entries"] as? [[String: Any]] ?? []
        XCTAssertEqual((entries.first?["verification"] as? [String: Any])?["status"] as? String, "verified")
        XCTAssertFalse(result.stderr.contains("x5c"), result.stderr)
    }

    func testChainThatDoesNotValidateIsRefusedAndNothingStored() throws {
        let root = try authority("Registry CA")
        let stranger = try authority("Other CA")
        try ok(withPassword(["issuers", "add", iss, "--ca", root.certificate]))
        let otherKey = try IssuerKeyPair(in: workDir, name: "someone-else")
        let cases: [(String, String, String)] = [
            ("wrong subjectAltName", try leaf(for: key.privateKeyPath, by: root, uri: "https://impostor.example.org/issuer"), "subjectAltName"),
            ("expired leaf", try leaf(for: key.privateKeyPath, by: root, uri: iss, days: -1), "expired"),
            ("untrusted root", try leaf(for: key.privateKeyPath, by: stranger, uri: iss), "does not validate"),
            ("another key's certificate", try leaf(for: otherKey.privateKeyPath, by: root, uri: iss), "another key"),
        ]
        let before = snapshot()
        for (what, certificate, why) in cases {
            try publish(x5c: [certificate])
            let result = try importCard(family: "Hopper")
            XCTAssertEqual(result.status, 7, "\(what): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(why), "\(what): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("nothing was imported"), result.stderr)
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        }
        XCTAssertEqual(try entryCount(), 0)
        XCTAssertEqual(snapshot(), before, "a refused card leaves the vault as it was")

        // A chain through the stranger's CA validates once that CA is what the user trusts.
        try ok(withPassword(["issuers", "add", iss, "--ca", stranger.certificate]))
        try publish(x5c: [try leaf(for: key.privateKeyPath, by: stranger, uri: iss)])
        XCTAssertEqual(try importCard(family: "Hopper").status, 0)
    }

    func testChainWithoutAnchorsIsHeldToItsKeyAndIssuerOnly() throws {
        let root = try authority("Registry CA")
        try publish(x5c: [try leaf(for: key.privateKeyPath, by: root, uri: iss)])
        let result = try importCard(family: "Lamarr")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue((result.stdout + result.stderr).contains("x5c certificate chain was not validated"), result.stdout + result.stderr)

        // Even without anchors, a leaf for another issuer is refused.
        try publish(x5c: [try leaf(for: key.privateKeyPath, by: root, uri: "https://impostor.example.org")])
        XCTAssertEqual(try importCard(family: "Noether").status, 7)
    }

    func testTrustAnchorsThatAreNoCertificatesAreRefused() throws {
        let notPEM = try file("not-a-ca.pem", "hello\n")
        let result = try cli(["issuers", "add", iss, "--ca", notPEM])
        XCTAssertEqual(result.status, 5, result.stderr)
        XCTAssertTrue(result.stderr.contains("no PEM certificate"), result.stderr)
        let broken = try file("broken.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
        XCTAssertEqual(try cli(["issuers", "add", iss, "--ca", broken]).status, 5)
        XCTAssertEqual((try json(try cli(["issuers", "list", "--json"]))["issuers"] as? [[String: Any]])?.count, 0)
        // A directory of certificates: every .pem in it.
        let directory = workDir.appendingPathComponent("anchors")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in ["one", "two"] {
            let made = try authority(name)
            try FileManager.default.copyItem(atPath: made.certificate, toPath: directory.appendingPathComponent("\(name).pem").path)
        }
        try ok(withPassword(["issuers", "add", iss, "--ca", directory.path]))
        XCTAssertEqual((try json(try cli(["issuers", "list", "--json"]))["issuers"] as? [[String: Any]])?.first?["trust_anchors"] as? Int, 2)
    }
}
