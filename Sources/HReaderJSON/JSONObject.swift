/// A JSON object with its members in source order. Lookup takes the last member of a name, as
/// most parsers do; the parser keeps every member, repeated names included, so nothing is lost.
/// It is also the collection of its members (`for (key, value) in object`, `insert`, `firstIndex`).
///
/// ```swift
/// var members: JSONObject = [("resourceType", "Patient"), ("id", "p1")]
/// members.append(("active", true))
/// members["id"]                       // .string("p1")
/// JSONValue.object(members).serialized()   // {"resourceType":"Patient","id":"p1","active":true}
/// ```
public struct JSONObject: Equatable, Sendable, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    public typealias Member = (key: String, value: JSONValue)

    public var members: [Member]

    public init() { members = [] }
    public init(_ members: [Member]) { self.members = members }
    public init(arrayLiteral members: Member...) { self.members = members }
    public init(dictionaryLiteral members: (String, JSONValue)...) { self.members = members.map { (key: $0.0, value: $0.1) } }

    /// The dictionary's entries as members, sorted by key (a dictionary has no order of its own).
    ///
    ///     JSONObject(sortingKeysOf: ["b": 2, "a": 1], JSONValue.int)   // {"a":1,"b":2}
    public init<Value>(sortingKeysOf dictionary: [String: Value], _ value: (Value) throws -> JSONValue) rethrows {
        members = try dictionary.keys.sorted().map { ($0, try value(dictionary[$0]!)) }
    }

    public var keys: [String] { members.map(\.key) }

    /// A plain loop from the end: objects in FHIR are small, and this runs for every member read.
    private func lastIndex(of key: String) -> Int? {
        var i = members.count - 1
        while i >= 0 {
            if members[i].key == key { return i }
            i -= 1
        }
        return nil
    }

    /// The value of the last member named `key`. Setting replaces that member's value in place, or
    /// appends a member; setting nil removes every member of the name.
    public subscript(key: String) -> JSONValue? {
        get { lastIndex(of: key).map { members[$0].value } }
        set {
            switch (lastIndex(of: key), newValue) {
            case (let i?, let value?): members[i].value = value
            case (_?, nil): members.removeAll { $0.key == key }
            case (nil, let value?): members.append((key, value))
            case (nil, nil): break
            }
        }
    }

    /// The member's value unless it is absent or null.
    public func present(_ key: String) -> JSONValue? {
        guard let value = self[key], !value.isNull else { return nil }
        return value
    }

    public var json: JSONValue { .object(self) }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        a.members.elementsEqual(b.members) { $0.key == $1.key && $0.value == $1.value }
    }
}

extension JSONObject: RandomAccessCollection, MutableCollection, RangeReplaceableCollection {
    public var startIndex: Int { members.startIndex }
    public var endIndex: Int { members.endIndex }

    public subscript(position: Int) -> Member {
        get { members[position] }
        set { members[position] = newValue }
    }

    public mutating func replaceSubrange<Members: Collection<Member>>(_ range: Range<Int>, with newMembers: Members) {
        members.replaceSubrange(range, with: newMembers)
    }
}
