import Foundation
import HReaderCrypto
import HReaderKit
import HReaderModel
import HReaderStore
import XCTest

/// `hreader search` through the real binary: every word, prefixes, accents, comments; one patient
/// or the family; types; struck entries; the index follows imports that change a description.
final class SearchTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Quill", "--birth-date", "1961-04-12"]))
        try ok(withPassword(["patients", "add", "--first", "Bo", "--last", "Tern", "--birth-date", "1990-11-30"]))
        for (patient, type, description, date) in [("1", "medication", "Metformin 500 mg oral tablet", "2019-03-01"),
                                                   ("1", "condition", "Type 2 diabetes mellitus", "2018-06-01"),
                                                   ("2", "medication", "Metformin 850 mg oral tablet", "2021-01-05"),
                                                   ("2", "immunization", "Tétanos booster", "2020-09-09")] {
            try ok(withPassword(["entries", "add", "--patient", patient, "--type", type, "--description", description, "--date", date]))
        }
        try ok(withPassword(["entries", "comment", "2", "--text", "Diagnosed after the fasting glucose test"]))
    }

    func hits(_ arguments: [String]) throws -> [[String: Any]] {
        try json(try ok(withPassword(["search"] + arguments + ["--json"])))["hits"] as? [[String: Any]] ?? []
    }

    func testFindsEntriesByTheirWordsAcrossTheFamilyOrForOnePatient() throws {
        let all = try hits(["metformin"])
        XCTAssertEqual(all.map { $0["id"] as? Int }.sorted { ($0 ?? 0) < ($1 ?? 0) }, [1, 3])
        XCTAssertEqual(Set(all.map { $0["patient_id"] as? Int }), [1, 2])
        let first = try XCTUnwrap(all.first)
        XCTAssertEqual(first["kind"] as? String, "entry")
        XCTAssertNotNil(first["title"] as? String)
        XCTAssertTrue((first["snippet"] as? String ?? "").contains("‹Metformin›"), "\(first)")
        XCTAssertNotNil(first["date"] as? String)

        XCTAssertEqual(try hits(["metf", "--patient", "2"]).map { $0["id"] as? Int }, [3], "a prefix, one patient")
        XCTAssertEqual(try hits(["tetanos"]).map { $0["id"] as? Int }, [4], "accents do not matter")
        XCTAssertEqual(try hits(["glucose"]).map { $0["id"] as? Int }, [2], "your comments are searched")
        XCTAssertEqual(try hits(["metformin", "--type", "condition"]).count, 0)
        XCTAssertEqual(try hits(["metformin", "850"]).map { $0["id"] as? Int }, [3], "every word must match")

        let table = try ok(withPassword(["search", "diabetes"]))
        XCTAssertTrue(table.stdout.contains("Ada Quill"), table.stdout)
        XCTAssertTrue(table.stdout.contains("‹diabetes›"), table.stdout)
    }

    /// Entries and documents are ranked together and cut to --limit before passages are made: the
    /// hits are the best of both kinds, each with its passage, for a prefix that many words share.
    func testEntriesAndDocumentsAreRankedTogetherAndEachShownHitHasItsPassage() throws {
        for (i, word) in ["Kalomira", "Kalomentine", "Kalomisse"].enumerated() {
            try ok(withPassword(["entries", "add", "--patient", "1", "--type", "condition", "--description", "\(word) syndrome", "--date", "2020-0\(i + 1)-01"]))
            let text = (0..<200).map { $0 % 40 == 7 ? word.lowercased() : "filler\($0 % 13)" }.joined(separator: " ")
            let note = workDir.appendingPathComponent("note-\(i).txt")
            try Data(text.utf8).write(to: note)
            try ok(withPassword(["documents", "add", note.path, "--patient", "1", "--title", "Note \(i)"]))
        }
        let all = try hits(["kalom"])
        XCTAssertEqual(all.count, 6, "\(all)")
        XCTAssertEqual(Set(all.map { $0["kind"] as? String }), ["entry", "document"])
        for hit in all { XCTAssertTrue((hit["snippet"] as? String ?? "").lowercased().contains("‹kalom"), "\(hit)") }
        // The entries' short descriptions rank above the long notes.
        XCTAssertEqual(all.prefix(3).map { $0["kind"] as? String }, ["entry", "entry", "entry"])
        let four = try hits(["kalom", "--limit", "4"])
        XCTAssertEqual(four.map { $0["kind"] as? String }, ["entry", "entry", "entry", "document"])
        XCTAssertEqual(four.map { $0["id"] as? Int }, all.prefix(4).map { $0["id"] as? Int })
        for hit in four { XCTAssertTrue((hit["snippet"] as? String ?? "").lowercased().contains("‹kalom"), "\(hit)") }
    }

    /// One open vault searching again and again, as `hreader serve`'s connections do: the documents'
    /// half runs on a second connection kept between searches, which must see what was written since
    /// (by this process or another), and free again after a search that failed.
    func testAKeptVaultSearchesBothHalvesAndSeesWhatWasWrittenSince() throws {
        let open = try VaultService(vault: Vault(root: vaultDir)).open(.password(SecretBytes(Array(Self.password.utf8))))
        func found(_ text: String) throws -> [String] {
            try open.searchRecords(text).map { hit in
                switch hit {
                case let .entry(entry): return "entry \(entry.entryID)"
                case let .document(document): return "document \(document.title)"
                case let .series(series): return "series \(series.description)"
                }
            }
        }
        XCTAssertEqual(try found("metformin").sorted(), ["entry 1", "entry 3"])
        let note = workDir.appendingPathComponent("letter.txt")
        try Data("The clinic changed the metformin dose to 1000 mg.".utf8).write(to: note)
        try ok(withPassword(["documents", "add", note.path, "--patient", "1", "--title", "Clinic letter"]))
        XCTAssertEqual(try found("metformin").sorted(), ["document Clinic letter", "entry 1", "entry 3"],
                       "a document added by another process since the last search")
        XCTAssertThrowsError(try open.searchRecords("  ++  "), "no word: a usage error")
        _ = try open.addPatient(NewPatient(firstName: "Cy", lastName: "Metformin"))
        try ok(withPassword(["entries", "add", "--patient", "3", "--type", "condition", "--description", "Metformin intolerance", "--date", "2022-02-02"]))
        XCTAssertEqual(try found("metformin").count, 4)
        XCTAssertEqual(try found("clinic"), ["document Clinic letter"])
    }

    func testStruckEntriesAreLeftOutAndComeBackWhenRestored() throws {
        try ok(withPassword(["entries", "strike", "3"]))
        XCTAssertEqual(try hits(["metformin"]).map { $0["id"] as? Int }, [1])
        try ok(withPassword(["entries", "strike", "3", "--undo"]))
        XCTAssertEqual(try hits(["metformin"]).count, 2)
    }

    func testOddQueriesAreTextNotSyntax() throws {
        for query in [#""unbalanced"#, "NEAR(a b)", "a OR b", "-metformin", "col:metformin", "metformin*"] {
            let result = try hreader(["search", "--password-file", passwordFile, "--", query])
            XCTAssertEqual(result.status, 0, "\(query): \(result.stderr)")
        }
        let none = try hreader(["search", "--password-file", passwordFile, "--", "***"])
        XCTAssertEqual(none.status, 2, none.stderr)
        XCTAssertTrue(none.stderr.contains("give a word to search for"), none.stderr)
        let nothing = try ok(withPassword(["search", "zyzzyva"]))
        XCTAssertTrue(nothing.stderr.contains("No entries or documents match."), nothing.stderr)
    }

    /// A re-import that changes a description: the old words no longer find it, the new ones do.
    func testTheIndexFollowsAnImportThatChangesAnEntry() throws {
        func condition(_ text: String) -> String {
            #"{"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Patient","id":"p9","name":[{"family":"Vale","given":["Cy"]}],"birthDate":"1950-01-01"}},{"resource":{"resourceType":"Condition","id":"c1","subject":{"reference":"Patient/p9"},"code":{"text":"\#(text)"},"onsetDateTime":"2020-02-02"}}]}"#
        }
        try ok(withPassword(["import", "--file", try file("record.json", condition("Sprained ankle"))]))
        XCTAssertEqual(try hits(["ankle"]).count, 1)
        try ok(withPassword(["import", "--file", try file("record.json", condition("Fractured wrist"))]))
        XCTAssertEqual(try hits(["ankle"]).count, 0)
        XCTAssertEqual(try hits(["wrist"]).count, 1)
    }
}
