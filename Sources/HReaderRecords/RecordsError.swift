/// Input that cannot be read as what it claims to be. The message names what is wrong and where,
/// e.g. `Bundle.entry[3].resource has no resourceType`.
public enum RecordsError: Error, Equatable, CustomStringConvertible {
    case malformed(String)

    public var description: String {
        switch self {
        case .malformed(let message): "malformed input: \(message)"
        }
    }
}
