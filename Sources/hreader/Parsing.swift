import ArgumentParser
import Foundation
import HReaderCrypto
import HReaderKit
import HReaderModel

/// Durations such as `90s`, `15m`, `2h`, `1d`.
struct DurationArgument: ExpressibleByArgument {
    let seconds: TimeInterval
    let text: String

    var defaultValueDescription: String { text }

    init?(argument: String) {
        text = argument
        let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        guard let unit = argument.last, let factor = units[unit], let value = Double(argument.dropLast()), value > 0 else { return nil }
        seconds = value * factor
    }

    static var defaultCompletionKind: CompletionKind { .default }
}

/// Times: RFC 3339 (`2012-05-01T00:00:00Z`) or a date (`2012-05-01`, local midnight).
struct TimeArgument: ExpressibleByArgument {
    let time: ClinicalTime

    init?(argument: String) {
        guard let time = ClinicalTime.parse(argument) else { return nil }
        self.time = time
    }
}

extension Relationship: ExpressibleByArgument {}
extension EntryType: ExpressibleByArgument {}

/// The KDF choice of `init` and `key upgrade`, with the explicit cheaper settings tests use.
struct KDFOptions: ParsableArguments {
    enum Name: String, ExpressibleByArgument, CaseIterable { case scrypt, pbkdf2 }

    @Option(help: "Key derivation function for the key slots.")
    var kdf: Name = .scrypt

    @Option(help: ArgumentHelp("scrypt cost N, a power of two (default 131072 = 2^17). Lower values are for tests only.", valueName: "n"))
    var scryptN: UInt64?

    @Option(help: ArgumentHelp("PBKDF2-HMAC-SHA256 iterations (default 600000). Lower values are for tests only.", valueName: "count"))
    var pbkdf2Iterations: UInt32?

    func parameters() throws -> KDFParameters {
        let parameters: KDFParameters
        switch kdf {
        case .scrypt:
            guard pbkdf2Iterations == nil else { throw HReaderError.usage("--pbkdf2-iterations goes with --kdf pbkdf2") }
            parameters = .scrypt(n: scryptN ?? (1 << 17), r: 8, p: 1)
        case .pbkdf2:
            guard scryptN == nil else { throw HReaderError.usage("--scrypt-n goes with --kdf scrypt") }
            parameters = .pbkdf2SHA256(iterations: pbkdf2Iterations ?? 600_000)
        }
        do { try parameters.validateForNewSlot() } catch { throw HReaderError.from(error) }
        return parameters
    }

    /// Warns (on stderr, always) when the parameters are below OWASP's minimum.
    func warnIfWeak(_ parameters: KDFParameters) {
        if !parameters.meetsRecommendedMinimum {
            Terminal.note("warning: \(parameters.summary) is below the OWASP minimum (scrypt N=2^17 r=8 p=1, PBKDF2 600000); use it for tests only")
        }
    }
}

extension KDFParameters {
    var summary: String {
        switch self {
        case let .scrypt(n, r, p): return "scrypt N=\(n) r=\(r) p=\(p)"
        case let .pbkdf2SHA256(i): return "pbkdf2-sha256 \(i) iterations"
        }
    }
}

/// Security questions: from a file (one `question<TAB>answer` per line) or asked on the terminal.
enum QuestionsInput {
    static func read(file: String?) throws -> [(question: String, answer: String)] {
        if let file {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw HReaderError.usage("cannot read the questions file \(file)")
            }
            return try text.split(whereSeparator: \.isNewline).map { line in
                let parts = line.split(separator: "\t", maxSplits: 1)
                guard parts.count == 2 else { throw HReaderError.usage("each line of \(file) must be: question<TAB>answer") }
                return (String(parts[0]), String(parts[1]))
            }
        }
        var questions: [(String, String)] = []
        Terminal.note("Write two or more security questions. An empty question ends the list.")
        while true {
            let question = try Terminal.readVisibleLine(prompt: "Question \(questions.count + 1): ", allowEmpty: true)
            if question.isEmpty { break }
            let answer = try Terminal.readSecret(prompt: "Answer: ")
            questions.append((question, answer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }))
        }
        return questions
    }

    /// Answers in question order: from a file (one per line) or asked on the terminal.
    static func answers(for questions: [String], file: String?) throws -> [String] {
        if let file {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw HReaderError.usage("cannot read the answers file \(file)")
            }
            let answers = text.split(whereSeparator: \.isNewline).map(String.init)
            guard answers.count == questions.count else {
                throw HReaderError.usage("the answers file has \(answers.count) answers for \(questions.count) questions")
            }
            return answers
        }
        return try questions.map { question in
            try Terminal.readSecret(prompt: "\(question) ").withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        }
    }
}
