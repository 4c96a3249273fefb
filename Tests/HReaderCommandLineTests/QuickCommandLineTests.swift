import ArgumentParser
import XCTest
@testable import hreader

/// The quick path (QuickCommandLine) reads what swift-argument-parser reads, or declines.
final class QuickCommandLineTests: XCTestCase {
    /// swift-argument-parser's reading of a `timeline show` line, as a request; nil when it refuses it.
    private func parsed(_ arguments: [String]) -> TimelineRequest? {
        (try? HReaderCommand.parseAsRoot(arguments) as? TimelineCommand.Show)?.request
    }

    private func assertSame(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) {
        guard let quick = QuickCommandLine.command(arguments) else { return }
        XCTAssertEqual(quick, parsed(arguments).map(QuickCommand.timeline), "\(arguments)", file: file, line: line)
    }

    func testThePlainFormsScriptsUseAreReadQuicklyAndAsTheParserReadsThem() throws {
        let lines: [[String]] = [
            ["timeline", "--patient", "1", "--page", "day"],
            ["timeline", "show", "--patient", "1", "--page", "day", "--at", "2012-05-01T00:00:00+02:00", "--pretty"],
            ["timeline", "--vault", "/tmp/v", "--patient", "2", "--page", "month", "--at", "2012-05-01", "--types", "vitals,results", "--detail"],
            ["timeline", "--from", "2010-01-01", "--to", "2012-12-31", "--types=vitals", "--quiet", "--json"],
            ["timeline", "--page=decade", "--patient", "", "--vault=/a b/c=d", "--password-file", "pw", "--password-command", "pass show x"],
            ["timeline", "--page", "week", "--patient", "show"],
        ]
        for arguments in lines {
            let quick = try XCTUnwrap(QuickCommandLine.command(arguments), "\(arguments) should take the quick path")
            XCTAssertEqual(quick, parsed(arguments).map(QuickCommand.timeline), "\(arguments)")
        }
        guard case let .timeline(request) = QuickCommandLine.command(lines[4]) else { return XCTFail("not a timeline") }
        XCTAssertEqual(request.global, VaultOptions(vault: "/a b/c=d", passwordFile: "pw", passwordCommand: "pass show x"))
        XCTAssertEqual(request.patient, "")
    }

    /// What the quick path leaves to swift-argument-parser: its help, its errors and every form it alone knows.
    func testAnythingButThePlainFormsGoesTheLongWay() {
        let lines: [[String]] = [
            [], ["timeline"], ["timeline", "--help"], ["timeline", "-h"], ["timeline", "show", "--help"], ["help", "timeline"],
            ["timeline", "add", "--key", "Levels", "pain=5"], ["timeline", "--page", "day", "show"],
            ["timeline", "--page", "day", "--page", "week"], ["timeline", "--page", "day", "--pretty", "--pretty"],
            ["timeline", "--page", "day", "--"], ["timeline", "--page", "day", "extra"], ["timeline", "--page", "day", "--nope"],
            ["timeline", "--page"], ["timeline", "--page", "--pretty"], ["timeline", "--page", "day", "--patient", "-1"],
            ["timeline", "--page", "day", "--pretty=true"], ["timeline", "--page", "dya"], ["timeline", "--page", "day", "--at", "yesterday"],
            ["timeline", "--page", "day", "--from", "2010-01-01", "--to", "2012-01-01"], ["timeline", "--from", "2012-01-01", "--to", "2010-01-01"],
            ["timeline", "--from", "2012-01-01"], ["timeline", "--at", "2012-01-01"], ["timeline", "--page", "day", "--types", "nonsense"],
            ["timeline", "--page", "day", "-"], ["timeline", "--page", "day", "--="], ["timeline", "--page=day", "--vault="], ["status", "--json"], ["timeline", "--generate-completion-script", "bash"],
        ]
        for arguments in lines {
            XCTAssertNil(QuickCommandLine.command(arguments), "\(arguments) should go to swift-argument-parser")
        }
    }

    /// Lines built at random from the options, their forms and awkward values: whenever the quick path
    /// reads one, swift-argument-parser reads the same request from it.
    func testRandomLinesReadTheSameByBothParsers() {
        let valued: [(String, [String])] = [
            ("--vault", ["/tmp/v", "", "a=b", "show", "ü v"]), ("--password-file", ["pw", "-"]), ("--password-command", ["echo x", "--json"]),
            ("--patient", ["1", "", "uuid-1", "show", "add"]), ("--page", ["day", "week", "month", "year", "decade", "dya", ""]),
            ("--at", ["2012-05-01", "2012-05-01T00:00:00Z", "2012-05-01T00:00:00+02:00", "2012-13-01", "x"]),
            ("--from", ["2010-01-01", "2013-01-01T10:00:00-05:00"]), ("--to", ["2012-12-31", "2009-01-01"]),
            ("--types", ["vitals", "vitals,results", "", "bogus", "vitals,"]),
        ]
        let flags = ["--detail", "--pretty", "--quiet", "--json"]
        var generator = SystemRandomNumberGenerator()
        var quick = 0
        for _ in 0..<3000 {
            var arguments = ["timeline"]
            if Bool.random(using: &generator) { arguments.append("show") }
            var pieces: [[String]] = []
            for (name, values) in valued where Int.random(in: 0..<3, using: &generator) == 0 {
                let value = values.randomElement(using: &generator)!
                pieces.append(Bool.random(using: &generator) ? [name, value] : ["\(name)=\(value)"])
            }
            for flag in flags where Bool.random(using: &generator) { pieces.append([flag]) }
            if Int.random(in: 0..<20, using: &generator) == 0, let repeated = pieces.randomElement(using: &generator) { pieces.append(repeated) }
            arguments += pieces.shuffled(using: &generator).flatMap { $0 }
            if QuickCommandLine.command(arguments) != nil { quick += 1 }
            assertSame(arguments)
        }
        XCTAssertGreaterThan(quick, 100, "the quick path read too few of the lines to compare")
    }

    // MARK: search

    private func parsedSearch(_ arguments: [String]) -> QuickCommand? {
        (try? HReaderCommand.parseAsRoot(arguments) as? SearchCommand).map { .search($0.request) }
    }

    func testSearchesReadQuicklyAsTheParserReadsThem() throws {
        let lines: [[String]] = [
            ["search", "metformin"], ["search", "metformin", "500", "--json"], ["search", "--type", "medication", "metf"],
            ["search", "blood", "--patient=2", "pressure", "--limit", "5", "--vault", "/tmp/v", "--quiet"],
            ["search", "x=y", "--limit=1000"], ["search", "", "a"], ["search", "ü", "--limit", "0"],
        ]
        for arguments in lines {
            let quick = try XCTUnwrap(QuickCommandLine.command(arguments), "\(arguments) should take the quick path")
            XCTAssertEqual(quick, parsedSearch(arguments), "\(arguments)")
        }
        guard case let .search(request) = QuickCommandLine.command(lines[3]) else { return XCTFail("not a search") }
        XCTAssertEqual(request.words, ["blood", "pressure"])
        XCTAssertEqual(request.limit, 5)
    }

    func testSearchesButThePlainFormsGoTheLongWay() {
        let lines: [[String]] = [
            ["search"], ["search", "--json"], ["search", "-5"], ["search", "a", "--", "-b"], ["search", "a", "--help"],
            ["search", "a", "--type", "nonsense"], ["search", "a", "--limit", "many"], ["search", "a", "--limit", "-1"],
            ["search", "a", "--limit", "5", "--limit", "6"], ["search", "a", "--detail"], ["search", "a", "--type="],
        ]
        for arguments in lines {
            XCTAssertNil(QuickCommandLine.command(arguments), "\(arguments) should go to swift-argument-parser")
        }
    }

    func testRandomSearchesReadTheSameByBothParsers() {
        let valued: [(String, [String])] = [
            ("--vault", ["/tmp/v", "", "show"]), ("--password-file", ["pw"]), ("--patient", ["1", "", "uuid-1"]),
            ("--type", ["medication", "vital_sign", "vitalSign", "result", "Medication", "x", ""]), ("--limit", ["1", "50", "1000", "0", "1001", "+5", "05", "x", ""]),
        ]
        let words = ["metformin", "500", "a b", "", "ü", "x=y", "search", "--json", "-x"]
        let flags = ["--quiet", "--json"]
        var generator = SystemRandomNumberGenerator()
        var quick = 0
        // 1,000 lines: each costs the argument parser about 13 ms in a debug build (40 s for 3,000).
        for _ in 0..<1000 {
            var pieces: [[String]] = (0..<Int.random(in: 0...3, using: &generator)).map { _ in [words.randomElement(using: &generator)!] }
            for (name, values) in valued where Int.random(in: 0..<3, using: &generator) == 0 {
                let value = values.randomElement(using: &generator)!
                pieces.append(Bool.random(using: &generator) ? [name, value] : ["\(name)=\(value)"])
            }
            for flag in flags where Bool.random(using: &generator) { pieces.append([flag]) }
            let arguments = ["search"] + pieces.shuffled(using: &generator).flatMap { $0 }
            guard let read = QuickCommandLine.command(arguments) else { continue }
            quick += 1
            XCTAssertEqual(read, parsedSearch(arguments), "\(arguments)")
        }
        XCTAssertGreaterThan(quick, 30, "the quick path read too few of the lines to compare")
    }

    // MARK: providers search

    private func parsedProviderSearch(_ arguments: [String]) -> QuickCommand? {
        (try? HReaderCommand.parseAsRoot(arguments) as? ProvidersCommand.Search).map { .providerSearch($0.request) }
    }

    func testProviderSearchesReadQuicklyAsTheParserReadsThem() throws {
        let lines: [[String]] = [
            ["providers", "search", "saint", "marys"], ["providers", "search", "mercy", "--state", "WI", "--json"],
            ["providers", "search", "--city=Madison", "clinic", "--limit", "5", "--quiet"], ["providers", "search", "ü", "--limit=1000"],
        ]
        for arguments in lines {
            let quick = try XCTUnwrap(QuickCommandLine.command(arguments), "\(arguments) should take the quick path")
            XCTAssertEqual(quick, parsedProviderSearch(arguments), "\(arguments)")
        }
        guard case let .providerSearch(request) = QuickCommandLine.command(lines[2]) else { return XCTFail("not a provider search") }
        XCTAssertEqual(request.words, ["clinic"])
        XCTAssertEqual(request.city, "Madison")
        XCTAssertEqual(request.limit, 5)
    }

    func testProviderSearchesButThePlainFormsGoTheLongWay() {
        let lines: [[String]] = [
            ["providers", "search"], ["providers", "search", "--state", "WI"], ["providers", "search", "a", "--limit", "0"],
            ["providers", "search", "a", "--limit", "many"], ["providers", "search", "a", "--help"], ["providers", "search", "a", "--type", "x"],
            ["providers", "search", "a", "--state", "WI", "--state", "MN"], ["providers", "saint", "marys"], ["providers", "update"],
        ]
        for arguments in lines {
            XCTAssertNil(QuickCommandLine.command(arguments), "\(arguments) should go to swift-argument-parser")
        }
    }
}
