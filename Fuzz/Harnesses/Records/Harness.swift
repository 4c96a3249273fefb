// fuzz-records: the libFuzzer harnesses over Fuzz/Checks/Records (make fuzz; docs/security.md, "Fuzzing").
#if DEBUG || FUZZING
import FuzzDriver
import FuzzRecordsChecks

@main struct FuzzRecords {
    static func main() { fuzzMain(RecordsFuzzChecks.all) }
}
#else
import Foundation

@main struct FuzzRecords {
    static func main() {
        FileHandle.standardError.write(Data("fuzz-records needs a debug build or make fuzz (the checks use internal API)\n".utf8))
        exit(2)
    }
}
#endif
