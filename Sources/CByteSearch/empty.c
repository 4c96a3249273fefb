// The target is its header (include/CByteSearch.h); SwiftPM wants a source file.
