import Foundation
import XCTest
@testable import HReaderStore

/// The POSIX reads of the key file and sessions answer as FileManager's did.
final class PlainFilesTests: XCTestCase {
    func testReadsAndListsAsFileManagerDoes() throws {
        let fm = FileManager.default
        let root = fm.temporaryDirectory.appendingPathComponent("plain-files-\(UUID().uuidString)")
        try fm.createDirectory(at: root, withIntermediateDirectories: false)
        defer { try? fm.removeItem(at: root) }
        let big = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try Data(big).write(to: root.appendingPathComponent("big"))
        try Data().write(to: root.appendingPathComponent("empty"))
        try Data("ü\n".utf8).write(to: root.appendingPathComponent(".hidden ü"))
        try fm.createDirectory(at: root.appendingPathComponent("dir"), withIntermediateDirectories: false)
        try fm.createSymbolicLink(atPath: root.appendingPathComponent("link").path, withDestinationPath: root.appendingPathComponent("big").path)
        try fm.createSymbolicLink(atPath: root.appendingPathComponent("dangling").path, withDestinationPath: root.appendingPathComponent("none").path)

        for name in ["big", "empty", ".hidden ü", "dir", "link", "dangling", "missing"] {
            let path = root.appendingPathComponent(name).path
            XCTAssertEqual(PlainFiles.contents(ofFile: path), fm.contents(atPath: path).map(Array.init), name)
            XCTAssertEqual(PlainFiles.exists(path), fm.fileExists(atPath: path), name)
        }
        XCTAssertEqual(PlainFiles.contents(ofFile: root.appendingPathComponent("big").path), big)
        XCTAssertEqual(PlainFiles.names(inDirectory: root.path)?.sorted(), try fm.contentsOfDirectory(atPath: root.path).sorted())
        XCTAssertEqual(PlainFiles.names(inDirectory: root.appendingPathComponent("dir").path), [])
        XCTAssertNil(PlainFiles.names(inDirectory: root.appendingPathComponent("missing").path))
        XCTAssertNil(PlainFiles.names(inDirectory: root.appendingPathComponent("big").path))
    }
}
