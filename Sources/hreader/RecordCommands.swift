import ArgumentParser
import Foundation
import HReaderKit
import HReaderStore

struct PatientsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "patients",
        abstract: "Add, list, show, remove, order and select the people whose records you keep.",
        subcommands: [Add.self, List.self, Show.self, Remove.self, Move.self, Select.self, Suggest.self],
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
                Output.json(["suggestions": suggestions.map { s -> [String: Any] in
                    ["patients": [s.first.id, s.second.id], "evidence": s.evidence, "against": s.against]
                }])
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
            if global.json { Output.json(["patient": patient.jsonObject]) } else { Output.line("Added patient \(patient.id): \(patient.displayName)") }
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
                Output.json(["patients": patients.map { p -> [String: Any] in
                    var o = p.jsonObject; o["selected"] = p.id == selected; return o
                }])
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
            let entries = try open.entries(of: p)
            var byType: [String: Int] = [:]
            for e in entries { byType[e.content.type.rawValue, default: 0] += 1 }
            if global.json {
                var o = p.jsonObject; o["entry_counts"] = byType
                Output.json(["patient": o]); return
            }
            var rows = [["name:", p.displayName], ["id:", "\(p.id) (\(p.uuid))"], ["relationship:", p.relationship.rawValue]]
            if let b = p.birthDate { rows.append(["born:", b + (p.age().map { " (age \($0))" } ?? "")]) }
            if let g = p.gender { rows.append(["gender:", g]) }
            rows.append(["entries:", byType.isEmpty ? "none" : byType.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")])
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
        subcommands: [List.self, Add.self, Comment.self, Strike.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List a patient's entries in date order.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Local id or uuid (default: the selected patient).") var patient: String?
        @Option(help: ArgumentHelp("Only this type: \(EntryType.allCases.map(\.rawValue).joined(separator: ", ")).")) var type: EntryType?
        @Option(help: ArgumentHelp("Entries whose date, start or end is at or after this time.", valueName: "time")) var from: TimeArgument?
        @Option(help: ArgumentHelp("… and at or before this time.", valueName: "time")) var to: TimeArgument?

        func run() throws {
            let open = try global.open()
            let p = try open.patient(patient)
            let entries = try open.entries(of: p, type: type, from: from?.time.date, to: to?.time.date)
            if global.json { Output.json(["entries": entries.map(\.jsonObject)]); return }
            if entries.isEmpty { global.note("No entries."); return }
            Output.table([["ID", "DATE", "TYPE", "DESCRIPTION", "VALUE", "NOTE"]] + entries.map { e in
                [String(e.id), e.content.effectiveTime?.text ?? "", e.content.type.rawValue,
                 (e.user.deleted ? "(struck) " : "") + e.content.description, e.displayValue ?? "", e.user.comments ?? ""]
            })
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
            if global.json { Output.json(["entry": entry.jsonObject]) } else { Output.line("Added entry \(entry.id).") }
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
            if global.json { Output.json(["entry": updated.jsonObject]) } else { global.note("Updated entry \(updated.id).") }
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
            if global.json { Output.json(["entry": updated.jsonObject]); return }
            global.note(undo ? "Restored entry \(entry)." : "Struck entry \(entry).")
        }
    }
}
