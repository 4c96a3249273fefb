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

    /// An element a reference points to, and the table it lies in (-1: none).
    struct Target {
        let element: Int32
        let table: Int32
    }

    private let tree: CDATree
    /// `ID` → the position of its element and of its table; built on the first reference.
    private lazy var targets: [String: Target] = Self.index(tree)
    private var texts: [Int32: String] = [:]
    /// A table → the words of its columns' headers.
    private var columns: [Int32: [Set<String>]] = [:]
    /// What references may still spend: one per element walked, per byte read, per byte handed out again.
    private(set) var remaining: Int

    init(tree: CDATree) {
        self.tree = tree
        // Four times the document (and a floor for small ones): an honest document's references
        // ask for each cell or row once or twice, a hostile one cannot ask for more than this.
        remaining = 4 * (tree.nodes.count + tree.bytes.count) + (1 << 20)
    }

    /// The element with that `ID`, nil when none has it.
    func target(forID id: String) -> Target? { targets[id] }

    /// The text of the element with that `ID`; nil when none has it, when it has no text, or once
    /// the document's allowance is spent.
    func text(forID id: String) -> String? {
        guard let target = targets[id] else { return nil }
        return text(of: target.element)
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

    /// The text of a table row's cell in the first column whose header has a word of `headers`,
    /// the earlier sets first ("Sig" before "Instructions"), and none of `excluding` ("Fill
    /// Instructions" are the pharmacy's). Nil when the row is in no table with such a header, or
    /// has no cell of its own there.
    func cell(of row: Target, under headers: [Set<String>], excluding: Set<String> = []) -> String? {
        guard row.table >= 0 else { return nil }
        let words = columnWords(of: row.table)
        let column = headers.lazy.compactMap { wanted in
            words.firstIndex { !$0.isDisjoint(with: wanted) && $0.isDisjoint(with: excluding) }
        }.first
        guard let column else { return nil }
        var at = 0
        for cell in CDAElement(tree: tree, index: row.element).children where cell.name == "td" || cell.name == "th" {
            if at == column { return text(of: cell.index) }
            at += Self.span(cell)
            if at > column { return nil }   // a cell spanning the column is not the column's own
        }
        return nil
    }

    /// The lower-case words of a header ("Sig Text" → sig, text).
    static func words(_ text: String) -> Set<String> {
        Set(text.lowercased().split { !$0.isLetter }.map(String.init))
    }

    /// The words of each column's header, a header repeated over the columns it spans: the
    /// table's `thead` row, else its first row when that holds only `th` cells. Read once a table.
    private func columnWords(of table: Int32) -> [Set<String>] {
        if let known = columns[table] { return known }
        let element = CDAElement(tree: tree, index: table)
        let firstRow = element.children.first { $0.name == "tr" }
            ?? element.children.first { $0.name == "tbody" }?.children.first { $0.name == "tr" }
        let head = element.children.first { $0.name == "thead" }?.children.first { $0.name == "tr" }
            ?? firstRow.flatMap { row in
                let cells = row.children.filter { $0.name == "td" || $0.name == "th" }
                return !cells.isEmpty && cells.allSatisfy { $0.name == "th" } ? row : nil
            }
        var words: [Set<String>] = []
        for cell in head?.children.filter({ $0.name == "td" || $0.name == "th" }) ?? [] {
            words += Array(repeating: Self.words(text(of: cell.index) ?? ""), count: Self.span(cell))
            if words.count > 1_000 { break }
        }
        columns[table] = words
        return words
    }

    private static func span(_ cell: CDAElement) -> Int {
        cell[attribute: "colspan"].flatMap { Int($0) }.map { min(max($0, 1), 1_000) } ?? 1
    }

    /// Every element with an `ID`, the first of each, with its nearest enclosing table: one walk
    /// of the tree in document order.
    private static func index(_ tree: CDATree) -> [String: Target] {
        var targets: [String: Target] = [:]
        guard !tree.nodes.isEmpty else { return targets }
        var ancestors: [(element: Int32, table: Int32)] = []
        var element: Int32 = 0, table: Int32 = -1
        while true {
            if let span = tree.attribute(of: element, named: "ID", namespace: 0) {
                let id = tree.string(span)
                if targets[id] == nil { targets[id] = Target(element: element, table: table) }
            }
            let node = tree.nodes[Int(element)]
            if node.firstChild >= 0 {
                ancestors.append((element, table))
                if tree.names[Int(node.name)] == "table" { table = element }
                element = node.firstChild
                continue
            }
            while tree.nodes[Int(element)].nextSibling < 0 {
                guard let parent = ancestors.popLast() else { return targets }
                (element, table) = parent
            }
            element = tree.nodes[Int(element)].nextSibling
        }
    }
}
