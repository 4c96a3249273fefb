// SwiftPM builds a C target from at least one source; the header is the whole of it.
