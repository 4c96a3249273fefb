// The main of every fuzz harness executable (Fuzz/Harnesses/*): `fuzz-X <harness> [args…]`.
// Built by `make fuzz` (-sanitize=fuzzer,address -DFUZZING) it hands the arguments to libFuzzer;
// built plainly (swift build, make test) it replays the files and folders named on the command line
// through the same check, so a crash file can be re-run without the sanitizers.
import Foundation
#if FUZZING
import CFuzzDriver
#endif

/// An invariant that did not hold: the harness aborts (a libFuzzer crash), the XCTest fails.
public struct FuzzViolation: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A harness: its name (also the folder of its regression inputs) and the check run on each input.
/// The check throws FuzzViolation when an invariant fails; a parser's trap is a crash either way.
public typealias FuzzHarness = (name: String, check: @Sendable (Data) throws -> Void)

nonisolated(unsafe) private var selected: (@Sendable (Data) throws -> Void)?

/// The files of a regression folder (Tests/<Module>Tests/Fuzz/<harness>/), sorted, dot files skipped.
public func fuzzInputs(in directory: URL) -> [URL] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0) }
        .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
}

public func fuzzMain(_ harnesses: [FuzzHarness]) -> Never {
    let arguments = CommandLine.arguments
    let program = (arguments.first as NSString?)?.lastPathComponent ?? "fuzz"
    guard arguments.count >= 2, let harness = harnesses.first(where: { $0.name == arguments[1] }) else {
        FileHandle.standardError.write(Data("""
            usage: \(program) HARNESS [libFuzzer options] [CORPUS…]   (a make fuzz build)
                   \(program) HARNESS FILE|DIR…                      (a plain build: replays the inputs)
            harnesses: \(harnesses.map(\.name).joined(separator: ", "))

            """.utf8))
        exit(2)
    }
#if FUZZING
    selected = harness.check
    // libFuzzer sees the arguments without the harness name.
    var argc = CommandLine.argc - 1
    let argv = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: Int(argc) + 1)
    argv[0] = CommandLine.unsafeArgv[0]
    for i in 1..<Int(argc) { argv[i] = CommandLine.unsafeArgv[i + 1] }
    argv[Int(argc)] = nil
    var pointer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    exit(LLVMFuzzerRunDriver(&argc, &pointer) { bytes, size in
        let data = size == 0 || bytes == nil ? Data() : Data(bytes: bytes!, count: size)
        do {
            try selected!(data)
        } catch {
            FileHandle.standardError.write(Data("\n==INVARIANT== \(error)\n".utf8))
            abort()
        }
        return 0
    })
#else
    var failures = 0, count = 0
    for path in arguments.dropFirst(2) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            print("\(path): no such file"); failures += 1; continue
        }
        let files = isDirectory.boolValue ? fuzzInputs(in: URL(fileURLWithPath: path)) : [URL(fileURLWithPath: path)]
        for file in files {
            count += 1
            do {
                try harness.check(try Data(contentsOf: file))
            } catch {
                failures += 1
                print("\(file.path): \(error)")
            }
        }
    }
    print("\(harness.name): \(count) inputs replayed, \(failures) failed")
    exit(failures == 0 ? 0 : 1)
#endif
}
