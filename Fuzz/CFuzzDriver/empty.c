// CFuzzDriver only declares LLVMFuzzerRunDriver (include/CFuzzDriver.h); SwiftPM wants one source file.
