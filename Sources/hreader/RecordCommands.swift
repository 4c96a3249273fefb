import ArgumentParser
import Foundation
import HReaderJSON
import HReaderKit
import HReaderModel
import HReaderRecords
import HReaderStore

struct PatientsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "patients",
        abstract: "Add, list, show, remove, order, select and merge the people whose records you keep.",
        subcommands: [Add.self, List.self, Show.self, Remove.self, Move.self, Select.self, Suggest.self,
                      Merge.self, Unmerge.self, Merges.self],
        defaultSubcommand: List.self)

    struct Suggest: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "suggest",
            abstract: "List pairs of patients who may be one person (same family name and birth date, or a shared identifier), with the evidence.",
            discussion: "Only a suggestion: hreader never joins people by itself. What speaks against each pair is listed too.")
        @OptionGroup var global: GlobalOptions

        func run() throws {
            let suggestions = try global.open().patientSuggestions()
            if global.json {
                Output.json(["suggestions": .array(suggestions.map { s in
                    .object(["patients": .array([.int(s.first.id), .int(s.second.id)]), "evidence": .strings(s.evidence),
                             "against": .strings(s.against)])
                })])
                return
            }
            if suggestions.isEmpty { global.note("No patients look like one person."); return }
            for s in suggestions {
                Output.line("\(s.first.id) \(s.first.firstName) \(s.first.lastName) and \(s.second.id) \(s.second.firstName) \(s.second.lastName):")
                for line in s.evidence { Output.line("  + \(line)") }
                for line in s.against { Output.line("  - \(line)") }
            }
        }
    }

    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge",
            abstract: "Make OTHER part of KEEP: one person whose records several sources keep under different ids.",
            discussion: """
                Everything OTHER holds is shown under KEEP from now on (entries, timeline items, samples, documents),                 and later imports and syncs of OTHER's sources file what they bring under KEEP. KEEP's name,                 applets and choices stay. Nothing is deleted: 'hreader patients unmerge KEEP' undoes it exactly.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The patient to keep (local id or uuid).") var keep: String
        @Argument(help: "The patient to merge into KEEP.") var other: String

        /// What `merge` and `unmerge` print with --json.
        static func json(_ result: PatientMergeResult) -> JSONValue {
            .object(["id": .int(result.merge.id), "keep": .int(result.keep.id), "other": .int(result.other.id),
                     "entries_moved": .int(result.entriesMoved)])
        }

        func run() throws {
            let open = try global.open()
            let keepPatient = try open.patient(keep), otherPatient = try open.patient(other)
            let result = try open.mergePatients(keep: keepPatient, other: otherPatient)
            if global.json {
                Output.json(["merge": Self.json(result)])
                return
            }
            global.note("Merged patient \(otherPatient.id) (\(otherPatient.displayName)) into \(keepPatient.id) (\(keepPatient.displayName)): "
                        + "\(result.entriesMoved) entries; merge \(result.merge.id). Undo with 'hreader patients unmerge \(keepPatient.id)'.")
        }
    }

    struct Unmerge: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unmerge",
            abstract: "Undo a merge: the latest into KEEP, or the one --merge names; both people are as they were.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The patient merged into (default with --merge: the merge's).") var keep: String?
        @Option(help: ArgumentHelp("The merge to undo (see 'hreader patients merges').", valueName: "id")) var merge: Int64?

        func run() throws {
            guard keep != nil || merge != nil else { throw HReaderError.usage("name the patient merged into, or --merge ID") }
            let open = try global.open()
            let result = try open.unmergePatient(keep: try keep.map { try open.patient($0) }, mergeID: merge)
            if global.json {
                Output.json(["merge": Merge.json(result)])
                return
            }
            global.note("Undid merge \(result.merge.id): patient \(result.other.id) (\(result.other.displayName)) is their own again, "
                        + "with \(result.entriesMoved) entries.")
        }
    }

    struct Merges: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "merges", abstract: "List the merges of patients, the latest first.")
        @OptionGroup var global: GlobalOptions

        func run() throws {
            let merges = try global.open().patientMerges()
            if global.json {
                Output.json(["merges": .array(merges.map { m in
                    .object(["id": .int(m.merge.id), "keep": .int(m.merge.keepID), "other": .int(m.merge.otherID),
                             "merged_at": .string(m.merge.mergedAt), "undone_at": .text(m.merge.undoneAt)])
                })])
                return
            }
            if merges.isEmpty { global.note("No merges."); return }
            Output.table([["MERGE", "KEEP", "OTHER", "MERGED", "UNDONE"]] + merges.map { m in
                [String(m.merge.id), "\(m.merge.keepID) \(m.keep?.displayName ?? "")", "\(m.merge.otherID) \(m.other?.displayName ?? "")",
                 m.merge.mergedAt, m.merge.undoneAt ?? ""]
            })
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a patient by hand.")
        @OptionGroup var global: GlobalOptions
        @Option var first: String
        @Option var last: String
        @Option(help: ArgumentHelp("Date of birth (YYYY-MM-DD).", valueName: "date")) var birthDate: String?
        @Option var gender: String?
        @Option(name: .customLong("as"), help: "Relationship to you.") var relationship: Relationship = .other

        func run() throws {
            if let birthDate, ClinicalTime.parse(birthDate) == nil || birthDate.contains("T") {
                throw HReaderError.usage("--birth-date must be a date like 1980-04-23")
            }
            let open = try global.open()
            let patient = try open.addPatient(NewPatient(firstName: first, lastName: last, gender: gender,
                                                         birthDate: birthDate, relationship: relationship))
            if global.json { Output.json(["patient": .object(patient.jsonObject)]) } else { Output.line("Added patient \(patient.id): \(patient.displayName)") }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List patients in picker order.")
        @OptionGroup var global: GlobalOptions

        func run() throws {
            let open = try global.open()
            let patients = try open.allPatients()
            let selected = try open.selectedPatientID()
            if global.json {
                Output.json(["patients": .array(patients.map { p in
                    var o = p.jsonObject; o["selected"] = .bool(p.id == selected); return .object(o)
                })])
                return
            }
            if patients.isEmpty { global.note("No patients yet. Add one with 'hreader patients add --first F --last L'."); return }
            Output.table([["", "ID", "NAME", "BORN", "GENDER", "RELATIONSHIP"]] + patients.map { p in
                [p.id == selected ? "*" : "", String(p.id), p.displayName, p.birthDate ?? "", p.gender ?? "", p.relationship.rawValue]
            })
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one patient and the counts of their entries.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Local id or uuid (default: the selected patient).") var patient: String?

        func run() throws {
            let open = try global.open()
            let p = try open.patient(patient)
            let byType = Dictionary(uniqueKeysWithValues: try open.entryCounts(of: p).map { ($0.key.rawValue, $0.value) })
            let merged = try open.mergedRecords(of: p)
            if global.json {
                var o = p.jsonObject
                o["entry_counts"] = .object(JSONObject(sortingKeysOf: byType) { .int($0) })
                o["merged"] = .array(merged.map { .object($0.jsonObject) })
                Output.json(["patient": .object(o)]); return
            }
            var rows = [["name:", p.displayName], ["id:", "\(p.id) (\(p.uuid))"], ["relationship:", p.relationship.rawValue]]
            if let b = p.birthDate { rows.append(["born:", b + (p.age().map { " (age \($0))" } ?? "")]) }
            if let g = p.gender { rows.append(["gender:", g]) }
            rows.append(["entries:", byType.isEmpty ? "none" : byType.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")])
            for record in merged {
                rows.append(["merged:", "\(record.id) \(record.displayName)" + (record.birthDate.map { ", born \($0)" } ?? "")])
            }
            Output.table(rows)
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a patient and all their entries.")
        @OptionGroup var global: GlobalOptions
        @Argument var patient: String

        func run() throws {
            let open = try global.open()
            let p = try open.patient(patient)
            try open.removePatient(p)
            global.note("Removed patient \(p.id).")
        }
    }

    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "move", abstract: "Move a patient to a position in the picker (1 = first).")
        @OptionGroup var global: GlobalOptions
        @Argument var patient: String
        @Option(name: .customLong("to")) var position: Int

        func run() throws {
            let open = try global.open()
            try open.movePatient(try open.patient(patient), to: position)
        }
    }

    struct Select: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "select", abstract: "Select the patient that commands use when --patient is omitted.")
        @OptionGroup var global: GlobalOptions
        @Argument var patient: String

        func run() throws {
            let open = try global.open()
            let p = try open.patient(patient)
            try open.selectPatient(p)
            global.note("Selected \(p.displayName) (\(p.id)).")
        }
    }
}

struct EntriesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entries",
        abstract: "List and add entries, and keep your own notes on them.",
        subcommands: [List.self, Show.self, Add.self, Comment.self, Strike.self, Split.self, Join.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List a patient's entries in date order.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Local id or uuid (default: the selected patient).") var patient: String?
        @Option(help: ArgumentHelp("Only this type: \(EntryType.allCases.map(\.rawValue).joined(separator: ", ")).")) var type: EntryType?
        @Option(help: ArgumentHelp("Entries whose date, start or end is at or after this time.", valueName: "time")) var from: TimeArgument?
        @Option(help: ArgumentHelp("… and at or before this time.", valueName: "time")) var to: TimeArgument?
        @Flag(help: "Every stored copy of a fact that several sources state (default: one row per fact).") var copies = false

        func run() throws {
            let open = try global.open()
            let p = try open.patient(patient)
            // A decade of a watch is millions of rows: they are printed a batch at a time, never held.
            let table = Output.TableStream(), json = Output.JSONArrayStream("entries")
            var listed = 0
            try open.forEachEntryBatch(of: p, type: type, from: from?.time.date, to: to?.time.date, copies: copies) { batch in
                let (entries, sources, differences) = (batch.entries, batch.sources, batch.differences)
                if global.json {
                    json.append(entries.map { e in
                        var o = e.jsonObject
                        if let found = batch.verifications[e.id] { o["verification"] = found.jsonValue }
                        o["sources"] = .array((sources[e.id] ?? []).map(Self.json))
                        if let found = differences[e.id] { o["differences"] = .strings(found) }
                        return .object(o)
                    })
                    return
                }
                table.add((listed == 0 ? [["ID", "DATE", "TYPE", "DESCRIPTION", "VALUE", "SOURCES", "NOTE"]] : []) + entries.map { e in
                    [String(e.id), e.content.effectiveTime?.text ?? "", e.content.type.rawValue,
                     (e.user.deleted ? "(struck) " : "") + e.content.description, e.displayValue ?? "",
                     Self.sourcesColumn(sources[e.id] ?? [], entry: e.id, copies: copies)
                        + (differences[e.id].map { found in "; they differ: " + found.map { $0.prefix { $0 != ":" } }.joined(separator: ", ") } ?? ""),
                     e.user.comments ?? ""]
                })
                listed += entries.count
            }
            if global.json { json.finish() } else if listed == 0 { global.note("No entries.") }
        }

        /// One source of a fact, as `entries list --json` and `entries show --json` give it.
        static func json(_ copy: EntryRepository.Copy) -> JSONValue {
            .object(["source_id": .int(copy.sourceID), "name": .string(copy.sourceName), "entry_id": .int(copy.entryID)])
        }

        /// The sources of a fact ("Hospital A, Dr B"); with --copies, which shown entry a copy belongs to.
        static func sourcesColumn(_ copies: [EntryRepository.Copy], entry: Int64, copies listCopies: Bool) -> String {
            if listCopies, let shown = copies.first, shown.entryID != entry { return "copy of \(shown.entryID)" }
            var names: [String] = []
            for copy in copies where !names.contains(copy.sourceName) { names.append(copy.sourceName) }
            // One source may state a fact more than once (a document that lists it twice): say how many copies.
            return names.joined(separator: ", ") + (copies.count > names.count ? " (\(copies.count) copies)" : "")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show an entry: the fact, every source that states it, each source's version, and what they disagree on.")
        @OptionGroup var global: GlobalOptions
        @Argument var entry: String

        func run() throws {
            let open = try global.open()
            let fact = try open.fact(of: try open.entry(entry))
            let shownVerification = fact.verification
            func withVerification(_ e: Entry) -> JSONValue {
                var o = e.jsonObject
                if let found = fact.verifications[e.id] { o["verification"] = found.jsonValue }
                return .object(o)
            }
            if global.json {
                var shown = fact.shown.jsonObject
                if let shownVerification { shown["verification"] = shownVerification.jsonValue }
                Output.json(["entry": .object(shown),
                             "copies": .array(fact.copies.map(withVerification)),
                             "sources": .array(fact.sources.map(List.json)),
                             "differences": .strings(fact.differences)])
                return
            }
            let e = fact.shown
            var rows = [["entry:", "\(e.id) (\(e.uuid))"], ["type:", e.content.type.rawValue], ["description:", e.content.description]]
            if let t = e.content.effectiveTime { rows.append(["date:", t.text]) }
            if let v = e.displayValue { rows.append(["value:", v]) }
            // A workout's value is its duration; what it covered is its text ("5 km, 320 kcal, route …").
            if e.content.valueNumber != nil, let text = e.content.valueText, !text.isEmpty { rows.append(["details:", text]) }
            if let s = e.content.status { rows.append(["status:", s]) }
            if let c = e.user.comments { rows.append(["your note:", c]) }
            if let shownVerification { rows.append(["card:", shownVerification.summary]) }
            for source in fact.sources {
                let copy = fact.copies.first { $0.id == source.entryID }
                var line = "\(source.sourceName) (entry \(source.entryID))"
                if let copy, copy.id != e.id {
                    let said = [copy.content.description, copy.displayValue, copy.content.status].compactMap { $0 }.filter { !$0.isEmpty }
                    line += ": " + said.joined(separator: ", ")
                }
                rows.append(["from:", line])
            }
            for difference in fact.differences { rows.append(["differs:", difference]) }
            Output.table(rows)
        }
    }

    struct Split: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "split",
            abstract: "Take an entry out of the fact it was grouped into: it is a fact of its own from now on (kept through re-imports and sync).")
        @OptionGroup var global: GlobalOptions
        @Argument var entry: String

        func run() throws {
            let open = try global.open()
            let e = try open.entry(entry)
            try open.splitFact(e)
            global.note("Entry \(e.id) is a fact of its own.")
        }
    }

    struct Join: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "join",
            abstract: "Say two entries state one fact (kept through re-imports and sync); 'hreader entries split' undoes it.")
        @OptionGroup var global: GlobalOptions
        @Argument var first: String
        @Argument var second: String

        func run() throws {
            let open = try global.open()
            let a = try open.entry(first), b = try open.entry(second)
            try open.joinFacts(a, b)
            global.note("Entries \(a.id) and \(b.id) are one fact.")
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add an entry by hand.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Local id or uuid (default: the selected patient).") var patient: String?
        @Option var type: EntryType
        @Option var description: String
        @Option(help: ArgumentHelp("When (RFC 3339, or a date at local midnight).", valueName: "time")) var date: TimeArgument?
        @Option(help: "A number or a text value.") var value: String?
        @Option var unit: String?
        @Option var status: String?
        @Option var dose: String?
        @Option(help: ArgumentHelp("Code as system=code (e.g. LOINC=8480-6); repeatable.", valueName: "system=code")) var code: [String] = []

        func run() throws {
            if unit != nil && value == nil { throw HReaderError.usage("--unit needs --value") }
            var codes: [String: [String]] = [:]
            for c in code {
                let parts = c.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { throw HReaderError.usage("--code must be system=code") }
                codes[String(parts[0]), default: []].append(String(parts[1]))
            }
            let number = value.flatMap { Double($0) }
            let content = EntryContent(type: type, description: description, status: status, date: date?.time ?? ClinicalTime(epoch: Int64(Date().timeIntervalSince1970)),
                                       codes: codes, valueNumber: number, valueText: number == nil ? value : nil, unit: unit, dose: dose)
            let open = try global.open()
            let entry = try open.addEntry(patient: try open.patient(patient), content: content)
            if global.json { Output.json(["entry": .object(entry.jsonObject)]) } else { Output.line("Added entry \(entry.id).") }
        }
    }

    struct Comment: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "comment",
            abstract: "Set your comment on an entry, and the patient comments of a medication.",
            discussion: "Your fields survive every re-import and sync. An empty --text clears the comment.")
        @OptionGroup var global: GlobalOptions
        @Argument var entry: String
        @Option var text: String?
        @Option(help: "What the patient actually takes: quantity.") var quantity: String?
        @Option(help: "… dose.") var dose: String?
        @Option(help: "… directions.") var directions: String?
        @Option(help: "… prescriber.") var prescriber: String?

        func run() throws {
            guard text != nil || quantity != nil || dose != nil || directions != nil || prescriber != nil else {
                throw HReaderError.usage("give --text or a patient comment (--quantity, --dose, --directions, --prescriber)")
            }
            let open = try global.open()
            let updated = try open.updateUserFields(of: try open.entry(entry)) { user in
                func set(_ value: String?, _ field: inout String?) { if let value { field = value.isEmpty ? nil : value } }
                set(text, &user.comments); set(quantity, &user.patientQuantity); set(dose, &user.patientDose)
                set(directions, &user.patientDirections); set(prescriber, &user.patientPrescriber)
            }
            if global.json { Output.json(["entry": .object(updated.jsonObject)]) } else { global.note("Updated entry \(updated.id).") }
        }
    }

    struct Strike: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "strike",
            abstract: "Strike an entry through (hidden from summaries, kept in the record); --undo restores it.")
        @OptionGroup var global: GlobalOptions
        @Argument var entry: String
        @Flag var undo = false

        func run() throws {
            let open = try global.open()
            let updated = try open.updateUserFields(of: try open.entry(entry)) { $0.deleted = !undo }
            if global.json { Output.json(["entry": .object(updated.jsonObject)]); return }
            global.note(undo ? "Restored entry \(entry)." : "Struck entry \(entry).")
        }
    }
}
