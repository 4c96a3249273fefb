// fuzz-web: the libFuzzer harnesses over Fuzz/Checks/Web (make fuzz; docs/security.md, "Fuzzing").
#if DEBUG || FUZZING
import FuzzDriver
import FuzzWebChecks

@main struct FuzzWeb {
    static func main() { fuzzMain(WebFuzzChecks.all) }
}
#else
import Foundation

@main struct FuzzWeb {
    static func main() {
        FileHandle.standardError.write(Data("fuzz-web needs a debug build or make fuzz (the checks use internal API)\n".utf8))
        exit(2)
    }
}
#endif
