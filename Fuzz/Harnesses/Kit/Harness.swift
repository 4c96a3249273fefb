// fuzz-kit: the libFuzzer harnesses over Fuzz/Checks/Kit (make fuzz; docs/security.md, "Fuzzing").
#if DEBUG || FUZZING
import FuzzDriver
import FuzzKitChecks

@main struct FuzzKit {
    static func main() { fuzzMain(KitFuzzChecks.all) }
}
#else
import Foundation

@main struct FuzzKit {
    static func main() {
        FileHandle.standardError.write(Data("fuzz-kit needs a debug build or make fuzz (the checks use internal API)\n".utf8))
        exit(2)
    }
}
#endif
