/// A small deterministic generator (SplitMix64). Every sample gets its own, seeded from the run's
/// seed, a stream tag and its index, so any sample can be recomputed on its own (the blood-pressure
/// records are written twice, top-level and inside their correlation, and must be identical).
struct SampleRandom {
    private var state: UInt64

    init(seed: UInt64, stream: UInt64, index: Int) {
        var mixer = SampleRandom(rawState: (seed &* 0x9E37_79B9_7F4A_7C15) ^ (stream &* 0xD1B5_4A32_D192_ED03))
        let base = mixer.next()
        state = base ^ (UInt64(truncatingIfNeeded: index) &* 0x94D0_49BB_1331_11EB)
        _ = next()
    }

    private init(rawState: UInt64) { state = rawState }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in `range` (inclusive bounds; an empty-width range returns its bound).
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) &+ 1
        if width == 0 { return Int(truncatingIfNeeded: next()) }
        return range.lowerBound + Int(next() % width)
    }

    /// Uniform in 0..<upper; 0 when upper <= 0.
    mutating func below(_ upper: Int) -> Int {
        upper <= 0 ? 0 : Int(next() % UInt64(upper))
    }

    /// True with the given probability in percent.
    mutating func percent(_ chance: Int) -> Bool { below(100) < chance }

    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// Stream tags, one per kind of thing generated.
enum Stream {
    static let me: UInt64 = 1
    static let bloodPressure: UInt64 = 2
    static let workout: UInt64 = 3
    static let summary: UInt64 = 4
    static let clinical: UInt64 = 5
    static let route: UInt64 = 6
    static let recordBase: UInt64 = 100
}
