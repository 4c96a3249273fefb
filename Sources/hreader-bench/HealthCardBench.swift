import Foundation
import HReaderCrypto
import HReaderKit
import HReaderModel
import HReaderRecords
import HReaderStore

/// SMART Health Cards (issue 37): 1,000 cards, each its own file (a Patient and two Immunizations,
/// signed ES256 by an issuer whose key is pinned), verified and imported in process one by one,
/// against OpenSSL's ES256 verify alone over the same cards in the same run. The cards are signed by
/// the `openssl` command (the product only verifies), so making them is not measured.
func runHealthCardBenchmarks(scratch: URL, password: SecretBytes) throws {
    let count = Int(ProcessInfo.processInfo.environment["HREADER_BENCH_CARDS"] ?? "") ?? 1_000
    say("\n== SMART Health Cards: \(count) cards verified and imported, one file each ==")
    let directory = scratch.appendingPathComponent("cards")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let keyFile = directory.appendingPathComponent("issuer-key.pem")
    _ = try openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", keyFile.path])
    // The public key's SubjectPublicKeyInfo ends with 04 || x || y.
    let point = Array(try openssl(["ec", "-in", keyFile.path, "-pubout", "-outform", "DER"]).suffix(64))
    let x = Base64URL.encode(Array(point[0..<32])), y = Base64URL.encode(Array(point[32..<64]))
    let kid = JWKThumbprint.ellipticCurve(crv: "P-256", x: x, y: y)
    let iss = "https://issuer.example.org/creds"
    let jwks = directory.appendingPathComponent("jwks.json")
    try Data(#"{"keys":[{"kty":"EC","crv":"P-256","x":"\#(x)","y":"\#(y)","kid":"\#(kid)","use":"sig","alg":"ES256"}]}"#.utf8).write(to: jwks)

    let header = Base64URL.encode(Array(#"{"alg":"ES256","kid":"\#(kid)","zip":"DEF"}"#.utf8))
    let nbf = Int(Date().timeIntervalSince1970) - 3600
    var files: [URL] = [], signed: [(input: [UInt8], signature: [UInt8])] = []
    let make = try seconds {
        for i in 0..<count {
            let bundle = #"{"resourceType":"Bundle","type":"collection","entry":[{"fullUrl":"resource:0","resource":{"resourceType":"Patient","name":[{"family":"Lovelace","given":["Ada"]}],"birthDate":"1985-12-10"}},"#
                + (1...2).map { dose in
                    #"{"fullUrl":"resource:\#(dose)","resource":{"resourceType":"Immunization","status":"completed","vaccineCode":{"coding":[{"system":"http://hl7.org/fhir/sid/cvx","code":"208"}]},"patient":{"reference":"resource:0"},"occurrenceDateTime":"20\#(10 + i % 15)-0\#(dose)-\#(10 + i % 18)","lotNumber":"LOT\#(i)-\#(dose)"}}"#
                }.joined(separator: ",") + "]}"
            let claims = #"{"iss":"\#(iss)","nbf":\#(nbf),"vc":{"type":["https://smarthealth.cards#health-card","https://smarthealth.cards#immunization"],"credentialSubject":{"fhirVersion":"4.0.1","fhirBundle":\#(bundle)}}}"#
            let input = header + "." + Base64URL.encode(RawDeflate.deflate(Array(claims.utf8)))
            let signature = try rawSignature(fromDER: openssl(["dgst", "-sha256", "-sign", keyFile.path], input: Array(input.utf8)))
            let file = directory.appendingPathComponent("card-\(i).smart-health-card")
            try Data(#"{"verifiableCredential":["\#(input).\#(Base64URL.encode(signature))"]}"#.utf8).write(to: file)
            files.append(file)
            signed.append((Array(input.utf8), signature))
        }
    }
    row("  signing them (openssl dgst; not the product)", ms(make))

    let service = VaultService(vault: Vault(root: scratch.appendingPathComponent("cards-vault")))
    _ = try service.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
    let open = try service.open(.password(password))
    _ = try open.addIssuer(iss, name: "Bench issuer", jwks: jwks)
    let patient = try open.addPatient(NewPatient(firstName: "Ada", lastName: "Lovelace", birthDate: "1985-12-10"))
    var importWalls: [Double] = []
    for file in files {
        importWalls.append(try seconds { _ = try open.importFile(file, into: patient) })
    }
    let imported = try open.inDatabase { try EntryRepository($0).count(patientID: patient.id) }
    let total = importWalls.reduce(0, +)

    let key = try P256PublicKey(x: point[0..<32].map { $0 }, y: point[32..<64].map { $0 })
    var valid = 0
    let verifyAlone = try seconds {
        for card in signed where key.isValidSignature(card.signature, of: card.input) { valid += 1 }
    }
    row("  verify + import, per card (in process)", String(format: "%8.3f ms", total / Double(count) * 1000),
        String(format: "median %.3f ms; %.1f s for %d cards; %d entries in the vault", median(importWalls) * 1000, total, count, imported))
    row("  OpenSSL's ES256 verify alone, per card", String(format: "%8.3f ms", verifyAlone / Double(count) * 1000),
        String(format: "%d of %d valid; the import takes %.0fx the verify alone", valid, count, total / verifyAlone))
}

/// The `openssl` command.
private func openssl(_ arguments: [String], input: [UInt8] = []) throws -> [UInt8] {
    Array(try runTool("/usr/bin/openssl", arguments, input: Data(input)))
}

/// An ECDSA signature as DER (SEQUENCE of two INTEGERs) → the 64 bytes r || s that JWS uses.
private func rawSignature(fromDER der: [UInt8]) throws -> [UInt8] {
    var at = 2   // SEQUENCE tag and (short) length
    func integer() throws -> [UInt8] {
        guard at + 2 <= der.count, der[at] == 0x02 else { throw CocoaError(.coderReadCorrupt) }
        let length = Int(der[at + 1])
        var bytes = Array(der[(at + 2)..<(at + 2 + length)])
        at += 2 + length
        while bytes.count > 32, bytes.first == 0 { bytes.removeFirst() }
        return [UInt8](repeating: 0, count: 32 - bytes.count) + bytes
    }
    return try integer() + integer()
}
