import Foundation

/// Start-up (issue 27): `hreader --version` against `git --version`, wall time, median of 20 runs in
/// the same run, and what the binary loads (its size and shared libraries, as `ldd` lists them).
/// The figure depends on how the binary was built: `make bench` builds the bench's products with
/// the shared Swift runtime; `make release-hreader` (and so `make install` and the Debian package)
/// links it statically. The row names which one it measured.
func runStartupBenchmarks() throws {
    say("\n== Start-up: hreader --version against git --version (median of 20) ==")
    let hreader = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("hreader")
    guard FileManager.default.isExecutableFile(atPath: hreader.path) else {
        say("  (hreader not built beside hreader-bench; skipped)")
        return
    }
    let git = ["/usr/bin/git", "/bin/git"].first { FileManager.default.isExecutableFile(atPath: $0) }
    func medianWall(_ executable: URL, _ arguments: [String]) throws -> Double {
        _ = try spawnMeasured(executable, arguments, memory: false)   // warm the page cache
        var walls: [Double] = []
        for _ in 0..<20 { walls.append(try spawnMeasured(executable, arguments, memory: false).seconds) }
        return median(walls)
    }
    let ours = try medianWall(hreader, ["--version"])
    let size = (try? FileManager.default.attributesOfItem(atPath: hreader.path)[.size] as? Int) ?? 0
    let libraries = sharedLibraries(of: hreader)
    let linking = libraries.contains { $0.hasPrefix("libswiftCore") } ? "Swift runtime shared" : "Swift runtime static"
    row("  hreader --version", ms(ours), String(format: "%.0f MB binary, %d shared libraries (%@)", Double(size) / 1e6,
                                                 libraries.count, linking))
    if let git {
        let theirs = try medianWall(URL(fileURLWithPath: git), ["--version"])
        row("  git --version (reference)", ms(theirs), String(format: "hreader takes %.1fx its time (goal <= 3x)", ours / theirs))
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
