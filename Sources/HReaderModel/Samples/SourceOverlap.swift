/// How the samples of one kind on one day (or one hour) are weighed when several sources wrote them,
/// as Apple Health does (issue 40, "one day, counted once"): a phone in a pocket and a watch on the
/// wrist both count the same walk, and their sum counts it twice.
///
/// - The source ranked first counts whole.
/// - A lower source counts only the part of each sample's time that no higher source covers,
///   prorated by time: 500 steps over 09:00–10:00, half of it under a watch's samples, count 250.
/// - A sample without length (start = end) counts whole unless a higher source covers its instant.
/// - A source never reduces itself: its own samples that overlap are summed, as before.
///
/// ```swift
/// let total = SourceOverlap.total([
///     .init(rank: 0, start: 8 * 3600, end: 10 * 3600, value: 2000),   // the watch
///     .init(rank: 1, start: 9 * 3600, end: 10 * 3600, value: 500),    // the phone, covered: 0
///     .init(rank: 1, start: 18 * 3600, end: 18 * 3600 + 600, value: 200),
/// ])   // 2200
/// ```
public enum SourceOverlap {
    public struct Sample: Sendable, Equatable {
        /// The source's place in the priority: lower counts first.
        public let rank: Int
        public let start: Int64
        public let end: Int64
        public let value: Double

        public init(rank: Int, start: Int64, end: Int64, value: Double) {
            self.rank = rank; self.start = start; self.end = end; self.value = value
        }
    }

    /// The samples' total, each source weighed against those ranked before it.
    public static func total(_ samples: [Sample]) -> Double {
        guard let firstRank = samples.first?.rank else { return 0 }
        if samples.allSatisfy({ $0.rank == firstRank }) { return samples.reduce(0) { $0 + $1.value } }
        let ordered = samples.sorted { $0.rank < $1.rank }
        var covered = Coverage()
        var total = 0.0
        var index = 0
        while index < ordered.count {
            let rank = ordered[index].rank
            var next = index
            while next < ordered.count, ordered[next].rank == rank { next += 1 }
            let group = ordered[index..<next]
            for sample in group {
                if sample.end > sample.start {
                    let length = sample.end - sample.start
                    let free = length - covered.length(from: sample.start, to: sample.end)
                    if free == length {
                        total += sample.value
                    } else if free > 0 {
                        total += sample.value * Double(free) / Double(length)
                    }
                } else if !covered.contains(sample.start) {
                    total += sample.value
                }
            }
            covered.add(group.filter { $0.end > $0.start }.map { ($0.start, $0.end) })
            index = next
        }
        return total
    }

    /// The time the sources ranked so far cover: sorted, disjoint half-open intervals.
    struct Coverage {
        private(set) var intervals: [(start: Int64, end: Int64)] = []

        /// The first interval that ends after `time`.
        private func firstEnding(after time: Int64) -> Int {
            var low = 0, high = intervals.count
            while low < high {
                let middle = (low + high) / 2
                if intervals[middle].end <= time { low = middle + 1 } else { high = middle }
            }
            return low
        }

        /// How much of [from, to) is covered.
        func length(from: Int64, to: Int64) -> Int64 {
            var covered: Int64 = 0
            var i = firstEnding(after: from)
            while i < intervals.count, intervals[i].start < to {
                covered += min(to, intervals[i].end) - max(from, intervals[i].start)
                i += 1
            }
            return covered
        }

        func contains(_ time: Int64) -> Bool {
            let i = firstEnding(after: time)
            return i < intervals.count && intervals[i].start <= time
        }

        /// Adds intervals (any order, overlapping or not), keeping the list merged.
        mutating func add(_ more: [(Int64, Int64)]) {
            guard !more.isEmpty else { return }
            let all = (intervals + more.map { (start: $0.0, end: $0.1) }).sorted { $0.start < $1.start }
            var merged: [(start: Int64, end: Int64)] = []
            merged.reserveCapacity(all.count)
            for interval in all {
                if let last = merged.last, interval.start <= last.end {
                    merged[merged.count - 1].end = max(last.end, interval.end)
                } else {
                    merged.append(interval)
                }
            }
            intervals = merged
        }
    }
}
