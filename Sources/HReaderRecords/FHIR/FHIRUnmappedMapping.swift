import HReaderJSON
import HReaderModel

extension FHIREntryMapping {
    /// A resource of a type without a mapping, read leniently (a member of an unexpected shape is
    /// ignored, not an error): described as "Type: label", with its status, the codes of its label
    /// (or of `code`) and its date. The type's line in `fhirUnmappedTypeTable` says where its date
    /// and label are; the generic elements are read when the table gives nothing.
    func unmapped(_ r: JSONReader, type: String) -> EntryContent {
        let known = FHIRUnmappedType.byType[type]
        let label = known.flatMap { labelled(r.object, paths: $0.labelPaths) } ?? genericLabel(r)
        let codes = label?.concept?.codes ?? ((try? r.concept("code")) ?? nil)?.codes ?? [:]
        var content = EntryContent(type: .observation, description: label.map { "\(type): \($0.text)" } ?? type,
                                   status: (try? r.status("status")) ?? nil, codes: codes)
        if !dated(&content, r.object, paths: known?.datePaths ?? []) {
            dated(&content, r.object, paths: Self.genericDatePaths)
        }
        return content
    }

    /// Where resources of types outside the table usually keep their time.
    static let genericDatePaths = ["effectiveDateTime", "occurrenceDateTime", "authoredOn", "created", "date",
                                   "recordedDate", "issued", "period", "effectivePeriod", "occurrencePeriod"].map { [$0] }

    /// `code`, else `title`, else `description`, else the first `category`.
    private func genericLabel(_ r: JSONReader) -> (text: String, concept: Concept?)? {
        labelled(r.object, paths: [["code"], ["title"], ["description"], ["category"]])
    }

    /// The first path that names something: a string, a CodeableConcept or Coding (text, display,
    /// code), a Reference (its display).
    private func labelled(_ object: JSONObject, paths: [[String]]) -> (text: String, concept: Concept?)? {
        for path in paths {
            switch Self.value(at: path, in: object) {
            case .string(let text)?:
                if let text = nonEmpty(text) { return (text, nil) }
            case .object(let element)?:
                if ["coding", "text", "code"].allSatisfy({ element.present($0) == nil }) {
                    // A Reference (or a Coding with only a display): its display.
                    if let display = element["display"]?.string.flatMap(nonEmpty) { return (display, nil) }
                    continue
                }
                if let concept = try? JSONReader(element, path: path.joined(separator: ".")).asConcept(),
                   let text = concept.description {
                    return (text, concept)
                }
            default:
                continue
            }
        }
        return nil
    }

    /// Sets the date (a date, dateTime or instant) or the start and end (a Period) from the first
    /// path that holds one; false when none does. Text that is not a FHIR date is passed over.
    @discardableResult
    private func dated(_ content: inout EntryContent, _ object: JSONObject, paths: [[String]]) -> Bool {
        for path in paths {
            switch Self.value(at: path, in: object) {
            case .string(let text)?:
                if let time = FHIRTime.parse(text, zone: zone) { content.date = time; return true }
            case .object(let period)?:
                let reader = JSONReader(period, path: path.joined(separator: "."))
                let start = (try? reader.time("start", zone: zone)) ?? nil
                let end = (try? reader.time("end", zone: zone)) ?? nil
                if start != nil || end != nil { (content.start, content.end) = (start, end); return true }
            default:
                continue
            }
        }
        return false
    }

    /// The value at a dotted path; an array on the way (or at the end) gives its first item.
    static func value(at path: [String], in object: JSONObject) -> JSONValue? {
        var current = JSONValue.object(object)
        for key in path {
            guard var next = current.object?.present(key) else { return nil }
            if let items = next.array {
                guard let first = items.first(where: { !$0.isNull }) else { return nil }
                next = first
            }
            current = next
        }
        return current
    }
}
