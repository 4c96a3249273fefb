import HReaderModel

/// Migration 3's second half, in its transaction: the Apple Health `Record` entries a vault of
/// schema 2 holds move into the samples tables, nothing lost. An entry moves only when its sample
/// gives back the same entry (same raw JSON, content and remote id); one the user has annotated
/// (comments, patient fields, strike-through), one marked missing, and blood-pressure Records
/// (which correlations take back) stay entries.
enum SampleMigration {
    static func moveRecordEntries(_ db: Database) throws {
        let ids = try db.query("""
            SELECT e.id FROM entries e JOIN sources s ON s.id = e.source_id
            WHERE s.kind = 'apple-health' AND substr(e.raw, 1, 19) = '{"element":"Record"'
              AND e.comments IS NULL AND e.patient_quantity IS NULL AND e.patient_dose IS NULL AND e.patient_directions IS NULL
              AND e.patient_prescriber IS NULL AND e.user_deleted = 0 AND e.missing_at_source IS NULL
              AND json_valid(e.raw) AND json_type(e.raw, '$.children') IS NULL
              AND json_extract(e.raw, '$.type') NOT IN ('HKQuantityTypeIdentifierBloodPressureSystolic', 'HKQuantityTypeIdentifierBloodPressureDiastolic')
            ORDER BY e.patient_id, e.source_id, coalesce(e.date_epoch, e.start_epoch, e.end_epoch), e.id
            """) { $0.int64(0)! }
        guard !ids.isEmpty else { return }
        let attributes = try db.prepare("SELECT key, value FROM json_each(?) WHERE key NOT IN ('element', 'metadata') ORDER BY id")
        let metadata = try db.prepare("SELECT key, value FROM json_each(?, '$.metadata') ORDER BY id")
        let remove = try db.prepare("DELETE FROM entries WHERE id = ?")
        let entries = EntryRepository(db)
        let samples = SampleRepository(db: db)
        var writers: [String: SampleWriter] = [:]
        for id in ids {
            guard let entry = try entries.get(id: id), let raw = entry.content.raw else { continue }
            func pairs(_ statement: Statement) throws -> [(String, String)] {
                try statement.bind([raw])
                var out: [(String, String)] = []
                while try statement.step() { out.append((statement.string(0) ?? "", statement.string(1) ?? "")) }
                statement.reset()
                return out
            }
            let attributePairs = try pairs(attributes).map { (name: $0.0, value: $0.1) }
            let metadataPairs = try pairs(metadata).map { (key: $0.0, value: $0.1) }
            let writerKey = "\(entry.patientID) \(entry.sourceID)"
            if writers[writerKey] == nil { writers[writerKey] = try SampleWriter(db, patientID: entry.patientID, recordID: nil, sourceID: entry.sourceID, dayTotals: false, counts: false) }
            let writer = writers[writerKey]!
            let mapping = SeriesMapping(type: entry.content.type, description: entry.content.description, codes: entry.content.codes)
            // Savepoint: a sample that would not give the entry back is undone, and the entry stays.
            try db.execute("SAVEPOINT sample")
            guard let _ = try writer.add(attributes: attributePairs, metadata: metadataPairs, mapping: { _ in mapping }) else {
                try db.execute("RELEASE sample")
                continue
            }
            let sampleID = try db.scalarInt("SELECT max(id) FROM samples") ?? 0
            let back = try samples.get(id: sampleID)
            if let back, back.content == entry.content, back.remoteID == entry.remoteID {
                try remove.bind([id])
                try remove.step()
                remove.reset()
                try db.execute("RELEASE sample")
            } else {
                try db.execute("ROLLBACK TO sample")
                try db.execute("RELEASE sample")
                try writer.forgetSeries()
            }
        }
        for writer in writers.values { try writer.finish() }
    }
}
