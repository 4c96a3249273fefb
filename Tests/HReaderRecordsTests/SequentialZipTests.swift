import Foundation
@testable import HReaderRecords
import XCTest

/// A zip read in order from its bytes (a zip inside Garmin's export zip), against zips Python's
/// `zipfile` writes: with sizes in the headers, and streamed (sizes after each member's data, as a
/// writer that cannot seek back writes them), stored and deflated, damaged, truncated and a bomb.
final class SequentialZipTests: XCTestCase {
    private var scratch: URL!

    override func setUpWithError() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("seqzip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: scratch) }

    /// The bytes of a zip Python writes of `members` (name, text, stored?); `streamed` writes it
    /// through a pipe, so every member's sizes follow its data.
    private func zip(_ members: [(String, String, Bool)], streamed: Bool = false) throws -> [UInt8] {
        let out = scratch.appendingPathComponent("z.zip")
        let script = """
            import io, json, sys, zipfile
            members = json.load(open(sys.argv[2]))
            class Unseekable(io.RawIOBase):
                def __init__(self, f): self.f = f
                def writable(self): return True
                def write(self, b): return self.f.write(b)
            with open(sys.argv[1], 'wb') as f:
                target = Unseekable(f) if sys.argv[3] == '1' else f
                with zipfile.ZipFile(target, 'w') as z:
                    for name, text, stored in members:
                        z.writestr(zipfile.ZipInfo(name), text.encode(), compress_type=zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED)
            """
        let list = scratch.appendingPathComponent("members.json")
        try JSONSerialization.data(withJSONObject: members.map { [$0.0, $0.1, $0.2] as [Any] }).write(to: list)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, out.path, list.path, streamed ? "1" : "0"]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return [UInt8](try Data(contentsOf: out))
    }

    /// Every member, read `chunk` bytes at a time (so headers and data straddle the reads).
    private func read(_ bytes: [UInt8], chunk: Int, wanted: @escaping (String) -> Bool = { _ in true },
                      limits: SequentialZip.Limits = .init(memberBytes: 1 << 20, ratio: 250, members: 100)) throws -> [(String, String?)] {
        var position = 0
        var zip = SequentialZip(limits: limits) { target in
            let count = min(chunk, target.count, bytes.count - position)
            for i in 0..<count { target[i] = bytes[position + i] }
            position += count
            return count
        }
        var found: [(String, String?)] = []
        while let member = try zip.next(wanted: wanted) { found.append((member.name, member.bytes.map { String(decoding: $0, as: UTF8.self) })) }
        return found
    }

    private let members: [(String, String, Bool)] = [
        ("2026-03-01.fit", String(repeating: "heart rate 72 ", count: 400), false),
        ("notes/readme.txt", "not a FIT file", true),
        ("2026-03-02.FIT", String(repeating: "steps 1200 ", count: 300), true),
        ("empty.fit", "", false),
    ]

    func testMembersAreReadInOrderWithTheirSizesBeforeOrAfterTheirData() throws {
        for streamed in [false, true] {
            // A streaming writer deflates: the end of a stored member whose size follows it cannot be found in order.
            let members = streamed ? self.members.map { ($0.0, $0.1, false) } : self.members
            let bytes = try zip(members, streamed: streamed)
            for chunk in [1, 7, 4096, 1 << 20] {
                let found = try read(bytes, chunk: chunk, wanted: { $0.lowercased().hasSuffix(".fit") })
                XCTAssertEqual(found.map(\.0), members.map(\.0), "streamed \(streamed), chunk \(chunk)")
                XCTAssertEqual(found.map(\.1), [members[0].1, nil, members[2].1, ""], "only the wanted members' bytes, whole")
            }
        }
    }

    func testADamagedMemberIsAFailureNotATrap() throws {
        var bytes = try zip(members)
        // A byte inside the stored text member's data: its checksum no longer matches.
        let text = Array("not a FIT file".utf8)
        let at = try XCTUnwrap((0..<(bytes.count - text.count)).first { Array(bytes[$0..<($0 + text.count)]) == text })
        bytes[at] ^= 0x20
        XCTAssertThrowsError(try read(bytes, chunk: 64)) { error in
            XCTAssertEqual(error as? SequentialZip.Failure, .damaged("notes/readme.txt's checksum does not match (damaged)"))
        }
        // Cut anywhere before its central directory, between members too: a failure every time, never a
        // trap, a member made up, or a zip taken as whole that is not.
        let whole = try zip(members.map { ($0.0, $0.1, false) }, streamed: true)
        let end = try XCTUnwrap((0..<(whole.count - 4)).first { whole[$0..<($0 + 4)] == [0x50, 0x4B, 0x01, 0x02] })
        for cut in 0...end {
            XCTAssertThrowsError(try read(Array(whole[0..<cut]), chunk: 97), "cut at \(cut)")
        }
        XCTAssertThrowsError(try read(Array(whole[0..<end]), chunk: 97)) {
            XCTAssertEqual($0 as? SequentialZip.Failure, .damaged("the zip ends without its central directory"))
        }
    }

    func testAnEncryptedMemberOrAnUnknownMethodIsRefused() throws {
        var bytes = try zip(members)
        bytes[6] |= 1   // the first member's flags: encrypted
        XCTAssertThrowsError(try read(bytes, chunk: 64)) { XCTAssertEqual($0 as? SequentialZip.Failure, .unsupported("2026-03-01.fit is encrypted")) }
        bytes = try zip(members)
        bytes[8] = 12   // bzip2
        XCTAssertThrowsError(try read(bytes, chunk: 64)) {
            XCTAssertEqual($0 as? SequentialZip.Failure, .unsupported("2026-03-01.fit is compressed by method 12, which hreader does not read"))
        }
        XCTAssertThrowsError(try read(try zip(members, streamed: true), chunk: 64)) {
            XCTAssertEqual($0 as? SequentialZip.Failure,
                           .unsupported("notes/readme.txt is stored with its size after its data, which cannot be read in order"))
        }
        XCTAssertThrowsError(try read([0x00, 0x01, 0x02, 0x03, 0x04], chunk: 64)) {
            XCTAssertEqual($0 as? SequentialZip.Failure, .damaged("no zip member header at byte 0"))
        }
    }

    func testABombStopsAtTheLimitsWhetherWantedOrNot() throws {
        let bomb = try zip([("zeros.fit", String(repeating: "0", count: 3 << 20), false)])
        for wanted in [true, false] {
            XCTAssertThrowsError(try read(bomb, chunk: 4096, wanted: { _ in wanted }, limits: .init(memberBytes: 1 << 20, ratio: 1 << 20, members: 10))) {
                XCTAssertEqual($0 as? SequentialZip.Failure, .tooLarge("zeros.fit inflates past 1 MiB"))
            }
            XCTAssertThrowsError(try read(bomb, chunk: 4096, wanted: { _ in wanted }, limits: .init(memberBytes: 64 << 20, ratio: 250, members: 10))) {
                XCTAssertEqual($0 as? SequentialZip.Failure, .tooLarge("zeros.fit inflates more than 250 times its size (a zip bomb?)"))
            }
        }
        XCTAssertThrowsError(try read(try zip(members), chunk: 64, limits: .init(memberBytes: 1 << 20, ratio: 250, members: 3))) {
            XCTAssertEqual($0 as? SequentialZip.Failure, .tooLarge("the zip holds more than 3 members"))
        }
    }
}
