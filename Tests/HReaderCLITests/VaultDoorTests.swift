import Dispatch
import Foundation
import HReaderCrypto
import HReaderModel
import HReaderNet
@testable import HReaderKit
import HReaderStore
import XCTest

/// `OpenVault` is the one door to its connection (docs/architecture.md, "One door to a connection"):
/// use cases called at once from many threads, and credential renewals written from other queues
/// (as `Authenticator.onChange` writes them from a host's queue during an import), take turns on the
/// one SQLCipher connection. On a real vault (SQLCipher, files on disk).
final class VaultDoorTests: XCTestCase {
    private var root: URL!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-door-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
    }

    override func tearDownWithError() throws {
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    /// Writers adding and annotating entries, readers listing, counting and searching them (a search
    /// ranks on the kept companion connection too), and two "hosts' queues" renewing their sources'
    /// credentials, all at once on one `OpenVault`: no error (no misuse, no transaction inside
    /// another, no busy connection), and the vault ends with exactly what was written.
    func testUseCasesFromManyThreadsAtOnceTakeTurnsAtTheDoor() throws {
        let service = VaultService(vault: Vault(root: root.appendingPathComponent("vault")))
        let password = SecretBytes(Array("Door-Passw0rd".utf8))
        _ = try service.create(password: password, kdf: .pbkdf2SHA256(iterations: 600_000))
        let vault = try service.open(.password(password))
        let patient = try vault.addPatient(NewPatient(firstName: "Ann", lastName: "Lee"))
        let hosts = try ["https://one.example.org/fhir", "https://two.example.org/fhir"].map { base in
            try vault.storeCredential(.bearer(token: "first"), server: try ServerURL(base), kind: .fhir, how: "auth bearer")
        }
        let before = try vault.counts()

        let writers = 4, entriesEach = 20, readers = 4, readsEach = 30, renewalsEach = 40
        let errors = Errors()
        let group = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        func spawn(_ name: String, _ work: @escaping @Sendable () throws -> Void) {
            group.enter()
            Thread.detachNewThread {
                start.wait()
                do { try work() } catch { errors.add("\(name): \(error)") }
                group.leave()
            }
        }
        for w in 0..<writers {
            spawn("writer \(w)") {
                for n in 0..<entriesEach {
                    let entry = try vault.addEntry(patient: patient, content: EntryContent(type: .condition, description: "Condition w\(w) n\(n)"))
                    if n % 4 == 0 { _ = try vault.updateUserFields(of: entry) { $0.comments = "noted by writer \(w)" } }
                }
            }
        }
        for r in 0..<readers {
            spawn("reader \(r)") {
                for n in 0..<readsEach {
                    // A read sees whole writes: every entry listed is whole, its fact group too.
                    let listed = try vault.entries(of: patient)
                    guard listed.allSatisfy({ $0.content.description.hasPrefix("Condition w") }) else { throw Failure("a stranger entry listed") }
                    _ = try vault.counts()
                    if n % 3 == 0 { _ = try vault.searchRecords("Condition", patient: patient, limit: 5) }
                    _ = try vault.allPatients()
                }
            }
        }
        for (h, sourceID) in hosts.enumerated() {
            let queue = DispatchQueue(label: "hreader.test.host.\(h)")
            group.enter()
            queue.async {
                start.wait()
                for n in 0..<renewalsEach {
                    do { try vault.storeRenewal(.bearer(token: "renewed \(h) \(n)"), sourceID: sourceID) } catch { errors.add("host \(h): \(error)") }
                }
                group.leave()
            }
        }
        for _ in 0..<(writers + readers + hosts.count) { start.signal() }
        XCTAssertEqual(group.wait(timeout: .now() + 300), .success, "the threads finished")

        XCTAssertEqual(errors.all, [], "no use failed")
        let after = try vault.counts()
        XCTAssertEqual(after.entries - before.entries, writers * entriesEach)
        XCTAssertEqual(try vault.entries(of: patient).count, writers * entriesEach)
        XCTAssertEqual(try vault.entries(of: patient).filter { $0.user.comments != nil }.count, writers * entriesEach / 4)
        // One audit line per entry added and per annotation; a renewal writes none.
        XCTAssertEqual(after.auditEvents - before.auditEvents, writers * entriesEach + writers * entriesEach / 4)
        for (h, sourceID) in hosts.enumerated() {
            let stored = try vault.read { try SourceRepository(vault.db).stored(id: sourceID) }
            XCTAssertEqual(try StoredCredentials.decode(kind: stored?.authKind ?? "", json: stored?.credentials),
                           .bearer(token: "renewed \(h) \(renewalsEach - 1)"), "each host's last renewal is kept")
        }
        XCTAssertNoThrow(try vault.verifyIntegrity())
    }
}

private struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What the threads report, under a lock.
private final class Errors: @unchecked Sendable {
    // @unchecked: `list` is read and written only under `lock`.
    private let lock = NSLock()
    private var list: [String] = []

    func add(_ error: String) {
        lock.lock()
        defer { lock.unlock() }
        list.append(error)
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return list
    }
}
