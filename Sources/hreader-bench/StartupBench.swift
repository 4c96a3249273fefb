import Foundation

/// Start-up (issue 27): `hreader --version` against `git --version`, wall time, median of 20 runs in
/// the same run, and what the binary loads: its size, the shared libraries it links (as `ldd` lists
/// them) and those it loads on first use. `make bench` points `HREADER_BENCH_HREADER` at the binary
/// `make install` and the Debian package ship (.ci/release-build.sh: static Swift runtime, packed
/// relocations, no exported symbols, SQLCipher, OpenSSL and libxml2 loaded on first use); without it
/// the bench's own build (shared Swift runtime) is measured, and the row says so.
func runStartupBenchmarks() throws {
    say("\n== Start-up: hreader --version against git --version (median of 20) ==")
    guard let (_, hreader) = siblingBinaries() else { return }
    let git = ["/usr/bin/git", "/bin/git"].first { FileManager.default.isExecutableFile(atPath: $0) }
    // The median wall time, and the page faults of a run (the same every run).
    func medianWall(_ executable: URL, _ arguments: [String]) throws -> (seconds: Double, faults: Int) {
        _ = try spawnMeasured(executable, arguments, memory: false)   // warm the page cache
        var walls: [Double] = []
        var faults = 0
        for _ in 0..<20 {
            let run = try spawnMeasured(executable, arguments, memory: false)
            walls.append(run.seconds)
            faults = run.pageFaults
        }
        return (median(walls), faults)
    }
    let size = (try? FileManager.default.attributesOfItem(atPath: hreader.path)[.size] as? Int) ?? 0
    let libraries = sharedLibraries(of: hreader)
    let linking = libraries.contains { $0.hasPrefix("libswiftCore") } ? "Swift runtime shared (the bench's own build)"
        : "the shipped build, Swift runtime static"
    let lazy = ["libsqlcipher", "libcrypto", "libxml2"].filter { name in !libraries.contains { $0.hasPrefix(name) } }
    say(String(format: "  %@: %.0f MB, links %d shared libraries (%@)%@", hreader.path, Double(size) / 1e6, libraries.count,
               libraries.joined(separator: " "), lazy.isEmpty ? "" : "; loads \(lazy.joined(separator: ", ")) on first use"))
    say("  (\(linking))")
    let ours = try medianWall(hreader, ["--version"])
    row("  hreader --version", ms(ours.seconds), "no library loaded; \(ours.faults) page faults")
    let detailed = try medianWall(hreader, ["version"])
    row("  hreader version", ms(detailed.seconds), "SQLCipher and OpenSSL loaded to name their versions; \(detailed.faults) page faults")
    if let git {
        let theirs = try medianWall(URL(fileURLWithPath: git), ["--version"])
        row("  git --version (reference)", ms(theirs.seconds), String(format: "%d page faults; hreader --version takes %.1fx its time (goal <= 3x)",
                                                                         theirs.faults, ours.seconds / theirs.seconds))
    }
}

/// The shared libraries `ldd` says a binary loads (the vDSO and the loader left out).
func sharedLibraries(of binary: URL) -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
    process.arguments = [binary.path]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return [] }
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return output.split(separator: "\n").compactMap { line in
        let name = line.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
        return name.isEmpty || name.hasPrefix("linux-vdso") || name.contains("ld-linux") || name == "statically" ? nil : name
    }
}
