import Foundation

/// The words of a provider's name as the directory's search compares them: lower case, accents
/// folded ("Hôpital" is "hopital"), apostrophes dropped ("St. Mary's" is "saint marys"), every
/// other mark a space, and the usual abbreviations written out ("St." → saint, "Mt." → mount).
///
///     DirectoryText.words("St. Mary's Hôpital")   // ["saint", "marys", "hopital"]
///     DirectoryText.similarity("hospitl", "hospital")   // .oneEdit
public enum DirectoryText {
    /// Abbreviations as names of providers use them, and what they stand for.
    public static let abbreviations: [String: String] = [
        "st": "saint", "ste": "sainte", "mt": "mount", "ft": "fort", "hosp": "hospital", "ctr": "center", "cntr": "center",
        "univ": "university", "assn": "association", "assoc": "associates", "med": "medical", "reg": "regional", "hlth": "health",
        "sys": "system", "dept": "department", "natl": "national", "intl": "international",
    ]

    public static func words(_ text: String) -> [String] {
        // Plain ASCII (most names) is folded here; Foundation's folding is for the rest.
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            var words: [String] = []
            var word: [UInt8] = []
            func flush() {
                guard !word.isEmpty else { return }
                let text = String(decoding: word, as: UTF8.self)
                words.append(abbreviations[text] ?? text)
                word.removeAll(keepingCapacity: true)
            }
            for byte in text.utf8 {
                switch byte {
                case 0x27: continue   // an apostrophe joins
                case 0x30...0x39, 0x61...0x7a: word.append(byte)
                case 0x41...0x5a: word.append(byte + 0x20)
                default: flush()
                }
            }
            flush()
            return words
        }
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        var words: [String] = []
        var word = ""
        func flush() {
            guard !word.isEmpty else { return }
            words.append(abbreviations[word] ?? word)
            word = ""
        }
        for scalar in folded.unicodeScalars {
            if scalar == "'" || scalar == "\u{2019}" || scalar == "\u{02bc}" { continue }
            if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
                word.unicodeScalars.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
            } else {
                flush()
            }
        }
        flush()
        return words
    }

    /// How a query word matches a directory word.
    public enum Similarity: Int, Comparable, Sendable {
        case none = 0
        /// One letter added, dropped, changed, or two swapped (words of four letters or more).
        case oneEdit = 1
        /// The word starts with the query word (two letters or more): typing is not finished.
        case prefix = 2
        case exact = 3

        public static func < (a: Similarity, b: Similarity) -> Bool { a.rawValue < b.rawValue }
    }

    public static func similarity(_ query: String, _ word: String) -> Similarity {
        similarity(Array(query.utf8)[...], Array(word.utf8)[...])
    }

    /// The same over UTF-8 bytes (the search compares bytes of its index without making strings).
    public static func similarity(_ query: ArraySlice<UInt8>, _ word: ArraySlice<UInt8>) -> Similarity {
        query.withUnsafeBufferPointer { q in word.withUnsafeBufferPointer { w in similarity(q, w) } }
    }

    public static func similarity(_ q: UnsafeBufferPointer<UInt8>, _ w: UnsafeBufferPointer<UInt8>) -> Similarity {
        let m = q.count, n = w.count
        if m == 0 { return .none }
        if m <= n {
            var i = 0
            while i < m && q[i] == w[i] { i += 1 }
            if i == m { return m == n ? .exact : (m >= 2 ? .prefix : .none) }
        }
        guard m >= 4, n >= 4, abs(m - n) <= 1 else { return .none }
        return withinOneEdit(q, w) ? .oneEdit : .none
    }

    /// Damerau–Levenshtein distance ≤ 1, for words whose lengths differ by at most one.
    static func withinOneEdit(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let m = a.count, n = b.count
        var i = 0
        while i < m && i < n && a[i] == b[i] { i += 1 }
        if i == m && i == n { return true }
        if m == n {
            // A change at i, or a swap of i and i+1.
            if i + 1 < m && a[i] == b[i + 1] && a[i + 1] == b[i] && tailEqual(a, i + 2, b, i + 2) { return true }
            return tailEqual(a, i + 1, b, i + 1)
        }
        return m > n ? tailEqual(a, i + 1, b, i) : tailEqual(a, i, b, i + 1)
    }

    private static func tailEqual(_ a: UnsafeBufferPointer<UInt8>, _ i: Int, _ b: UnsafeBufferPointer<UInt8>, _ j: Int) -> Bool {
        guard a.count - i == b.count - j else { return false }
        var i = i, j = j
        while i < a.count {
            if a[i] != b[j] { return false }
            i += 1
            j += 1
        }
        return true
    }
}
