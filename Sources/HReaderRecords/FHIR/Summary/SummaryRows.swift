import Foundation
import HReaderJSON
import HReaderModel

/// The summary's lines as a person reads them, for the printable page and the IPS document's
/// narratives: measurements through the export's mapping, a single number in the units every view
/// shows (`ReadableUnits`).
extension ClinicalSummary {
    public func rows(_ section: SummarySection) -> [SummaryRow] {
        rowsWithoutChecks(section).map { row in
            var row = row
            row.verification = verifications[row.entry.id]
            return row
        }
    }

    private func rowsWithoutChecks(_ section: SummarySection) -> [SummaryRow] {
        let planner = section == .results || section == .vitalSigns ? self.planner : nil
        return entries(in: section).map { entry in
            let c = entry.content
            func day(_ time: ClinicalTime?) -> String? { time.map { String($0.text.prefix(10)) } }
            func joined(_ parts: [String?]) -> String? {
                let kept = parts.compactMap { $0?.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
                return kept.isEmpty ? nil : kept.joined(separator: "; ")
            }
            switch section {
            case .problems:
                return SummaryRow(entry: entry, text: c.description, detail: nil, date: day(c.start ?? c.date))
            case .allergies:
                return SummaryRow(entry: entry, text: c.description, detail: joined([c.reaction, c.severity]), date: day(c.start ?? c.date))
            case .medications:
                return SummaryRow(entry: entry, text: c.description,
                                  detail: joined([c.dose ?? entry.user.patientDose, entry.user.patientDirections]), date: day(c.start ?? c.date))
            case .immunizations:
                return SummaryRow(entry: entry, text: c.description, detail: nil, date: day(c.effectiveTime))
            case .results, .vitalSigns:
                let draft = planner?.draft(for: entry, withoutLOINC: true)
                // A single number reads as on every other view (ReadableUnits); panels and text as the export maps them.
                let value: String?
                if case .quantity? = draft?.value, let shown = entry.readableQuantity { value = shown.text }
                else { value = draft.flatMap { Self.text(of: $0.value) } ?? entry.displayValue }
                return SummaryRow(entry: entry, text: c.description, detail: value, date: day(c.effectiveTime))
            }
        }
    }

    /// "72 /min", "120/80 mm[Hg]", "109/? mm[Hg]", "22.4 kg/m²", "Never smoker": units as every view
    /// shows them (`ReadableUnits.display` of the UCUM code the export chose).
    static func text(of value: ObservationDraft.Value) -> String? {
        func number(_ q: ObservationDraft.Quantity) -> String { JSONNumber.text(q.value) ?? "null" }
        func unit(_ q: ObservationDraft.Quantity) -> String { q.ucum.map(ReadableUnits.display) ?? q.unit }
        func withUnit(_ text: String, _ unit: String) -> String { unit.isEmpty ? text : text + " " + unit }
        switch value {
        case .none: return nil
        case .text(let text): return text
        case .quantity(let q): return withUnit(number(q), unit(q))
        case .bloodPressure(let systolic, let diastolic):
            var unitText = ""
            func reading(_ c: ObservationDraft.Component) -> String {
                guard case .quantity(let q) = c else { return "?" }
                unitText = unit(q)
                return number(q)
            }
            let text = reading(systolic) + "/" + reading(diastolic)
            return withUnit(text, unitText)
        }
    }
}
