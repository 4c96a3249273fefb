import HReaderModel

/// Whether the record an RHEx server answered for a feed id is the patient that id stands for.
///
/// hData does not say that a feed entry's id and the record's own `_id` are one value: hReader asked
/// for `/records/ID/c32/ID` with the feed's id and kept whatever came back, and servers that keep
/// their records as files name them `hs`, `js`, … in the feed while each record's `_id` is its
/// database key. So a record whose `_id` is simply another kind of key is the patient asked for.
/// It is refused only when it names another patient of the same feed:
/// - its `_id`, `id` or medical record number is another entry's feed id;
/// - or one of them is the identity of a record already read from this feed under another id (the
///   server answers two ids with one record);
/// - or it contradicts the feed entry asked for: the entry's title ("Last, First") names someone
///   else, by other family or given names.
///
///     var check = RHExRecordCheck(feed: entries)
///     if let refusal = check.admit(record.patient, askedFor: "hs") { throw … refusal … }
public struct RHExRecordCheck: Sendable {
    /// The feed's entries by id; nil when the feed could not be read (then only what was read is compared).
    private let feed: [String: RHExFeedEntry]?
    /// The identities of the records read so far, and the feed id each was read under.
    private var readUnder: [String: String] = [:]

    public init(feed: [RHExFeedEntry]?) {
        self.feed = feed.map { Dictionary($0.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }) }
    }

    /// What a record is known by: its own `_id` or `id` and its medical record number.
    public static func identities(of patient: MappedPatient) -> [String] { patient.statedIDs }

    /// Records the identities of a record read earlier (by an earlier import or sync) under `feedID`.
    public mutating func remember(_ identities: [String], readUnder feedID: String) {
        for identity in identities where readUnder[identity] == nil { readUnder[identity] = feedID }
    }

    /// Nil when `patient` may be the record of feed id `asked` (and then it is remembered);
    /// otherwise why not, in words for the message that refuses it.
    public mutating func admit(_ patient: MappedPatient, askedFor asked: String) -> String? {
        let identities = Self.identities(of: patient)
        for identity in identities where identity != asked {
            if let feed, feed[identity] != nil {
                return "the record names itself \(identity), another patient of the server's feed"
            }
            if let other = readUnder[identity], other != asked {
                return "it is the record the server gave for \(other) (\(identity))"
            }
        }
        if let entry = feed?[asked], let named = Self.contradiction(entry, patient) {
            return "the feed lists \(asked) as \(named), the record is of \(Self.display(patient))"
        }
        remember(identities, readUnder: asked)
        return nil
    }

    /// The feed entry's name when it names another person than the record: the family name, or the
    /// first given name, differs (compared folded). Nothing to compare (a title without a name, a
    /// record without one) is no contradiction.
    static func contradiction(_ entry: RHExFeedEntry, _ patient: MappedPatient) -> String? {
        guard entry.title.contains(",") else { return nil }
        let (given, family) = entry.name
        let titleFamily = FoldedText.of(family), titleGiven = FoldedText.of(given).split(separator: " ").first
        let recordFamily = FoldedText.of(patient.content.lastName), recordGiven = FoldedText.of(patient.content.firstName).split(separator: " ").first
        guard !titleFamily.isEmpty, let titleGiven, !recordFamily.isEmpty, let recordGiven else { return nil }
        return titleFamily == recordFamily && titleGiven == recordGiven ? nil : "\"\(entry.title)\""
    }

    static func display(_ patient: MappedPatient) -> String {
        "\"\(patient.content.lastName), \(patient.content.firstName)\""
    }
}
