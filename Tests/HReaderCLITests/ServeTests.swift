import Foundation
import TestSupport
import XCTest

/// `hreader serve` over HTTP, as a browser or an attacker on the same machine would speak to it.
final class ServeTests: CLITestCase {
    static let routes = ["/", "/patients/1", "/patients/1/timeline", "/timeline.json?patient=1&page=week",
                         "/api/patients", "/api/patients/1", "/api/patients/1/entries", "/api/patients/1/summary",
                         "/api/patients/1/vitals", "/static/app.js", "/static/app.css", "/static/icon.svg",
                         "/favicon.ico", "/no/such/page", "/search?q=lisinopril", "/api/search?q=lisinopril",
                         "/patients/1/trends", "/api/patients/1/trends", "/patients/1/share",
                         "/providers", "/providers?q=hospital", "/providers/epic-0000000000", "/api/providers?q=hospital"]

    func testEveryPageAndEndpointAnswers401WithoutTheToken() throws {
        try seedFamily()
        let served = try serve()
        defer { stop(served) }
        let wrongCookie = "\(String(repeating: "A", count: 43))"
        for path in Self.routes {
            for headers in [[], [("Authorization", "Bearer wrong-token")], [("Cookie", "hreader_session=\(wrongCookie)")]] {
                let response = try served.send(path, headers: headers)
                XCTAssertEqual(response.status, 401, "GET \(path) with \(headers)")
                XCTAssertFalse(response.body.contains("Lovelace"), "GET \(path) leaked a name")
                XCTAssertEqual(response.header("Cache-Control"), "no-store")
                XCTAssertNotNil(response.header("Content-Security-Policy"))
            }
            let wrongToken = try served.send(path + (path.contains("?") ? "&" : "?") + "token=\(served.token.dropLast())x")
            XCTAssertEqual(wrongToken.status, 401, "GET \(path) with a wrong token")
        }
        // Outside the app's prefix: 401 without the token (nothing says where the app is), 404 with it.
        for outside in ["//", "//api/patients", "//s/00000000000000000000000000000000/api/patients"] {
            XCTAssertEqual(try served.send(outside).status, 401, outside)
            let authorized = try served.send(outside, headers: [("Authorization", "Bearer \(served.token)")])
            XCTAssertEqual(authorized.status, 404, outside)
            XCTAssertFalse(authorized.body.contains("Lovelace"))
        }
        let post = try served.send("POST", "/timeline.json?key=Levels&patient=1", headers: [("Content-Type", "application/json")],
                                   body: Data(#"{"pain":"3"}"#.utf8))
        XCTAssertEqual(post.status, 401)
        let share = try served.send("POST", "/patients/1/share", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                    body: Data("base_url=http%3A%2F%2Fattacker.example".utf8))
        XCTAssertEqual(share.status, 401, "no link is made without the token")
        XCTAssertEqual((try json(ok(withPassword(["share", "list", "--json"])))["shares"] as? [Any])?.count, 0)
        let timeline = try json(ok(withPassword(["timeline", "--patient", "1", "--page", "day"])))
        XCTAssertEqual(timeline["levels"] as? [String: [String]], [:], "the refused POST stored nothing")
    }

    /// A timeline opened without a date starts at the latest record when the page ending now would
    /// be empty (an export imported weeks after it was made shows its last week, not an empty one);
    /// a date asked for is kept, and a page that reaches the latest record ends now as before.
    func testATimelineOpenedWithoutADateStartsAtTheLatestRecordWhenNothingIsRecordedSince() throws {
        try seedFamily()   // Ada's latest record: 2026-11-09T08:30:00Z, over a week before any day this runs
        let served = try serve()
        defer { stop(served) }
        func at(_ path: String) throws -> String? {
            let body = try served.bearer(path).body
            guard let start = body.range(of: "data-at=\""), let end = body[start.upperBound...].firstIndex(of: "\"") else { return nil }
            return String(body[start.upperBound..<end])
        }
        XCTAssertEqual(try at("/patients/1/timeline?page=week"), "1794213001", "the week ending a second after the latest record")
        XCTAssertEqual(try at("/patients/1/timeline?page=day"), "1794213001")
        XCTAssertEqual(try at("/patients/1/timeline?page=week&at=2020-01-01"), "2020-01-01", "a date asked for")
        XCTAssertEqual(try at("/patients/1/timeline?page=decade"), "", "the decade ending now has the record")
        XCTAssertEqual(try at("/patients/2/timeline?page=week"), "", "Charles has no record: now")
    }

    func testFirstVisitTradesTheTokenForAStrictHttpOnlyCookieAndDropsItFromTheAddress() throws {
        try seedFamily()
        let served = try serve()
        defer { stop(served) }
        XCTAssertEqual(served.url.host, "127.0.0.1")

        let first = try served.send("/patients/1/timeline?page=month&token=\(served.token)")
        XCTAssertEqual(first.status, 303)
        XCTAssertEqual(first.header("Location"), served.app("/patients/1/timeline?page=month"), "the token leaves the address bar")
        XCTAssertTrue(served.prefix.hasPrefix("/s/") && served.prefix.count == 35, served.prefix)
        let cookie = try XCTUnwrap(first.header("Set-Cookie"))
        XCTAssertTrue(cookie.hasPrefix("hreader_session="), cookie)
        XCTAssertTrue(cookie.contains("HttpOnly"), cookie)
        XCTAssertTrue(cookie.contains("SameSite=Strict"), cookie)
        // Cookies ignore ports: scoped to the app's unguessable path, the browser sends it to no other
        // server on 127.0.0.1 (which could replay it).
        XCTAssertTrue(cookie.contains("Path=\(served.prefix)"), cookie)
        XCTAssertFalse(cookie.contains(served.token), "the cookie is a session, not the token itself")
        let session = String(cookie.split(separator: ";")[0])

        let page = try served.send("/", headers: [("Cookie", session)])
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains("Ada Lovelace"))
        XCTAssertTrue(page.body.contains("Charles Lovelace"))
        XCTAssertTrue(page.body.contains(#"<span class="relationship">Son</span>"#), "relationship as hReader wrote it")
        let ada = try XCTUnwrap(page.body.range(of: "Ada Lovelace")), charles = try XCTUnwrap(page.body.range(of: "Charles Lovelace"))
        XCTAssertLessThan(ada.lowerBound, charles.lowerBound, "picker order")
        XCTAssertFalse(page.body.contains(served.token), "pages never carry the token")
        XCTAssertEqual(page.header("Referrer-Policy"), "same-origin", "no referrer to other sites; our own forms' posts carry our Origin")
        XCTAssertEqual(page.header("X-Frame-Options"), "DENY")
        let csp = try XCTUnwrap(page.header("Content-Security-Policy"))
        XCTAssertTrue(csp.contains("default-src 'none'") && csp.contains("script-src 'self'") && csp.contains("connect-src 'self'"), csp)

        // The cookie is sent by the browser to every port of 127.0.0.1: a script of a page on another
        // port is "same-site", and its requests are refused although they carry the cookie.
        for site in ["same-site", "cross-site"] {
            let fromElsewhere = try served.send("/api/patients", headers: [("Cookie", session), ("Sec-Fetch-Site", site)])
            XCTAssertEqual(fromElsewhere.status, 403, site)
            XCTAssertFalse(fromElsewhere.body.contains("Lovelace"), site)
        }
        for site in ["same-origin", "none"] {
            XCTAssertEqual(try served.send("/api/patients", headers: [("Cookie", session), ("Sec-Fetch-Site", site)]).status, 200, site)
        }
    }

    func testAHostOtherThanTheLoopbackAddressAndPortIsRefused() throws {
        try seedFamily()
        let served = try serve()
        defer { stop(served) }
        let auth = [("Authorization", "Bearer \(served.token)")]
        XCTAssertEqual(try served.send("/api/patients", headers: auth).status, 200)
        for host in ["rebind.example:\(served.port)", "localhost:\(served.port)", "127.0.0.1", "127.0.0.1:\(served.port + 1)", "[::1]:\(served.port)"] {
            let response = try served.send("/api/patients", host: host, headers: auth)
            XCTAssertEqual(response.status, 403, "Host: \(host)")
            XCTAssertFalse(response.body.contains("Lovelace"))
        }
        // The token in the query does not open a door for a rebound name either.
        XCTAssertEqual(try served.send("/?token=\(served.token)", host: "rebind.example:\(served.port)").status, 403)
        let doubled = try RawHTTP.send(port: served.port, path: served.app("/api/patients"), host: served.authority,
                                       headers: [("Host", "rebind.example"), ("Authorization", "Bearer \(served.token)")])
        XCTAssertEqual(doubled.status, 403, "a second Host header")
        let none = try RawHTTP.send(port: served.port, path: served.app("/api/patients"), host: nil, headers: auth)
        XCTAssertNotEqual(none.status, 200, "no Host header at all")
    }

    func testAPostWithTheCookieNeedsTheCSRFTokenAndOurOrigin() throws {
        try seedFamily()
        let served = try serve()
        defer { stop(served) }
        let session = try XCTUnwrap(try served.send("/?token=\(served.token)").header("Set-Cookie")).split(separator: ";")[0]
        let cookie = ("Cookie", String(session))
        let csrf = try XCTUnwrap(Self.csrf(in: try served.send("/", headers: [cookie]).body))
        let jsonType = ("Content-Type", "application/json")
        let path = "/timeline.json?key=Levels&patient=1"
        func post(_ headers: [(String, String)], _ body: String) throws -> RawHTTP.Response {
            try served.send("POST", path, headers: [cookie] + headers, body: Data(body.utf8))
        }

        XCTAssertEqual(try post([jsonType], #"{"pain":"9"}"#).status, 403, "no CSRF token")
        XCTAssertEqual(try post([jsonType, ("X-CSRF-Token", String(csrf.reversed()))], #"{"pain":"9"}"#).status, 403, "a wrong one")
        XCTAssertEqual(try post([jsonType, ("X-CSRF-Token", csrf), ("Origin", "http://rebind.example")], #"{"pain":"9"}"#).status, 403,
                       "another origin")
        let saved = try post([jsonType, ("X-CSRF-Token", csrf), ("Origin", served.base)], #"{"pain":"4","mood":"7"}"#)
        XCTAssertEqual(saved.status, 201, saved.body)
        XCTAssertEqual((saved.json["item"] as? [String: Any])?["type"] as? String, "levels")

        // A plain form (no script): the token in a field, then back to the page it came from.
        let form = ("Content-Type", "application/x-www-form-urlencoded")
        let redirected = try served.send("POST", "/timeline.json?key=NewMedication&patient=1", headers: [cookie, form],
                                         body: Data("csrf_token=\(csrf)&return_to=\(FormEncoding.encode(served.app("/patients/1/timeline?page=day")))&name=Ibuprofen&dose=200+mg".utf8))
        XCTAssertEqual(redirected.status, 302, redirected.body)
        XCTAssertEqual(redirected.header("Location"), served.app("/patients/1/timeline?page=day"))
        let offsite = try served.send("POST", "/timeline.json?key=MedRegiment&patient=1", headers: [cookie, form],
                                      body: Data("csrf_token=\(csrf)&return_to=%2F%2Frebind.example%2F&medication=Ibuprofen&schedule=08%3A00".utf8))
        XCTAssertEqual(offsite.status, 201, "a return address off this server is ignored, not followed")
        // Browsers drop a tab from a URL and read a backslash as a slash: these would leave the server too.
        for sneaky in ["%2F%09%2Frebind.example%2Fx", "%2F%5Crebind.example%2Fx", "%2F%0A%2Frebind.example", "%2F%20%2Frebind.example",
                       "%2Fpatients%2F1%2Ftimeline"] {   // the last: on this server, but outside the app
            let answer = try served.send("POST", "/timeline.json?key=MedRegiment&patient=1", headers: [cookie, form],
                                         body: Data("csrf_token=\(csrf)&return_to=\(sneaky)&medication=Ibuprofen&schedule=08%3A00".utf8))
            XCTAssertEqual(answer.status, 201, "\(sneaky) is not followed: \(answer.header("Location") ?? "")")
        }
        XCTAssertEqual(try served.send("POST", "/timeline.json?key=Levels&patient=1", headers: [cookie, form],
                                       body: Data("pain=2".utf8)).status, 403, "a form without the token")

        // What the CLI sees: exactly the accepted posts.
        let timeline = try json(ok(withPassword(["timeline", "--patient", "1", "--page", "day"])))
        XCTAssertEqual(timeline["levels"] as? [String: [String]], ["pain": ["4"], "mood": ["7"]])
        XCTAssertEqual(timeline["timeline_medications"] as? [[String: String]], [["name": "Ibuprofen", "dose": "200 mg"]])
        XCTAssertEqual(timeline["regimens"] as? [[String: String]], Array(repeating: ["medication": "Ibuprofen", "schedule": "08:00"], count: 6))
    }

    func testABearerTokenNeedsNoCSRFAndLevelsAreWholeNumbersFromZeroToTen() throws {
        try seedFamily()
        let served = try serve()
        defer { stop(served) }
        let json = ("Content-Type", "application/json")
        for bad in [#"{"pain":"11"}"#, #"{"mood":"-1"}"#, #"{"energy":"high"}"#, #"{"pain":2.5}"#, "[1,2]", "not json", "{}"] {
            let response = try served.bearer("POST", "/timeline.json?key=Levels&patient=1", headers: [json], body: Data(bad.utf8))
            XCTAssertEqual(response.status, 400, bad)
            XCTAssertNotNil(response.json["error"] as? String, bad)
        }
        XCTAssertEqual(try served.bearer("POST", "/timeline.json?patient=1", headers: [json], body: Data(#"{"pain":"1"}"#.utf8)).status, 400, "no key")
        let huge = Data(("{\"note\":\"" + String(repeating: "x", count: 70_000) + "\"}").utf8)
        XCTAssertEqual(try served.bearer("POST", "/timeline.json?key=Levels&patient=1", headers: [json], body: huge).status, 413, "over 64 KiB")
        XCTAssertEqual(try served.bearer("POST", "/timeline.json?key=Levels&patient=99", headers: [json], body: Data(#"{"pain":"1"}"#.utf8)).status, 404)
        let saved = try served.bearer("POST", "/timeline.json?key=Levels&patient=1", headers: [json], body: Data(#"{"pain":0,"energy":"10"}"#.utf8))
        XCTAssertEqual(saved.status, 201, saved.body)
        let levels = try served.bearer("/timeline.json?patient=1&page=day&types=levels").json["levels"] as? [String: [Any]]
        XCTAssertEqual(levels?["pain"]?.first as? Int, 0)
        XCTAssertEqual(levels?["energy"]?.first as? String, "10")
    }

    /// The page's data is the CLI's payload, byte for byte, for a page and for an explicit range.
    func testTimelineJSONIsTheSamePayloadAsTheCommandLine() throws {
        try seedFamily()
        try ok(withPassword(["timeline", "add", "--patient", "1", "--key", "Levels", "--at", "2026-11-05T12:00:00Z", "pain=6"]))
        let served = try serve()
        defer { stop(served) }
        let uuid = try XCTUnwrap((try json(ok(withPassword(["patients", "show", "1", "--json"])))["patient"] as? [String: Any])?["uuid"] as? String)

        let web = try served.bearer("/timeline.json?patient=\(uuid)&page=month&at=2026-11-10T00:00:00Z")
        XCTAssertEqual(web.status, 200, web.body)
        XCTAssertEqual(web.header("Content-Type"), "application/json; charset=utf-8")
        let cli = try ok(withPassword(["timeline", "--patient", "1", "--page", "month", "--at", "2026-11-10T00:00:00Z"]))
        XCTAssertEqual(web.body, cli.stdout.trimmingCharacters(in: .newlines))
        XCTAssertTrue(web.body.contains("Essential hypertension") && web.body.contains(#""pain":["6"]"#), web.body)

        let ranged = try served.bearer("/timeline.json?patient=1&from=2026-11-04&to=2026-11-30&detail=1")
        let cliRanged = try ok(withPassword(["timeline", "--patient", "1", "--from", "2026-11-04", "--to", "2026-11-30", "--detail"]))
        XCTAssertEqual(ranged.body, cliRanged.stdout.trimmingCharacters(in: .newlines))

        for bad in ["page=fortnight", "from=2026-11-04", "from=yesterday&to=2026-11-30", "page=week&types=nonsense", "from=2026-12-01&to=2026-11-01"] {
            let response = try served.bearer("/timeline.json?patient=1&\(bad)")
            XCTAssertEqual(response.status, 400, bad)
            XCTAssertNotNil(response.json["error"], bad)
        }
    }

    func testTheAPIListsPatientsEntriesSummaryAndVitalSeries() throws {
        try seedFamily()
        let served = try serve()
        defer { stop(served) }
        let patients = try XCTUnwrap(try served.bearer("/api/patients").json["patients"] as? [[String: Any]])
        XCTAssertEqual(patients.map { $0["first_name"] as? String }, ["Ada", "Charles"])
        XCTAssertEqual(patients.map { $0["relationship_text"] as? String }, ["Me", "Son"])
        let uuid = try XCTUnwrap(patients[0]["uuid"] as? String)
        XCTAssertEqual((try served.bearer("/api/patients/\(uuid)").json["patient"] as? [String: Any])?["last_name"] as? String, "Lovelace")

        // Entries in timeline order, a page at a time.
        let first = try served.bearer("/api/patients/1/entries?type=vital_sign&limit=4").json
        XCTAssertEqual((first["entries"] as? [[String: Any]])?.count, 4)
        XCTAssertEqual(first["next_offset"] as? Int, 4)
        let rest = try served.bearer("/api/patients/1/entries?type=vital_sign&limit=4&offset=8").json
        XCTAssertEqual((rest["entries"] as? [[String: Any]])?.count, 1)
        XCTAssertNil(rest["next_offset"])
        let ranged = try XCTUnwrap(try served.bearer("/api/patients/1/entries?from=2026-11-05&to=2026-11-07").json["entries"] as? [[String: Any]])
        XCTAssertEqual(Set(ranged.map { $0["description"] as! String }),
                       ["Systolic blood pressure", "Diastolic blood pressure", "Heart rate", "Essential hypertension", "Lisinopril 10 mg tablet"])
        XCTAssertEqual(try served.bearer("/api/patients/1/entries?type=gossip").status, 400)
        XCTAssertEqual(try served.bearer("/api/patients/1/entries?limit=0").status, 400)
        XCTAssertEqual(try served.bearer("/api/patients/nobody/entries").status, 404)

        // The summary is the CLI's.
        let summary = try served.bearer("/api/patients/1/summary")
        let cliSummary = try ok(withPassword(["summary", "--patient", "1", "--json"]))
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(summary.body.utf8)) as? NSDictionary,
                       try JSONSerialization.jsonObject(with: Data(cliSummary.stdout.utf8)) as? NSDictionary)

        // Vital series carry each reading's time, which the timeline's values do not.
        let vitals = try served.bearer("/api/patients/1/vitals?page=month&at=\(Self.seededAt)").json
        let series = try XCTUnwrap(vitals["vitals"] as? [[String: Any]])
        XCTAssertEqual(series.map { $0["description"] as? String }, ["Heart rate", "Systolic blood pressure", "Diastolic blood pressure"])
        let systolic = try XCTUnwrap(series[1]["points"] as? [[Double]])
        XCTAssertEqual(systolic.map { $0[1] }, [118, 131, 124])
        XCTAssertEqual(systolic.map { $0[0] }, [1_793_694_600, 1_793_953_800, 1_794_213_000], "2026-11-03, -06, -09 08:30Z")
        XCTAssertEqual(series[1]["max"] as? Double, 131)
        let averaged = try XCTUnwrap((try served.bearer("/api/patients/1/vitals?page=month&at=\(Self.seededAt)&points=2").json["vitals"] as? [[String: Any]])?[1])
        XCTAssertEqual(averaged["readings"] as? Int, 3)
        // Two buckets of half a month each: the three readings (11-03, -06, -09) all fall in the second,
        // so one point at their mean time and mean value.
        let averagedPoints = try XCTUnwrap(averaged["points"] as? [[Double]])
        XCTAssertEqual(averagedPoints.count, 1)
        XCTAssertEqual(averagedPoints.first?[0], 1_793_953_800, "mean time: 11-06 08:30Z")
        XCTAssertEqual(averagedPoints.first?[1] ?? 0, (118 + 131 + 124) / 3.0, accuracy: 1e-9)

        // Numbers from the query string are bounded: the extremes of Int64 once overflowed the chart
        // arithmetic and killed the server (SIGILL).
        for query in ["from=-9223372036854775808&to=9223372036854775807&points=2", "page=decade&at=9223372036854775807",
                      "page=year&at=-9223372036854775808", "from=0&to=99999999999999&points=5000"] {
            XCTAssertEqual(try served.bearer("/api/patients/1/vitals?\(query)").status, 400, query)
        }
        XCTAssertEqual(try served.bearer("/timeline.json?patient=1&from=-9223372036854775808&to=9223372036854775807").status, 400)
        XCTAssertEqual(try served.bearer("/api/patients/1/vitals?from=-62135596800&to=253402300799&points=2").status, 200,
                       "the widest range there is still answers")
        XCTAssertEqual(try served.bearer("/api/patients").status, 200, "and the server is still up")
    }

    /// The summary and the long-range charts are kept between requests (`ViewCache`), but never
    /// past a change: one made by another process (the command line, beside the server) shows at
    /// once, in the summary, in the patient page and in a year's chart.
    func testKeptViewsFollowAChangeMadeBesideTheServer() throws {
        try seedFamily()
        let served = try serve()
        defer { stop(served) }
        func conditions() throws -> [String] {
            try XCTUnwrap(try served.bearer("/api/patients/1/summary").json["conditions"] as? [[String: Any]]).map { $0["description"] as! String }
        }
        func yearReadings() throws -> Int? {
            let vitals = try XCTUnwrap(try served.bearer("/api/patients/1/vitals?page=year&at=\(Self.seededAt)").json["vitals"] as? [[String: Any]])
            return vitals.first { $0["description"] as? String == "Heart rate" }?["readings"] as? Int
        }
        XCTAssertEqual(try conditions(), ["Essential hypertension"])
        XCTAssertEqual(try conditions(), ["Essential hypertension"], "asked again: the kept answer")
        XCTAssertEqual(try yearReadings(), 3)
        XCTAssertEqual(try yearReadings(), 3)

        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "condition", "--description", "Migraine",
                             "--status", "active", "--date", "2026-11-08"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "vital_sign", "--description", "Heart rate",
                             "--value", "90", "--unit", "/min", "--date", "2026-11-08T08:30:00Z", "--code", "LOINC=8867-4"]))
        XCTAssertEqual(try conditions(), ["Migraine", "Essential hypertension"], "newest onset first, the change seen")
        XCTAssertEqual(try yearReadings(), 4)
        XCTAssertTrue(try served.bearer("/patients/1").body.contains("Migraine"), "the patient page too")
    }

    /// A record with hundreds of active conditions: the summary lists the newest 50 and says how
    /// many there are, in JSON, on the page and on the terminal.
    func testTheSummaryListsTheNewestFiftyConditionsAndCountsTheRest() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Lovelace", "--birth-date", "1985-12-10", "--as", "me"]))
        var resources: [String] = []
        for i in 0..<120 {
            let onset = String(format: "%04d-%02d-01", 2010 + i / 12, i % 12 + 1)
            let status = i % 10 == 9 ? "resolved" : "active"
            resources.append(#"{"resource":{"resourceType":"Condition","id":"c\#(i)","subject":{"reference":"Patient/p"},"clinicalStatus":{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/condition-clinical","code":"\#(status)"}]},"code":{"text":"Condition \#(i)"},"onsetDateTime":"\#(onset)"}}"#)
        }
        let bundle = #"{"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Patient","id":"p","name":[{"family":"Lovelace","given":["Ada"]}],"birthDate":"1985-12-10"}},"# + resources.joined(separator: ",") + "]}"
        let file = workDir.appendingPathComponent("conditions.json")
        try Data(bundle.utf8).write(to: file)
        try ok(withPassword(["import", "--file", file.path, "--patient", "1"]))

        let json = try JSONSerialization.jsonObject(with: Data(try ok(withPassword(["summary", "--patient", "1", "--json"])).stdout.utf8)) as? [String: Any]
        let listed = try XCTUnwrap(json?["conditions"] as? [[String: Any]]).map { $0["description"] as! String }
        XCTAssertEqual(json?["conditions_total"] as? Int, 108, "120 less the 12 resolved")
        XCTAssertEqual(listed.count, 50)
        XCTAssertEqual(listed.first, "Condition 118", "the newest onset first (119 is resolved)")
        XCTAssertFalse(listed.contains("Condition 109"), "a resolved one is not listed")
        XCTAssertEqual(listed.last, "Condition 64")
        let text = try ok(withPassword(["summary", "--patient", "1"])).stdout
        XCTAssertTrue(text.contains("; and 58 more (hreader entries list --patient 1 --type condition)"), text)

        let served = try serve()
        defer { stop(served) }
        XCTAssertTrue(try served.bearer("/patients/1").body.contains("and 58 more"))
    }

    /// Readings are not in the text index, but their series are found by name and code: one hit
    /// per kind (two devices' heart rate are one), with its count, dates and latest value, first;
    /// in the command line, its JSON and the web view.
    func testSearchFindsMeasurementSeriesByNameAndCode() throws {
        try initVault()
        var records: [String] = []
        for (i, value) in [("05", 104), ("06", 131), ("07", 98)] {
            records.append(AppleHealthTests.record("HKQuantityTypeIdentifierBloodGlucose", String(value), "mg/dL", "2026-03-\(i) 07:00:00 +0000"))
        }
        records.append(AppleHealthTests.record("HKQuantityTypeIdentifierHeartRate", "64", "count/min", "2026-03-08 09:00:00 +0000", source: "Zoë’s iPhone"))
        // A sleep stage (a category: its value is a word) and a weight written "72.50" (kept as that text).
        records.append(#"<Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Test Watch" creationDate="2030-01-02 07:00:00 +0000" "#
                       + #"startDate="2030-01-02 05:00:00 +0000" endDate="2030-01-02 06:00:00 +0000" value="HKCategoryValueSleepAnalysisAsleepCore"/>"#)
        records.append(AppleHealthTests.record("HKQuantityTypeIdentifierBodyMass", "72.50", "kg", "2030-01-02 07:30:00 +0000"))
        try ok(withPassword(["import", "--apple-health", try file("export.xml", AppleHealthTests.export(extraRecords: records)), "--as", "me"]))

        let json = try JSONSerialization.jsonObject(with: Data(try ok(withPassword(["search", "glucose", "--json"])).stdout.utf8)) as? [String: Any]
        let hits = try XCTUnwrap(json?["hits"] as? [[String: Any]])
        let glucose = try XCTUnwrap(hits.first)
        XCTAssertEqual(glucose["kind"] as? String, "series")
        XCTAssertEqual(glucose["title"] as? String, "Blood glucose")
        XCTAssertEqual(glucose["count"] as? Int, 3)
        XCTAssertEqual((glucose["latest"] as? [String: Any])?["value"] as? Double, 98)
        XCTAssertEqual(glucose["snippet"] as? String, "3 readings, 2026-03-05 to 2026-03-07; latest 98 mg/dL")
        // The latest value as its entry shows it: a sleep stage in words, a weight written as text a number with its unit.
        let sleep = try ok(withPassword(["search", "sleep"])).stdout
        XCTAssertTrue(sleep.contains("; latest Asleep core") && !sleep.contains("HKCategoryValue"), sleep)
        let weight = try ok(withPassword(["search", "body", "mass"])).stdout
        XCTAssertTrue(weight.contains("2030-01-02; latest 72.5 kg"), weight)

        // Two sources' heart rate (a watch's, with its motion context, and a phone's): one hit; a code finds it too.
        let heart = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(try ok(withPassword(["search", "heart", "rate", "--json"])).stdout.utf8))
                                   as? [String: Any])?["hits"] as? [[String: Any]])
        let rate = heart.filter { $0["kind"] as? String == "series" && $0["title"] as? String == "Heart rate" }
        XCTAssertEqual(rate.count, 1, "\(heart)")
        XCTAssertEqual(rate.first?["count"] as? Int, 2)
        XCTAssertGreaterThanOrEqual((rate.first?["series_ids"] as? [Int])?.count ?? 0, 2)
        let byCode = try ok(withPassword(["search", "8867-4"])).stdout
        XCTAssertTrue(byCode.contains("series") && byCode.contains("Heart rate"), byCode)
        XCTAssertFalse(try ok(withPassword(["search", "glucose", "--type", "vital_sign"])).stdout.contains("Blood glucose"),
                       "a series of another type is left out (Apple Health's glucose is a result)")

        let served = try serve()
        defer { stop(served) }
        let page = try served.bearer("/search?q=glucose").body
        XCTAssertTrue(page.contains("class=\"hit series-hit\"") && page.contains("3 readings, 2026-03-05 to 2026-03-07; latest 98 mg/dL"), page)
        let api = try XCTUnwrap(try served.bearer("/api/search?q=glucose").json["hits"] as? [[String: Any]])
        XCTAssertEqual(api.first?["kind"] as? String, "series")
    }

    func testPagesShowTheSummaryTilesAndEscapeWhatTheyShow() throws {
        try seedFamily()
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "allergy", "--description", "<script>alert(1)</script> dust",
                             "--date", "2026-11-02"]))
        let served = try serve()
        defer { stop(served) }
        let summary = try served.bearer("/patients/1")
        XCTAssertEqual(summary.status, 200)
        XCTAssertTrue(summary.body.contains("&lt;script&gt;alert(1)&lt;/script&gt; dust"), "escaped")
        XCTAssertFalse(summary.body.contains("<script>alert"))
        XCTAssertTrue(summary.body.contains(#"data-identifier="org.mitre.hreader.bloodpressure""#), "the default applets' tiles")
        XCTAssertTrue(summary.body.contains("Essential hypertension"))
        let timeline = try served.bearer("/patients/1/timeline?page=decade")
        XCTAssertEqual(timeline.status, 200)
        XCTAssertTrue(timeline.body.contains(#"data-page="decade""#))
        XCTAssertEqual(try served.bearer("/patients/1/timeline?page=fortnight").status, 400)
        XCTAssertEqual(try served.bearer("/patients/42").status, 404)
        XCTAssertEqual(try served.bearer("/static/app.js").header("Content-Type"), "text/javascript; charset=utf-8")
        XCTAssertEqual(try served.bearer("DELETE", "/api/patients/1").status, 405)
    }

    func testCtrlCStopsTheServerAndEndsTheSession() throws {
        try seedFamily()
        let served = try serve(["--port", "0"])
        XCTAssertEqual(try served.bearer("/api/patients").status, 200)
        let result = stop(served)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("Stopped"), result.stderr)
        XCTAssertThrowsError(try served.bearer("/api/patients"), "nothing listens any more")
        // The printed line is the only place the token appears, and no health data is printed.
        XCTAssertFalse(result.stderr.contains(served.token))
        XCTAssertFalse((result.stdout + result.stderr).contains("Lovelace"))
        // A new server has a new token: the old URL opens nothing.
        let again = try serve()
        defer { stop(again) }
        XCTAssertNotEqual(again.token, served.token)
        XCTAssertEqual(try again.send("/api/patients", headers: [("Authorization", "Bearer \(served.token)")]).status, 401)
    }

    /// A browser keeps idle connections open; Ctrl-C must not wait on them for long.
    func testCtrlCStopsPromptlyWithAnIdleKeepAliveConnectionOpen() throws {
        try seedFamily()
        let served = try serve()
        let idle = try RawHTTP.openIdleConnection(port: served.port, path: "/api/patients", headers: [("Authorization", "Bearer \(served.token)")])
        defer { close(idle) }
        let started = Date()
        let result = stop(served)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 4, "stopped within the 1.5 s grace period (and some slack)")
    }

    /// `hreader lock` locks the vault everywhere, a server opened with the unlock session included.
    func testLockStopsAServerOpenedWithAnUnlockSession() throws {
        try seedFamily()
        let unlock = try ok(["unlock", "--for", "10m", "--password-file", passwordFile])
        let token = try XCTUnwrap(unlock.stdout.split(separator: "=", maxSplits: 1).last).trimmingCharacters(in: .whitespacesAndNewlines)
        // Ctrl-C first: a server opened with the session stops as cleanly as one opened with the password.
        let interrupted = try serve(env: ["HREADER_SESSION": token], password: false)
        XCTAssertEqual(try interrupted.bearer("/api/patients").status, 200)
        let stopped = stop(interrupted)
        XCTAssertEqual(stopped.status, 0, stopped.stderr)
        XCTAssertTrue(stopped.stderr.contains("Stopped; the web session has ended."), stopped.stderr)

        let served = try serve(env: ["HREADER_SESSION": token], password: false)
        XCTAssertEqual(try served.bearer("/api/patients").status, 200)
        try ok(["lock"])
        let deadline = Date().addingTimeInterval(15)
        while served.running.process.isRunning && Date() < deadline { usleep(50_000) }
        XCTAssertFalse(served.running.process.isRunning, "still serving after 'hreader lock'")
        let result = stop(served)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("unlock session ended"), result.stderr)
        XCTAssertThrowsError(try served.bearer("/api/patients"))
    }

    func testAPortInUseIsOneClearError() throws {
        try seedFamily()
        let served = try serve()
        defer { stop(served) }
        let second = try hreader(withPassword(["serve", "--port", "\(served.port)"]), timeout: 30)
        XCTAssertEqual(second.status, 1, second.stderr)
        XCTAssertTrue(second.stderr.contains("already in use"), second.stderr)
        XCTAssertEqual(second.stderr.split(separator: "\n").count, 1, second.stderr)
        XCTAssertEqual(try hreader(withPassword(["serve", "--port", "70000"])).status, 2)
        let wrong = try hreader(["serve", "--password-file", try file("wrong", "Not-The-Password9\n")])
        XCTAssertEqual(wrong.status, 3, wrong.stderr)
    }

    /// After a session in the web view, the vault and temp directory hold nothing readable.
    func testServingLeavesNoPlaintextOnDisk() throws {
        try seedFamily()
        let served = try serve()
        try ok(withPassword(["entries", "comment", "1", "--text", "WEB-CANARY-COMMENT"]))
        _ = try served.bearer("POST", "/timeline.json?key=NewMedication&patient=1", headers: [("Content-Type", "application/json")],
                              body: Data(#"{"name":"Zzyzxomycin","dose":"WEB-CANARY-DOSE"}"#.utf8))
        for path in Self.routes { _ = try served.bearer(path) }
        XCTAssertTrue(try served.bearer("/timeline.json?patient=1&page=day").body.contains("Zzyzxomycin"))
        stop(served)
        for (path, data) in filesWithContents(under: vaultDir) + filesWithContents(under: childTemp) {
            for canary in ["Lovelace", "Zzyzxomycin", "WEB-CANARY-DOSE", "WEB-CANARY-COMMENT", "Essential hypertension", served.token] {
                XCTAssertFalse(data.containsBytes(Data(canary.utf8)), "\(canary) in plaintext in \(path)")
            }
        }
    }

    // MARK: Units people read, lab trends, search (issue 26)

    /// Apple Health writes oxygen saturation as the fraction 0.99 with unit %, and BMI with unit `count`:
    /// the chart's series, the tiles, the timeline's list and `entries list` all say 99 % and kg/m².
    func testAppleHealthFractionsAndCountsReadAsPeopleReadThemEverywhere() throws {
        try seedAppleHealthReadings()
        for applet in ["org.mitre.hreader.bmi", "org.mitre.hreader.vital-sign.oxygen-saturation", "org.mitre.hreader.vital-sign.respiratory-rate"] {
            try ok(withPassword(["applets", "add", applet, "--patient", "1"]))
        }
        let served = try serve()
        defer { stop(served) }

        // The charts' series.
        let vitals = try XCTUnwrap(try served.bearer("/api/patients/1/vitals?from=2026-02-01&to=2026-04-01").json["vitals"] as? [[String: Any]])
        func series(_ description: String) throws -> [String: Any] { try XCTUnwrap(vitals.first { $0["description"] as? String == description }, description) }
        let saturation = try series("Oxygen saturation")
        XCTAssertEqual(saturation["unit"] as? String, "%")
        XCTAssertEqual((saturation["points"] as? [[Double]])?.map { $0[1] }, [97, 99], "fractions shown as percentages")
        XCTAssertEqual(saturation["max"] as? Double, 99)
        XCTAssertEqual(try series("BMI")["unit"] as? String, "kg/m²")
        XCTAssertEqual((try series("BMI")["points"] as? [[Double]])?.map { $0[1] }, [22.4])
        XCTAssertEqual(try series("Respiratory rate")["unit"] as? String, "/min", "count/min reads as the tile says")

        // The tiles say the same.
        let summary = try served.bearer("/api/patients/1/summary").json
        let tiles = Dictionary(uniqueKeysWithValues: (summary["tiles"] as? [[String: Any]] ?? []).map { ($0["identifier"] as? String ?? "", $0) })
        XCTAssertEqual(tiles["org.mitre.hreader.vital-sign.oxygen-saturation"]?["value"] as? String, "99")
        XCTAssertEqual(tiles["org.mitre.hreader.vital-sign.oxygen-saturation"]?["unit"] as? String, "%")
        XCTAssertEqual(tiles["org.mitre.hreader.vital-sign.oxygen-saturation"]?["lines"] as? [String], ["normal 95-100 %", "2026-03-01  97 %"])
        XCTAssertEqual(tiles["org.mitre.hreader.bmi"]?["value"] as? String, "22.4")
        XCTAssertEqual(tiles["org.mitre.hreader.bmi"]?["unit"] as? String, "kg/m²")
        XCTAssertEqual(tiles["org.mitre.hreader.vital-sign.respiratory-rate"]?["unit"] as? String, "/min")
        let page = try served.bearer("/patients/1").body
        XCTAssertTrue(page.contains(#"<p class="value">99 <span class="unit">%</span></p>"#), "the tile on the summary page")

        // The timeline's records list (detail: the value as listed) and the results' trends.
        let timeline = try served.bearer("/timeline.json?patient=1&from=2026-02-01&to=2026-04-01&detail=1&types=results").json
        let fat = try XCTUnwrap((timeline["results"] as? [[String: Any]])?.first { $0["description"] as? String == "Body fat percentage" })
        XCTAssertEqual(fat["display"] as? String, "25 %")
        XCTAssertEqual((fat["measurement"] as? [String: Any])?["value"] as? Double, 0.25, "timeline.json keeps what was recorded")
        let trends = try XCTUnwrap(try served.bearer("/api/patients/1/trends").json["trends"] as? [[String: Any]])
        let fatTrend = try XCTUnwrap(trends.first { $0["description"] as? String == "Body fat percentage" })
        XCTAssertEqual(fatTrend["unit"] as? String, "%")
        XCTAssertEqual((fatTrend["points"] as? [[String: Any]])?.map { $0["value"] as? Double }, [25])

        // The command line's list; the stored entry is untouched.
        let listed = try ok(withPassword(["entries", "list", "--patient", "1", "--type", "vital_sign"])).stdout
        XCTAssertTrue(listed.contains("99 %"), listed)
        XCTAssertTrue(listed.contains("22.4 kg/m²"), listed)
        XCTAssertFalse(listed.contains("0.99"), listed)
        XCTAssertFalse(listed.contains("count"), listed)
        let stored = try json(ok(withPassword(["entries", "list", "--patient", "1", "--type", "vital_sign", "--json"])))["entries"] as? [[String: Any]] ?? []
        XCTAssertTrue(stored.contains { $0["value"] as? Double == 0.99 && $0["unit"] as? String == "%" }, "the vault keeps the export's value")
    }

    /// A lab's flag reads in words with its code kept ("critically low", LL), a reading it flagged
    /// low inside the stated range is outside by the lab's word (not silently normal), and UCUM
    /// units read as people write them (10*9/L as ×10⁹/L).
    func testFlagsReadInWordsAndUnitsAsPeopleWriteThem() throws {
        try initVault()
        let bundle = #"""
            {"resourceType": "Bundle", "type": "collection", "entry": [
              {"resource": {"resourceType": "Patient", "id": "p", "name": [{"family": "Okafor", "given": ["Ngozi"]}]}},
              {"resource": {"resourceType": "Observation", "id": "wbc", "status": "final",
                "category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "laboratory"}]}],
                "code": {"coding": [{"system": "http://loinc.org", "code": "6690-2"}], "text": "Leukocytes"},
                "subject": {"reference": "Patient/p"}, "effectiveDateTime": "2025-02-01T08:00:00Z",
                "valueQuantity": {"value": 4.1, "unit": "10*9/L", "system": "http://unitsofmeasure.org", "code": "10*9/L"},
                "referenceRange": [{"low": {"value": 4.0}, "high": {"value": 11.0}}],
                "interpretation": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation", "code": "LL"}]}]}}]}
            """#
        try ok(withPassword(["import", "--file", try file("cbc.json", bundle)]))
        let served = try serve()
        defer { stop(served) }
        let trend = try XCTUnwrap((try served.bearer("/api/patients/1/trends").json["trends"] as? [[String: Any]])?.first)
        XCTAssertEqual(trend["unit"] as? String, "×10⁹/L")
        let point = try XCTUnwrap((trend["points"] as? [[String: Any]])?.first)
        XCTAssertEqual(point["flag"] as? String, "LL")
        XCTAssertEqual(point["flag_text"] as? String, "critically low")
        XCTAssertEqual(point["out_of_range"] as? Int, 1, "inside 4.0-11.0, but the lab flagged it")
        let listed = try ok(withPassword(["entries", "list", "--patient", "1", "--type", "result"])).stdout
        XCTAssertTrue(listed.contains("4.1 ×10⁹/L"), listed)
    }

    /// A glucose monitor's readings (Apple Health samples, results) become at most 400 points: the
    /// means of equal stretches, which together stand for every reading, with the trend's count,
    /// extremes and ends exact; a range keeps its own readings alone when they fit. The server reads
    /// them in two streaming passes, not all at once (issue 41).
    func testAMonitorsThousandsOfReadingsBecomeAtMost400PointsThatAccountForEachReading() throws {
        try initVault()
        let start = ISO8601DateFormatter().date(from: "2026-03-01T00:00:00Z")!
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        var values: [Double] = []
        var records: [String] = []
        for i in 0..<2_000 {   // every 5 minutes for about a week
            let value = 90 + Double((i * 37) % 101)   // 90...190 mg/dL
            values.append(value)
            records.append(AppleHealthTests.record("HKQuantityTypeIdentifierBloodGlucose", String(Int(value)), "mg/dL",
                                                   formatter.string(from: start.addingTimeInterval(Double(i) * 300))))
        }
        let path = try file("export.xml", AppleHealthTests.export(extraRecords: records))
        try ok(withPassword(["import", "--apple-health", path, "--as", "me"]))
        let served = try serve()
        defer { stop(served) }
        let answer = try served.bearer("/api/patients/1/trends")
        XCTAssertEqual(answer.status, 200, answer.body)
        let trends = try XCTUnwrap(answer.json["trends"] as? [[String: Any]])
        let glucose = try XCTUnwrap(trends.first { ($0["description"] as? String)?.contains("glucose") == true }, "\(trends)")
        XCTAssertEqual(glucose["readings"] as? Int, 2_000)
        XCTAssertEqual(glucose["min"] as? Double, values.min())
        XCTAssertEqual(glucose["max"] as? Double, values.max())
        let points = try XCTUnwrap(glucose["points"] as? [[String: Any]])
        XCTAssertLessThanOrEqual(points.count, 400)
        XCTAssertGreaterThan(points.count, 300, "one point per stretch that holds readings")
        XCTAssertEqual(points.compactMap { $0["readings"] as? Int }.reduce(0, +), 2_000, "the points stand for every reading")
        let means = points.compactMap { $0["value"] as? Double }
        XCTAssertTrue(means.allSatisfy { $0 >= values.min()! && $0 <= values.max()! })
        let pointTimes = points.compactMap { $0["time"] as? Double }
        XCTAssertEqual(pointTimes, pointTimes.sorted(), "in time order")
        // Weighted by their readings, the means give the mean of all readings.
        let weighted = zip(points.compactMap { $0["value"] as? Double }, points.compactMap { $0["readings"] as? Int })
            .reduce(0.0) { $0 + $1.0 * Double($1.1) } / 2_000
        XCTAssertEqual(weighted, values.reduce(0, +) / 2_000, accuracy: 1e-6)
        // Half a day: 144 readings fit, each its own point with its entry.
        let day = try served.bearer("/api/patients/1/trends?from=2026-03-02T00:00:00Z&to=2026-03-02T11:59:59Z")
        let dayPoints = try XCTUnwrap(((day.json["trends"] as? [[String: Any]])?.first?["points"]) as? [[String: Any]])
        XCTAssertEqual(dayPoints.count, 144)
        XCTAssertTrue(dayPoints.allSatisfy { $0["readings"] as? Int == 1 && $0["entry_id"] != nil })
    }

    /// One chart per result code: its readings, the reference range from the FHIR Observation, and
    /// the readings outside it (by the range, or by the lab's H flag) counted and marked.
    func testTheTrendOfAResultCodeHasItsReferenceRangeAndMarksValuesOutsideIt() throws {
        try seedLabResults()
        let served = try serve()
        defer { stop(served) }
        let all = try XCTUnwrap(try served.bearer("/api/patients/1/trends").json["trends"] as? [[String: Any]])
        XCTAssertEqual(all.map { $0["description"] as? String }, ["Hemoglobin A1c", "Total cholesterol"], "numeric results only, by name")
        let cholesterol = all[1]
        XCTAssertEqual(cholesterol["key"] as? String, "LOINC|2093-3")
        XCTAssertEqual(cholesterol["unit"] as? String, "mg/dL")
        XCTAssertEqual(cholesterol["reference_range"] as? [String: Double], ["low": 100, "high": 199])
        XCTAssertEqual(cholesterol["readings"] as? Int, 3)
        XCTAssertEqual(cholesterol["out_of_range"] as? Int, 1)
        let points = try XCTUnwrap(cholesterol["points"] as? [[String: Any]])
        XCTAssertEqual(points.map { $0["value"] as? Double }, [180, 232, 150])
        XCTAssertEqual(points.map { $0["out_of_range"] as? Int }, [0, 1, 0])
        XCTAssertEqual(points[1]["flag"] as? String, "H")
        XCTAssertEqual(points[1]["high"] as? Double, 199)
        XCTAssertEqual(points[0]["time"] as? Double, 1_704_873_600, "2024-01-10T08:00:00Z")
        let a1c = all[0]
        XCTAssertEqual(a1c["reference_range"] as? [String: Double], ["high": 5.6], "only the bound the lab gave")
        XCTAssertEqual(a1c["out_of_range"] as? Int, 1, "6.1 is above 5.6 though no flag says so")

        // One code, one range; long ranges are averaged down, still counting what was outside.
        let one = try XCTUnwrap(try served.bearer("/api/patients/1/trends?code=LOINC%7C2093-3&from=2024-06-01&to=2026-06-01").json["trends"] as? [[String: Any]])
        XCTAssertEqual(one.count, 1)
        XCTAssertEqual((one[0]["points"] as? [[String: Any]])?.map { $0["value"] as? Double }, [232, 150])
        let averaged = try XCTUnwrap((try served.bearer("/api/patients/1/trends?code=LOINC%7C2093-3&from=2024-01-01&to=2027-06-30&points=2").json["trends"] as? [[String: Any]])?.first)
        let buckets = try XCTUnwrap(averaged["points"] as? [[String: Any]])
        XCTAssertEqual(buckets.map { $0["readings"] as? Int }, [2, 1], "2024 and 2025 in the first half, 2026 in the second")
        XCTAssertEqual(buckets.map { $0["value"] as? Double }, [206, 150])
        XCTAssertEqual(buckets.map { $0["out_of_range"] as? Int }, [1, 0], "the mean still counts the reading outside the range")
        XCTAssertEqual(averaged["readings"] as? Int, 3)
        XCTAssertEqual(try served.bearer("/api/patients/1/trends?page=fortnight").status, 400)
        XCTAssertEqual(try served.bearer("/api/patients/1/trends?points=1").status, 400)
        XCTAssertEqual(try served.bearer("/api/patients/42/trends").status, 404)

        // The page: reached from the summary, and from a result by its entry; the app's policy, no inline script.
        let summary = try served.bearer("/patients/1").body
        let uuid = try XCTUnwrap((try served.bearer("/api/patients/1").json["patient"] as? [String: Any])?["uuid"] as? String)
        XCTAssertTrue(summary.contains(#"class="button trends-link" href="\#(served.prefix)/patients/\#(uuid)/trends""#), "linked from the summary")
        let entries = try XCTUnwrap(try served.bearer("/api/patients/1/entries?type=result").json["entries"] as? [[String: Any]])
        let flagged = try XCTUnwrap(entries.first { $0["value"] as? Double == 232 }?["id"] as? Int)
        let page = try served.bearer("/patients/\(uuid)/trends?entry=\(flagged)")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains(#"data-code="LOINC|2093-3""#), "the entry's code")
        XCTAssertTrue(page.body.contains("/api/patients/\(uuid)/trends?code=LOINC%7C2093-3"), page.body)
        XCTAssertEqual(page.header("Content-Security-Policy"), try served.bearer("/patients/1").header("Content-Security-Policy"))
        XCTAssertFalse(page.body.replacingOccurrences(of: #"<script src="\#(served.prefix)/static/app.js" defer></script>"#, with: "").contains("<script"))
        XCTAssertEqual(try served.bearer("/patients/1/trends?entry=999999").status, 404)
        let culture = try XCTUnwrap(entries.first { $0["description"] as? String == "Urine culture" }?["id"] as? Int)
        XCTAssertEqual(try served.bearer("/patients/1/trends?entry=\(culture)").status, 200, "a text result: its code's page, with no chart")
        let timeline = try served.bearer("/timeline.json?patient=1&from=2025-01-01&to=2025-02-01&detail=1").json
        XCTAssertEqual((timeline["results"] as? [[String: Any]])?.first?["entry_id"] as? Int, flagged, "what the timeline links a result by")
        XCTAssertTrue(try served.bearer("/static/app.js").body.contains("/trends?entry="), "the timeline's result rows link to their trend")

        // The same code in another unit is a chart of its own, never mixed into the mg/dL one.
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "result", "--description", "Total cholesterol", "--value", "5.2",
                             "--unit", "mmol/L", "--code", "LOINC=2093-3", "--date", "2026-06-01T08:00:00Z"]))
        let units = try XCTUnwrap(try served.bearer("/api/patients/1/trends?code=LOINC%7C2093-3").json["trends"] as? [[String: Any]])
        XCTAssertEqual(units.map { $0["unit"] as? String }, ["mg/dL", "mmol/L"])
        XCTAssertEqual(units.map { $0["readings"] as? Int }, [3, 1])
    }

    /// The search box on every page finds an entry; the snippet is the record's own text, so its
    /// HTML special characters are escaped and only the match markers become <mark>.
    func testTheSearchBoxFindsAnEntryAndEscapesItsSnippet() throws {
        try seedFamily()
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "medication", "--date", "2026-11-07",
                             "--description", #"Metformin <b>500</b> & "ER" <script>alert(1)</script>"#]))
        let served = try serve()
        defer { stop(served) }
        for path in ["/", "/patients/1", "/patients/1/timeline", "/patients/1/trends"] {
            let page = try served.bearer(path).body
            XCTAssertTrue(page.contains(#"<form class="search-box" role="search" method="get" action="\#(served.prefix)/search">"#), path)
        }
        XCTAssertTrue(try served.bearer("/patients/1").body.contains(#"<input type="hidden" name="patient""#), "a patient's page searches that patient")

        let found = try served.bearer("/search?q=metformin")
        XCTAssertEqual(found.status, 200)
        XCTAssertTrue(found.body.contains(#"<li class="hit""#), found.body)
        XCTAssertTrue(found.body.contains("<mark>Metformin</mark> &lt;b&gt;500&lt;/b&gt; &amp; &quot;ER&quot; &lt;script&gt;alert(1)&lt;/script"), found.body)
        XCTAssertFalse(found.body.contains("<script>alert"))
        XCTAssertFalse(found.body.contains("<b>500"))
        XCTAssertTrue(found.body.contains("Ada Lovelace"), "whose record it is")
        XCTAssertEqual(found.header("Content-Security-Policy"), try served.bearer("/").header("Content-Security-Policy"))

        // Per patient and per type; the JSON API is the CLI's.
        XCTAssertTrue(try served.bearer("/search?q=metformin&patient=2").body.contains(#"id="no-hits""#), "Charles has none")
        XCTAssertTrue(try served.bearer("/search?q=metformin&patient=1&type=medication").body.contains(#"<li class="hit""#))
        XCTAssertTrue(try served.bearer("/search?q=metformin&type=condition").body.contains(#"id="no-hits""#))
        XCTAssertEqual(try served.bearer("/search?q=metformin&type=gossip").status, 400)
        XCTAssertEqual(try served.bearer("/search?q=metformin&patient=nobody").status, 404)
        XCTAssertEqual(try served.bearer("/search?q=%2B%2B").status, 200, "no word to look for is said on the page")
        let api = try served.bearer("/api/search?q=metf&patient=1")
        let cli = try json(ok(withPassword(["search", "metf", "--patient", "1", "--json"])))
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(api.body.utf8)) as? NSDictionary, cli as NSDictionary)
        XCTAssertEqual(try served.bearer("/api/search?q=").status, 400)
    }

    static func csrf(in page: String) -> String? {
        guard let range = page.range(of: #"<meta name="csrf-token" content=""#) else { return nil }
        return String(page[range.upperBound...].prefix { $0 != "\"" })
    }
}
