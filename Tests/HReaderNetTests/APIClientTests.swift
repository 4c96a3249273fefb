import Foundation
import HReaderNet
import TestSupport
import XCTest

/// The per-host clients against real sample-server processes on 127.0.0.1.
final class APIClientTests: XCTestCase {
    var workDir: URL!

    override func setUpWithError() throws {
        workDir = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-net-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDir)
    }

    private func stats(_ server: SampleServer) throws -> [String: Any] { try server.json("/probe/stats") }

    private func work(_ server: SampleServer, _ i: Int, ms: Int) -> HTTPRequest {
        HTTPRequest(url: URL(string: "\(server.base.absoluteString)/probe/work?i=\(i)&ms=\(ms)")!)
    }

    /// 50 calls submitted at once to one host: the server sees one at a time, in submission order.
    func testFiftyConcurrentCallsToOneHostAreServedOneAtATimeInOrder() async throws {
        let server = try SampleServer(workDir: workDir)
        let clients = APIClients()
        let client = try clients.client(for: server.base)
        XCTAssertTrue(client === (try clients.client(for: URL(string: server.base.absoluteString + "/fhir/metadata")!)), "one client per origin")

        let pending = (0..<50).map { client.submit(work(server, $0, ms: 5)) }
        let answers = try await withThrowingTaskGroup(of: Int.self) { group in
            for p in pending { group.addTask { try await p.value.status } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        XCTAssertEqual(answers.count, 50)
        XCTAssertTrue(answers.allSatisfy { $0 == 200 })
        let s = try stats(server)
        XCTAssertEqual(s["max_in_flight"] as? Int, 1, "one request in flight per host")
        XCTAssertEqual(s["order"] as? [Int], Array(0..<50), "served in submission order")

        // Fifty tasks racing through the async form are also never concurrent.
        _ = try server.json("/probe/reset", method: "POST")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for request in (0..<50).map({ work(server, $0, ms: 2) }) { group.addTask { _ = try await client.send(request) } }
            try await group.waitForAll()
        }
        XCTAssertEqual(try stats(server)["max_in_flight"] as? Int, 1)
        XCTAssertEqual((try stats(server)["order"] as? [Int])?.count, 50)
    }

    /// Two hosts proceed in parallel: their requests overlap in time.
    func testTwoHostsOverlap() async throws {
        let a = try SampleServer(workDir: workDir), b = try SampleServer(workDir: workDir)
        let clients = APIClients()
        let ca = try clients.client(for: a.base), cb = try clients.client(for: b.base)
        XCTAssertFalse(ca === cb)
        let pa = (0..<6).map { ca.submit(work(a, $0, ms: 150)) }
        let pb = (0..<6).map { cb.submit(work(b, $0, ms: 150)) }
        for p in pa + pb { _ = try await p.value }
        let ia = (try stats(a)["intervals"] as? [[Double]]) ?? [], ib = (try stats(b)["intervals"] as? [[Double]]) ?? []
        XCTAssertEqual(ia.count, 6)
        XCTAssertEqual(ib.count, 6)
        XCTAssertEqual(try stats(a)["max_in_flight"] as? Int, 1)
        XCTAssertEqual(try stats(b)["max_in_flight"] as? Int, 1)
        let overlapping = ia.contains { x in ib.contains { y in x[0] < y[1] && y[0] < x[1] } }
        XCTAssertTrue(overlapping, "requests to two hosts should run at the same time")
    }

    /// The blocking form works from outside, and fails at once (no deadlock) from the host's own queue.
    func testBlockingCallFromOwnQueueFailsFast() async throws {
        let server = try SampleServer(workDir: workDir)
        let client = try APIClients().client(for: server.base)
        let request = work(server, 1, ms: 1)
        XCTAssertEqual(try client.sendBlocking(request).status, 200)
        let started = Date()
        do {
            _ = try await client.exclusively { try client.sendBlocking(request) }
            XCTFail("a blocking call from the client's own queue must fail")
        } catch let error as NetError {
            guard case .reentrantBlockingCall = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertEqual(try client.sendBlocking(request).status, 200, "the queue still works afterwards")
    }

    func testRetryAfterIsHonoured() async throws {
        let server = try SampleServer(["--faults"], workDir: workDir)
        let clients = APIClients()
        let fhir = try FHIRClient(base: URL(string: server.base.absoluteString + "/faults/429/fhir")!, clients: clients)
        let started = Date()
        let batch = try await fhir.searchPatients([("_count", "100")])
        XCTAssertEqual(batch.records.count, 3)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.9, "waited for Retry-After: 1")
    }

    func testRetriesAreBounded() async throws {
        let server = try SampleServer(["--faults"], workDir: workDir)
        var configuration = NetworkConfiguration()
        configuration.maxRetries = 2
        let fhir = try FHIRClient(base: URL(string: server.base.absoluteString + "/faults/503/fhir")!, clients: APIClients(configuration: configuration))
        do {
            _ = try await fhir.capability()
            XCTFail("expected a 503 error")
        } catch let NetError.status(code, _, _) {
            XCTAssertEqual(code, 503)
        }
        XCTAssertEqual(try server.json("/probe/stats")["requests"] as? Int, 3, "one try and two retries")
    }

    func testResponseSizeLimit() async throws {
        let server = try SampleServer(["--faults"], workDir: workDir)
        for mode in ["huge", "huge-length"] {
            let fhir = try FHIRClient(base: URL(string: "\(server.base.absoluteString)/faults/\(mode)/fhir")!, clients: APIClients())
            do {
                _ = try await fhir.everything(patientID: "p1")
                XCTFail("expected the size limit to stop \(mode)")
            } catch let NetError.responseTooLarge(_, limit) {
                XCTAssertEqual(limit, 10 << 20)
            }
        }
    }

    func testStalledServerTimesOut() async throws {
        let server = try SampleServer(["--faults"], workDir: workDir)
        var configuration = NetworkConfiguration()
        configuration.readTimeout = 1
        let fhir = try FHIRClient(base: URL(string: server.base.absoluteString + "/faults/stall/fhir")!, clients: APIClients(configuration: configuration))
        let started = Date()
        do {
            _ = try await fhir.everything(patientID: "p1")
            XCTFail("expected a timeout")
        } catch let error as NetError {
            guard case .timedOut = error else { return XCTFail("unexpected \(error)") }
            XCTAssertTrue(error.description.contains("did not answer within 1 s"), error.description)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
    }

    /// A redirect to another origin is followed without the credential.
    func testCredentialIsNotSentToAnotherOrigin() async throws {
        let target = try SampleServer(workDir: workDir)
        let server = try SampleServer(["--faults", "--redirect-target", target.fhir], workDir: workDir)
        let auth = Authenticator(.bearer(token: "secret-token-123"))
        let fhir = try FHIRClient(base: URL(string: server.base.absoluteString + "/faults/redirect/fhir")!, auth: auth, clients: APIClients())
        _ = try await fhir.capability()   // /fhir is open, so the redirected request succeeds
        let seen = try target.json("/probe/stats")
        XCTAssertGreaterThanOrEqual(seen["requests"] as? Int ?? 0, 1)
        XCTAssertEqual(seen["requests_with_credentials"] as? Int, 0, "the bearer token must not reach another origin")
        XCTAssertEqual(try server.json("/probe/stats")["requests_with_credentials"] as? Int, 1, "but was sent to its own origin")
    }

    /// A same-origin redirect keeps the credential (the protected base needs it).
    func testSameOriginRedirectKeepsCredential() async throws {
        let tokenFile = workDir.appendingPathComponent("refresh")
        try "initial-refresh".write(to: tokenFile, atomically: true, encoding: .utf8)
        let server = try SampleServer(["--faults", "--refresh-token-file", tokenFile.path], workDir: workDir)
        let auth = Authenticator(.oauth2(OAuth2Tokens(tokenURL: server.base.absoluteString + "/oauth/token", refreshToken: "initial-refresh")))
        let fhir = try FHIRClient(base: URL(string: server.base.absoluteString + "/faults/same-origin-redirect/fhir")!, auth: auth, clients: APIClients())
        let batch = try await fhir.searchPatients([])
        XCTAssertEqual(batch.records.count, 3)
    }

    /// OAuth2: an expired/unknown access token gets one refresh after a 401; the rotated refresh token is reported.
    func testRefreshAfterUnauthorized() async throws {
        let tokenFile = workDir.appendingPathComponent("refresh")
        try "initial-refresh".write(to: tokenFile, atomically: true, encoding: .utf8)
        let server = try SampleServer(["--refresh-token-file", tokenFile.path], workDir: workDir)
        let renewed = Box()
        let tokens = OAuth2Tokens(tokenURL: server.base.absoluteString + "/oauth/token", accessToken: "stale-token",
                                  expiresAt: Date().timeIntervalSince1970 + 3600, refreshToken: "initial-refresh")
        let auth = Authenticator(.oauth2(tokens), onChange: { renewed.set($0) })
        let fhir = try FHIRClient(base: URL(string: server.base.absoluteString + "/secure/fhir")!, auth: auth, clients: APIClients())
        let batch = try await fhir.searchPatients([])
        XCTAssertEqual(batch.records.count, 3)
        guard case let .oauth2(now)? = renewed.get() else { return XCTFail("the renewal was not reported") }
        XCTAssertNotEqual(now.refreshToken, "initial-refresh", "the server rotates refresh tokens")
        XCTAssertNotEqual(now.accessToken, "stale-token")
        // The old refresh token is spent: a client still holding it fails with a clear message.
        let spent = Authenticator(.oauth2(OAuth2Tokens(tokenURL: tokens.tokenURL, refreshToken: "initial-refresh")))
        let again = try FHIRClient(base: fhir.base, auth: spent, clients: APIClients())
        do {
            _ = try await again.searchPatients([])
            XCTFail("a spent refresh token must not work")
        } catch let NetError.loginRequired(message) {
            XCTAssertTrue(message.contains("invalid_grant"), message)
            XCTAssertTrue(message.contains("log in again"), message)
            XCTAssertFalse(message.contains("initial-refresh"))
        }
    }

    func testEverythingFallsBackToPerTypeSearches() async throws {
        let server = try SampleServer(["--faults"], workDir: workDir)
        let plain = try FHIRClient(base: URL(string: server.fhir)!, clients: APIClients())
        let direct = try await plain.everything(patientID: "p1")
        XCTAssertFalse(direct.usedFallback)
        let fallback = try await FHIRClient(base: URL(string: server.base.absoluteString + "/faults/no-everything/fhir")!, clients: APIClients())
            .everything(patientID: "p1")
        XCTAssertTrue(fallback.usedFallback)
        XCTAssertEqual(fallback.batch.records.first?.entries.count, direct.batch.records.first?.entries.count,
                       "per-type searches find the same entries as $everything")
    }

    func testLoopingNextLinkIsCaught() async throws {
        let server = try SampleServer(["--faults"], workDir: workDir)
        let fhir = try FHIRClient(base: URL(string: server.base.absoluteString + "/faults/loop/fhir")!, clients: APIClients())
        do {
            _ = try await fhir.everything(patientID: "p1")
            XCTFail("expected the loop to be caught")
        } catch let error as NetError {
            guard case .pagingLoop = error else { return XCTFail("unexpected \(error)") }
        }
    }

    func testMalformedAndHTMLAnswers() async throws {
        let server = try SampleServer(["--faults"], workDir: workDir)
        do {
            _ = try await FHIRClient(base: URL(string: server.base.absoluteString + "/faults/invalid-json/fhir")!, clients: APIClients())
                .everything(patientID: "p1")
            XCTFail("expected bad data")
        } catch let error as NetError {
            XCTAssertTrue(error.isBadData, "\(error)")
        }
        do {
            _ = try await FHIRClient(base: URL(string: server.base.absoluteString + "/faults/html/fhir")!, clients: APIClients())
                .everything(patientID: "p1")
            XCTFail("expected an unexpected-response error")
        } catch let error as NetError {
            guard case .unexpectedResponse = error else { return XCTFail("unexpected \(error)") }
            XCTAssertTrue(error.description.contains("HTML"), error.description)
        }
    }

    func testOperationOutcomeBecomesReadableError() async throws {
        let server = try SampleServer(["--faults"], workDir: workDir)
        do {
            _ = try await FHIRClient(base: URL(string: server.base.absoluteString + "/faults/outcome/fhir")!, clients: APIClients())
                .everything(patientID: "p1")
            XCTFail("expected an error")
        } catch let error as NetError {
            XCTAssertTrue(error.description.contains("too large for $everything"), error.description)
            XCTAssertTrue(error.description.contains("400"), error.description)
        }
    }

    func testRHExFeedAndRecord() async throws {
        let server = try SampleServer(workDir: workDir)
        let rhex = try RHExClient(base: URL(string: server.rhex)!, clients: APIClients())
        let patients = try await rhex.patients()
        XCTAssertEqual(patients.count, 3)
        XCTAssertFalse(patients.contains { $0.id.hasPrefix("tag:") }, "ids come from the alternate link when <id> is a tag: URI")
        for patient in patients {
            let (record, _) = try await rhex.record(id: patient.id)
            XCTAssertEqual(record.patient.remoteID, patient.id)
            XCTAssertEqual("\(record.patient.content.lastName), \(record.patient.content.firstName)", patient.title)
            XCTAssertFalse(record.entries.isEmpty)
        }
    }

    func testCreateConditionalAndTransaction() async throws {
        let server = try SampleServer(workDir: workDir)
        let fhir = try FHIRClient(base: URL(string: server.fhir)!, clients: APIClients())
        let patient = Data(#"{"resourceType":"Patient","identifier":[{"system":"urn:test","value":"x-1"}],"name":[{"family":"Testperson","given":["Ida"]}]}"#.utf8)
        let first = try await fhir.create(type: "Patient", resource: patient, ifNoneExist: "identifier=urn:test|x-1")
        XCTAssertTrue(first.created)
        let second = try await fhir.create(type: "Patient", resource: patient, ifNoneExist: "identifier=urn:test|x-1")
        XCTAssertFalse(second.created, "a conditional create of an existing resource creates nothing")
        let bundle = Data(#"""
            {"resourceType":"Bundle","type":"transaction","entry":[
              {"fullUrl":"urn:uuid:0d7f","resource":{"resourceType":"Patient","name":[{"family":"Transact"}]},"request":{"method":"POST","url":"Patient"}},
              {"resource":{"resourceType":"Observation","status":"final","code":{"text":"steps"},"subject":{"reference":"urn:uuid:0d7f"},"valueQuantity":{"value":10}},
               "request":{"method":"POST","url":"Observation"}}]}
            """#.utf8)
        let response = try await fhir.transaction(bundle)
        let object = try JSONSerialization.jsonObject(with: response) as? [String: Any]
        XCTAssertEqual(object?["type"] as? String, "transaction-response")
        XCTAssertEqual((object?["entry"] as? [Any])?.count, 2)
    }
}

final class Box: @unchecked Sendable {
    private let lock = NSLock()
    private var value: AuthMethod?
    func set(_ v: AuthMethod) { lock.lock(); value = v; lock.unlock() }
    func get() -> AuthMethod? { lock.lock(); defer { lock.unlock() }; return value }
}
