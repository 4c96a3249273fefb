import CShims
import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Everything this program prints goes through here, so that text from a vault, a file or a server
/// (a FHIR Condition named `ESC]52;c;…BEL ESC[2J`) cannot write the user's clipboard, clear the screen
/// or hide a line: it shadows the standard library's `print` for the whole module.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    print(items.map { "\($0)" }.joined(separator: separator), terminator: terminator)
}

/// One string, the usual case, written to stdout's stream as Swift.print writes it but without its
/// dynamic casts of each item: their first conformance lookups cost every command that prints
/// (`--version` too) 0.15 ms.
func print(_ text: String, terminator: String = "\n") {
    var line = TerminalText.clean(text) + terminator
    // C's stdout, the stream Swift.print writes to, so that the two keep their order.
    line.withUTF8 { bytes in _ = fwrite(bytes.baseAddress, 1, bytes.count, hreader_stdout()) }
}

/// Sends what `print` wrote so far (a long-running command's first lines must reach a pipe at once).
func flushStandardOutput() { fflush(hreader_stdout()) }

/// Text made safe for a terminal.
enum TerminalText {
    /// Control characters (C0 but newline and tab, DEL, C1) become U+FFFD. JSON output is unchanged:
    /// its writers escape controls already.
    static func clean(_ text: String) -> String {
        guard text.utf8.contains(where: { ($0 < 0x20 && $0 != 0x0a && $0 != 0x09) || $0 == 0x7f || $0 == 0xc2 }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let v = scalar.value
            let control = (v < 0x20 && v != 0x0a && v != 0x09) || (0x7f...0x9f).contains(v)
            out.append(control ? "\u{FFFD}" : scalar)
        }
        return String(out)
    }
}

/// Prompts and messages. Messages go to stderr; only data goes to stdout.
enum Terminal {
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("hreader: \(TerminalText.clean(message))\n".utf8))
    }

    /// What the user must see even with --quiet or --json (a server's fault that the import worked around).
    static func warning(_ message: String) {
        FileHandle.standardError.write(Data("hreader: warning: \(TerminalText.clean(message))\n".utf8))
    }

    static func note(_ message: String) {
        FileHandle.standardError.write(Data("\(TerminalText.clean(message))\n".utf8))
    }

    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// A person is looking at the output (a browser may be started for them).
    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// The terminal's width in characters: what it says, else `COLUMNS`, else 80.
    static var columns: Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let text = getenv("COLUMNS").map({ String(cString: $0) }), let n = Int(text), n > 0 { return n }
        return 80
    }

    /// Reads a line with echo off from the terminal. Fails at once when there is no terminal.
    static func readSecret(prompt: String) throws -> SecretBytes {
        try readLine(prompt: prompt, echo: false)
    }

    /// Reads a visible line (a security question) from the terminal.
    static func readVisibleLine(prompt: String, allowEmpty: Bool = false) throws -> String {
        let secret = try readLine(prompt: prompt, echo: true, allowEmpty: allowEmpty)
        return secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    private static func readLine(prompt: String, echo: Bool, allowEmpty: Bool = false) throws -> SecretBytes {
        guard stdinIsTerminal else {
            throw HReaderError(.authentication, "no terminal to ask '\(prompt.trimmingCharacters(in: .whitespaces))': give it through a file option (see 'hreader help'), --password-command or HREADER_PASSWORD; most commands also accept HREADER_SESSION")
        }
        let fd = STDIN_FILENO
        FileHandle.standardError.write(Data(prompt.utf8))
        var saved = termios()
        let haveTermios = tcgetattr(fd, &saved) == 0
        if haveTermios && !echo {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(fd, TCSAFLUSH, &quiet)
        }
        defer {
            if haveTermios && !echo {
                var restore = saved
                tcsetattr(fd, TCSAFLUSH, &restore)
                FileHandle.standardError.write(Data("\n".utf8))
            }
        }
        var line: [UInt8] = []
        defer { PasswordInput.wipe(&line) }
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == 0x0a || byte == 0x0d { break }
            line.append(byte)
            if line.count > 4096 { break }
        }
        guard !line.isEmpty || allowEmpty else { throw HReaderError.usage("nothing was typed") }
        return SecretBytes(line)
    }
}

/// Data output: JSON on stdout, or aligned text.
enum Output {
    /// A value built by the layers below (the shapes the web API gives too), keys sorted as above.
    static func json(_ value: JSONValue) {
        print(value.serialized(pretty: true, sortingKeys: true))
    }


    static func line(_ text: String = "") {
        print(text)
    }

    /// Aligned columns, one line per row: a cell's line breaks (a narrative note's) become spaces,
    /// and on a terminal the widest columns are cut (with "…") so each row fits its width
    /// (`COLUMNS` when the terminal does not say). Piped output keeps whole cells.
    static func table(_ rows: [[String]]) {
        let flat = rows.map { $0.map(oneLine) }
        for line in tableLines(flat, width: Terminal.stdoutIsTerminal ? Terminal.columns : nil) { print(line) }
    }

    /// The lines `table` prints, fitted to `width` columns when given.
    static func tableLines(_ rows: [[String]], width: Int?) -> [String] {
        tableLines(rows, widths: columnWidths(rows, width: width))
    }

    /// Each column's width: its widest cell's, the widest narrowed until a row fits `width` (each
    /// column keeps at least 6 characters).
    static func columnWidths(_ rows: [[String]], width: Int?) -> [Int] {
        guard let count = rows.map(\.count).max() else { return [] }
        var widths = [Int](repeating: 0, count: count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        if let width {
            let separators = 2 * (count - 1)
            while widths.reduce(separators, +) > width, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }), widths[widest] > 6 {
                widths[widest] -= 1
            }
        }
        return widths
    }

    /// Rows laid out in columns of `widths`; a longer cell is cut with "…" when `cut`, else kept whole.
    static func tableLines(_ rows: [[String]], widths: [Int], cut: Bool = true) -> [String] {
        rows.map { row in
            row.enumerated().map { i, cell in
                let width = i < widths.count ? widths[i] : cell.count
                let fitted = cut && cell.count > width ? String(cell.prefix(max(0, width - 1))) + "…" : cell
                return i == row.count - 1 ? fitted : fitted.padding(toLength: max(width, fitted.count), withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
    }

    /// A table printed as its rows come (a listing too long to hold): the columns take the widths
    /// of the first rows given; on a terminal a longer cell later is cut to them, piped it is kept whole.
    final class TableStream {
        private var widths: [Int]?
        private let terminalWidth = Terminal.stdoutIsTerminal ? Terminal.columns : nil

        func add(_ rows: [[String]]) {
            let flat = rows.map { $0.map(Output.oneLine) }
            let widths = self.widths ?? Output.columnWidths(flat, width: terminalWidth)
            self.widths = widths
            // (This module's print: controls from a record never reach the terminal.)
            for line in Output.tableLines(flat, widths: widths, cut: terminalWidth != nil) { print(line) }
        }
    }

    /// JSON `{"name": [ … ]}` written an element at a time, byte for byte as `json` would write the
    /// whole value (pretty, keys sorted), through `write` (this module's print by default: C1
    /// controls, which JSON leaves as they are, never reach the terminal).
    final class JSONArrayStream {
        private var count = 0
        private let name: String
        private let write: (String) -> Void

        init(_ name: String, write: @escaping (String) -> Void = { print($0, terminator: "") }) {
            self.name = name
            self.write = write
        }

        func append(_ items: [JSONValue]) {
            var out: [UInt8] = []
            for item in items {
                out += (count == 0 ? "{\n  \(JSONValue.string(name).serialized()): [\n    " : ",\n    ").utf8
                item.appendSerialized(to: &out, pretty: true, sortingKeys: true, level: 2)
                count += 1
            }
            if !out.isEmpty { write(String(decoding: out, as: UTF8.self)) }
        }

        func finish() {
            write(count == 0 ? JSONValue.object([(name, .array([]))]).serialized(pretty: true, sortingKeys: true) + "\n" : "\n  ]\n}\n")
        }
    }

    /// A cell on one line: line breaks and tabs as single spaces, runs of spaces around them folded.
    static func oneLine(_ cell: String) -> String {
        guard cell.contains(where: { $0.isNewline || $0 == "\t" }) else { return cell }
        return cell.split(whereSeparator: { $0.isNewline || $0 == "\t" }).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " ")
    }
}

/// One progress line on a terminal (rewritten in place), nothing when piped or quiet.
final class ProgressLine {
    private let enabled: Bool
    private var shown = false
    private var last: String?

    init(global: some VaultOptionValues) {
        enabled = !global.quiet && !global.json && isatty(STDERR_FILENO) == 1
    }

    func update(_ message: String) {
        guard enabled, message != last else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K\(TerminalText.clean(message))".utf8))
        shown = true
        last = message
    }

    func finish() {
        if shown { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        shown = false
        last = nil
    }
}
