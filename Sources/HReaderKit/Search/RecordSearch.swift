import Foundation
import HReaderModel
import HReaderStore

extension OpenVault {
    /// `hreader search`: the entries that mention every word of `text` (a word of three letters or
    /// more also as the start of a longer one), best first, for one patient or the whole family;
    /// struck entries left out. The index lives in the encrypted database (SearchRepository).
    public func search(_ text: String, patient: Patient? = nil, type: EntryType? = nil, limit: Int = 50) throws -> [SearchRepository.Hit] {
        let query = try Self.searchQuery(text)
        return try read { try SearchRepository(db).search(query, patientID: patient?.id, type: type, limit: limit) }
    }

    /// What a person typed, as a query; a usage error when it holds no word.
    static func searchQuery(_ text: String) throws -> SearchQuery {
        let query = SearchQuery(text)
        guard !query.words.isEmpty else { throw HReaderError.usage("give a word to search for (letters or digits)") }
        return query
    }
}
