import Foundation
import XCTest
import FuzzDriver
import FuzzRecordsChecks

/// Replays the fuzz regression inputs (Tests/HReaderRecordsTests/Fuzz/<harness>/: crashes the
/// harnesses found, and nasty inputs written by hand) through the same checks `make fuzz` runs
/// (Fuzz/Checks/Records). docs/security.md, "Fuzzing".
final class FuzzRegressionTests: XCTestCase {
    func testEveryRegressionInputPassesItsHarnessCheck() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fuzz")
        for harness in RecordsFuzzChecks.all {
            let files = fuzzInputs(in: root.appendingPathComponent(harness.name))
            XCTAssertFalse(files.isEmpty, "no regression inputs for \(harness.name) in \(root.path)")
            for file in files {
                XCTAssertNoThrow(try harness.check(try Data(contentsOf: file)), "\(harness.name)/\(file.lastPathComponent)")
            }
        }
    }
}
