import HReaderModel
import HReaderRecords
import HReaderStore

/// An export's Observation drafts in the order they are written, read from the vault as they are
/// asked for: one pass over the patient's entries (`EntryCursor`, samples without their raw JSON,
/// which no draft reads) through `ExportPlanner.Pass`.
struct ExportDrafts {
    private var cursor: EntryCursor
    private var pass: ExportPlanner.Pass
    /// Each sample series' place in the source priority (`SourcePriority`), for the summed buckets.
    private let sourceRanks: [Int64: Int]
    private var ready: [ObservationDraft] = []
    private var finished = false

    init(_ db: Database, patient: Patient, planner: ExportPlanner) throws {
        pass = ExportPlanner.Pass(planner)
        cursor = try EntryCursor(db, patientID: patient.id, types: planner.options.types, from: pass.earliestNeeded, raw: false)
        if planner.options.grouping == .none {
            sourceRanks = [:]
        } else {
            let series = try SampleReadings(db).series(patientID: patient.id)
            let ranks = try SourcePriority.load(db).ranks(series.map(\.source))
            sourceRanks = Dictionary(uniqueKeysWithValues: series.map { ($0.id, ranks[$0.source] ?? Int.max) })
        }
    }

    /// What was sent and left out so far (all of it once `next` has returned nothing).
    var plan: ExportPlan { pass.plan }

    /// The next `count` drafts; fewer only at the end, none once all were handed out.
    mutating func next(_ count: Int) throws -> [ObservationDraft] {
        var out: [ObservationDraft] = []
        while ready.count < count, !finished {
            if let entry = try cursor.next() {
                pass.add(entry, sourceRank: cursor.lastSeriesID.flatMap { sourceRanks[$0] }) { out += $0 }
            } else {
                pass.finish { out += $0 }
                finished = true
            }
            ready += out
            out.removeAll(keepingCapacity: true)
        }
        out = Array(ready.prefix(count))
        ready.removeFirst(out.count)
        return out
    }
}
