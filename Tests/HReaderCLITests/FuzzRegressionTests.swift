import Foundation
import XCTest
import FuzzDriver
import FuzzKitChecks
import FuzzWebChecks

/// Replays the fuzz regression inputs of HReaderKit's and HReaderWeb's parsers
/// (Tests/HReaderCLITests/Fuzz/<harness>/) through the same checks `make fuzz` runs
/// (Fuzz/Checks/Kit, Fuzz/Checks/Web). docs/security.md, "Fuzzing".
final class FuzzRegressionTests: XCTestCase {
    func testEveryRegressionInputPassesItsHarnessCheck() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fuzz")
        for harness in KitFuzzChecks.all + WebFuzzChecks.all {
            let files = fuzzInputs(in: root.appendingPathComponent(harness.name))
            XCTAssertFalse(files.isEmpty, "no regression inputs for \(harness.name) in \(root.path)")
            for file in files {
                XCTAssertNoThrow(try harness.check(try Data(contentsOf: file)), "\(harness.name)/\(file.lastPathComponent)")
            }
        }
    }
}
