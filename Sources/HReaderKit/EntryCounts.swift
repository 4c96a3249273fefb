import HReaderModel

extension OpenVault {
    /// How many entries of each type the patient has, as `entries(of:)` would list them (one per
    /// fact, struck ones and Apple Health samples included): counted, never read. A `COUNT` over the
    /// entries and the series' own sample counts (migration 9), so a person with ten million samples
    /// is counted as fast as one with ten (issue 41).
    public func entryCounts(of patient: Patient) throws -> [EntryType: Int] {
        try read { try entries.countsByType(patientID: patient.id) }
    }
}
