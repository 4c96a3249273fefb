/// The narrative a C-CDA document's references point into (`originalText/reference`,
/// `text/reference`: `#id` is the element with that `ID`, the first one in the document), read only
/// when a reference asks.
///
/// The index holds positions, not texts: the text of an element is that of all it holds, so storing
/// it for every element with an `ID` multiplied the document by its nesting depth (security review 3,
/// M-2: a 4 MB document took 651 MB). Each text is cut at `maxTextBytes`, and all references together
/// spend one allowance proportional to the document (elements walked, bytes read, and bytes handed
/// out again from the cache, so a thousand references to one large element cost what a thousand
/// copies would): past it a reference resolves to nothing, as one that points nowhere, and the entry
/// lacks that text. What the cache keeps was read, so it stays within the allowance too.
///
///     let narrative = CCDANarrative(tree: root.tree)
///     narrative.text(forID: "sig1")   // "Lisinopril 10 mg by mouth once daily"
///
/// A class, used by one mapping on one thread: the mapping's builders read it from non-mutating
/// methods, and its cache and allowance are the document's, shared by all of them.
final class CCDANarrative {
    /// The most text one reference gives (a narrative cell or row is far shorter).
    static let maxTextBytes = 64 << 10

    private let tree: CDATree
    /// `ID` → the position of its element; built on the first reference.
    private lazy var targets: [String: Int32] = Self.index(tree)
    private var texts: [Int32: String] = [:]
    /// What references may still spend: one per element walked, per byte read, per byte handed out again.
    private(set) var remaining: Int

    init(tree: CDATree) {
        self.tree = tree
        // Four times the document (and a floor for small ones): an honest document's references
        // ask for each cell or row once or twice, a hostile one cannot ask for more than this.
        remaining = 4 * (tree.nodes.count + tree.bytes.count) + (1 << 20)
    }

    /// The text of the element with that `ID`; nil when none has it, when it has no text, or once
    /// the document's allowance is spent.
    func text(forID id: String) -> String? {
        guard let element = targets[id] else { return nil }
        return text(of: element)
    }

    /// The plain text of an element, at most `maxTextBytes` of it: walked once, its elements and
    /// bytes paid for then, and its bytes again each time it is handed out after.
    func text(of element: Int32) -> String? {
        if let known = texts[element] {
            guard known.utf8.count <= remaining else { return nil }
            remaining -= known.utf8.count
            return known.isEmpty ? nil : known
        }
        guard remaining > 0 else { return nil }
        let bytes = min(Self.maxTextBytes, remaining)
        var allowance = CDAElement.TextAllowance(bytes: bytes, elements: remaining)
        let walked = CDAElement(tree: tree, index: element).plainText(leavingOut: nil, within: &allowance)
        // Stopped for want of allowance, not at the cap: not the element's text, and nothing left to walk.
        guard allowance.elements > 0, allowance.bytes > 0 || bytes == Self.maxTextBytes else {
            remaining = 0
            return nil
        }
        remaining = max(0, allowance.elements - (bytes - allowance.bytes))
        texts[element] = walked
        return walked.isEmpty ? nil : walked
    }

    /// The bytes of the texts kept for references to come: never more than the allowance.
    var keptBytes: Int { texts.values.reduce(0) { $0 + $1.utf8.count } }

    /// Every element with an `ID`, the first of each: one pass over the elements in document order.
    private static func index(_ tree: CDATree) -> [String: Int32] {
        var targets: [String: Int32] = [:]
        for element in tree.elements {
            if let id = element[attribute: "ID"], targets[id] == nil { targets[id] = element.index }
        }
        return targets
    }
}
