/// A value SQLite stores: the bridge between Swift values and statement parameters and columns.
/// A model value too: a sample's value is one (`SampleRecord.value`). Binding is HReaderStore's
/// (`DatabaseValueConvertible`).
public enum DatabaseValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}
