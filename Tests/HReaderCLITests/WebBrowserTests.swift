import Foundation
import TestSupport
import XCTest

/// The web view in a real browser: Debian's headless chromium driven over WebDriver, against a real
/// `hreader serve` process. Screenshots land in `.build/web-screenshots/` (or `$HREADER_SCREENSHOTS`).
final class WebBrowserTests: CLITestCase {
    static var screenshots: URL {
        if let path = ProcessInfo.processInfo.environment["HREADER_SCREENSHOTS"] { return URL(fileURLWithPath: path) }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return packageRoot.appendingPathComponent(".build/web-screenshots")
    }

    func testPatientsSummaryTimelineScopesAndAPostedLevelInHeadlessChromium() throws {
        try seedFamily()
        let served = try serve()
        defer { stop(served) }
        try FileManager.default.createDirectory(at: Self.screenshots, withIntermediateDirectories: true)
        let browser = try WebDriver.start(screenshotsDirectory: Self.screenshots)
        defer { browser.quit() }
        var requested: [String] = []
        func collect() throws { requested += try browser.requestedURLs() }
        func text(_ css: String) throws -> String { try browser.text(of: browser.findElement(css: css)) }

        // The printed URL, as a user pastes it: the token becomes a cookie and leaves the address bar.
        try browser.navigate(to: served.url)
        _ = try browser.waitForElement(css: "ol.patients")
        XCTAssertEqual(try browser.currentURL, served.base + served.prefix + "/")
        let session = try XCTUnwrap(try browser.cookies().first { $0.name == "hreader_session" })
        XCTAssertTrue(session.httpOnly)
        XCTAssertEqual(session.sameSite, "Strict")
        XCTAssertEqual(try browser.executeScript("return document.cookie.includes('hreader_session')") as? Bool, false,
                       "HttpOnly: the page's script cannot read the session")
        let names = try browser.findElements(css: "li.patient .name").map { try browser.text(of: $0) }
        XCTAssertEqual(names, ["Ada Lovelace", "Charles Lovelace"])
        let relationships = try browser.findElements(css: "li.patient .relationship").map { try browser.text(of: $0) }
        XCTAssertEqual(relationships, ["Me", "Son"])
        _ = try browser.screenshot(named: "1-patients")
        try collect()

        // A patient's summary with the applet tiles.
        try browser.click(browser.findElement(css: "li.patient .patient-link"))
        _ = try browser.waitForElement(css: "section.tiles")
        XCTAssertEqual(try text("section.person h1"), "Ada Lovelace")
        let pressure = try browser.text(of: browser.findElement(css: #"article.tile[data-identifier="org.mitre.hreader.bloodpressure"]"#))
        XCTAssertTrue(pressure.contains("124/79"), pressure)
        XCTAssertTrue(try text("section.conditions").contains("Essential hypertension"))
        _ = try browser.screenshot(named: "2-summary")
        try collect()

        // The printable summary for a clinician, linked from the summary: the record in tables, its
        // inline style applied (the page's policy allows it by hash), no script, nothing from elsewhere.
        let summaryPage = try browser.currentURL
        try browser.click(browser.findElement(css: "a.summary-link"))
        _ = try browser.waitForElement(css: "h1.patient-name")
        let printable = try browser.currentURL
        XCTAssertTrue(printable.hasSuffix("/summary.html"), printable)
        XCTAssertEqual(try text("h1.patient-name"), "Ada Lovelace")
        XCTAssertTrue(try text("section.problems").contains("Essential hypertension"))
        XCTAssertTrue(try text("section.medications").contains("Lisinopril 10 mg tablet"))
        let vitals = try browser.findElements(css: "section.vital-signs tr.row").map { try browser.text(of: $0) }
        XCTAssertEqual(vitals.count, 3, "the latest of each kind: \(vitals)")
        XCTAssertTrue(vitals.contains { $0.contains("124 mmHg") && $0.contains("2026-11-09") }, "\(vitals)")
        XCTAssertEqual(try browser.executeScript("return getComputedStyle(document.querySelector('header')).borderBottomStyle") as? String,
                       "solid", "the page's inline style applies")
        XCTAssertEqual(try browser.executeScript("return document.scripts.length") as? Int, 0)
        _ = try browser.screenshot(named: "2b-printable-summary")
        // Printed on A4 and on Letter: one page each, nothing cut (a row wider than the paper would
        // make Chromium widen the page).
        for (paper, width, height) in [("a4", 21.0, 29.7), ("letter", 21.59, 27.94)] {
            let pdf = try browser.printPDF(named: "2b-printable-summary-\(paper)", width: width, height: height)
            let text = String(decoding: pdf, as: UTF8.self)
            XCTAssertTrue(text.hasPrefix("%PDF-"), paper)
            let pages = text.components(separatedBy: "/Type /Page").count - 1 - (text.components(separatedBy: "/Type /Pages").count - 1)
            XCTAssertEqual(pages, 1, "the summary prints on one \(paper) page")
        }
        try collect()
        try browser.navigate(to: URL(string: summaryPage)!)
        _ = try browser.waitForElement(css: "section.tiles")

        // The timeline, from a date before any record: empty, with a way to the latest record.
        try browser.click(browser.findElement(css: "a.timeline-link"))
        try waitForLoad(browser, scope: "week")
        let uuid = try XCTUnwrap(browser.executeScript("return document.getElementById('timeline').dataset.patient") as? String)
        try browser.navigate(to: URL(string: "\(served.base)\(served.prefix)/patients/\(uuid)/timeline?page=week&at=2020-01-01")!)
        try waitForLoad(browser, scope: "week")
        XCTAssertEqual(try text("#status"), "Nothing recorded in this range.")
        try browser.click(browser.findElement(css: "#latest"))
        try browser.waitUntil(timeout: 15, "the latest week shows the readings") {
            (try? browser.findElements(css: "figure.vital").count) == 3
        }

        // hReader's five scopes over the seeded month.
        try browser.navigate(to: URL(string: "\(served.base)\(served.prefix)/patients/\(uuid)/timeline?page=month&at=\(Self.seededAt)")!)
        try waitForLoad(browser, scope: "month")
        for scope in ["day", "week", "month", "year", "decade"] {
            try browser.click(browser.findElement(css: ".scopes .scope[data-scope=\"\(scope)\"]"))
            try waitForLoad(browser, scope: scope)
            XCTAssertEqual(try text(".scopes .scope.active"), scope.capitalized)
            XCTAssertTrue(try browser.currentURL.contains("page=\(scope)"), "the address keeps the scope")
            // The page ends at 2026-11-10 00:00Z: the day holds the 11-09 readings only, every longer scope all three.
            let charts = try browser.findElements(css: "figure.vital")
            XCTAssertEqual(try charts.map { try browser.attribute("data-description", of: $0) },
                           ["Heart rate", "Systolic blood pressure", "Diastolic blood pressure"], scope)
            XCTAssertEqual(try browser.findElements(css: "figure.vital svg polyline").count, 3, scope)
            XCTAssertEqual(try browser.findElements(css: #"figure.vital[data-description="Systolic blood pressure"] circle"#).count,
                           scope == "day" ? 1 : 3, "one dot per reading (\(scope))")
            let conditions = try browser.findElements(css: #"section.entry-list[data-key="conditions"]"#)
            if scope == "day" {
                XCTAssertTrue(conditions.isEmpty, "the condition of 11-06 is outside the day")
            } else {
                XCTAssertTrue(try conditions.map { try browser.text(of: $0) }.joined().contains("Essential hypertension"), scope)
                XCTAssertTrue(try text(#"section.entry-list[data-key="medications"]"#).contains("Lisinopril"), scope)
            }
            _ = try browser.screenshot(named: "3-timeline-\(scope)")
        }
        try collect()

        // Post levels, a medication and a regimen through the forms; the timeline shows them.
        _ = try browser.executeScript("""
            const pain = document.querySelector('#levels-form input[name="pain"]');
            pain.value = '8';
            pain.dispatchEvent(new Event('input'));
            """)
        XCTAssertEqual(try text("#levels-form label output"), "8", "the slider shows its value")
        try browser.click(browser.findElement(css: "#levels-form button[type=submit]"))
        try browser.waitUntil(timeout: 15, "the posted level appears") {
            (try? text(#"#posted dd[data-level="pain"]"#)) == "8"
        }
        XCTAssertEqual(try text(#"#posted dd[data-level="mood"]"#), "5")
        XCTAssertTrue(try text("#status").hasPrefix("Saved."))
        try browser.sendKeys("Ibuprofen", to: browser.findElement(css: #"#medication-form input[name="name"]"#))
        try browser.sendKeys("200 mg", to: browser.findElement(css: #"#medication-form input[name="dose"]"#))
        try browser.click(browser.findElement(css: "#medication-form button[type=submit]"))
        try browser.waitUntil(timeout: 15, "the medication appears") {
            (try? text(".posted-medications li")) == "Ibuprofen · 200 mg"
        }
        try browser.sendKeys("Ibuprofen", to: browser.findElement(css: #"#regimen-form input[name="medication"]"#))
        try browser.sendKeys("08:00, 20:00", to: browser.findElement(css: #"#regimen-form input[name="schedule"]"#))
        try browser.click(browser.findElement(css: "#regimen-form button[type=submit]"))
        try browser.waitUntil(timeout: 15, "the regimen appears") {
            (try? text(".posted-regimens li")) == "Ibuprofen · 08:00, 20:00"
        }
        _ = try browser.screenshot(named: "4-posted")
        try collect()

        // What the browser stored is what the CLI reads.
        let day = try json(ok(withPassword(["timeline", "--patient", "1", "--page", "day"])))
        XCTAssertEqual(day["levels"] as? [String: [String]], ["pain": ["8"], "mood": ["5"], "energy": ["5"]])
        XCTAssertEqual(day["timeline_medications"] as? [[String: String]], [["name": "Ibuprofen", "dose": "200 mg"]])
        XCTAssertEqual(day["regimens"] as? [[String: String]], [["medication": "Ibuprofen", "schedule": "08:00, 20:00"]])

        // Every request the pages made stayed on the loopback origin, and they made the ones we expect.
        XCTAssertFalse(requested.isEmpty)
        let foreign = requested.filter { !$0.hasPrefix(served.base + "/") }
        XCTAssertEqual(foreign, [], "requests outside \(served.base)")
        for expected in ["/static/app.js", "/static/app.css", "/timeline.json?", "/api/patients/\(uuid)/vitals?"] {
            XCTAssertTrue(requested.contains { $0.contains(expected) }, "no request for \(expected)")
        }
        let pngs = try FileManager.default.contentsOfDirectory(atPath: Self.screenshots.path).filter { $0.hasSuffix(".png") }
        XCTAssertTrue(pngs.contains("4-posted.png"), "\(pngs)")

        // Another local server, on another port of 127.0.0.1 (the same site: cookies ignore ports).
        // The browser, holding our session, visits it: our cookie must not be sent there, where it
        // could be replayed.
        let received = workDir.appendingPathComponent("other-port-cookies.txt")
        let other = try Self.cookieLoggingServer(logging: received, in: workDir)
        defer { other.process.terminate(); other.process.waitUntilExit() }
        try browser.navigate(to: URL(string: "http://127.0.0.1:\(other.port)/any/page")!)
        try browser.navigate(to: URL(string: "http://127.0.0.1:\(other.port)/")!)
        let cookies = try String(contentsOf: received, encoding: .utf8)
        XCTAssertGreaterThanOrEqual(cookies.split(separator: "\n").count, 2, "the other server saw both visits: \(cookies)")
        XCTAssertFalse(cookies.contains("hreader_session"), "our session cookie reached another port: \(cookies)")
    }

    /// Issue 26 in the browser: the lab trends (reference band, a value outside it marked, reached from
    /// the summary and from a result on the timeline), Apple Health's saturation read as 99 %, and the
    /// search box, whose snippet of a record holding HTML shows that HTML as text.
    /// An HTML note opened from its document page: shown under `Content-Security-Policy: sandbox`, its
    /// script never runs (the title it would set stays, the request it would make is never made).
    func testAnHTMLNotesScriptNeverRunsInHeadlessChromium() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Lovelace"]))
        let served = try serve()
        defer { stop(served) }
        // Inline script (which the app's own policy would block too) and a script from the app's own
        // origin (which only the sandbox and its default-src 'none' block).
        let note = try file("note.html", """
            <html><head><title>Visit note</title><script src="\(served.prefix)/static/app.js?from-the-note=2"></script></head>
            <body><p id="said">Visit: blood pressure reviewed.</p>
            <script>document.title = 'pwned'; document.getElementById('said').textContent = 'pwned'; fetch('\(served.prefix)/api/patients?from-the-note=1')</script>
            <img src="x" onerror="document.title='pwned'"></body></html>
            """)
        try ok(withPassword(["documents", "add", note, "--patient", "1", "--title", "Visit note"]))
        let browser = try WebDriver.start(screenshotsDirectory: Self.screenshots)
        defer { browser.quit() }
        try browser.navigate(to: served.url)
        try browser.click(browser.waitForElement(css: "li.patient .patient-link"))
        try browser.click(browser.waitForElement(css: "a.documents-link"))
        try browser.click(browser.waitForElement(css: "table.documents a"))
        XCTAssertEqual(try browser.text(of: browser.waitForElement(css: "pre.document-text")), "Visit: blood pressure reviewed.")
        try browser.click(browser.findElement(css: "a.file-link"))
        let said = try browser.waitForElement(css: "#said")
        usleep(500_000)   // time for a script to have run, had it been allowed to
        XCTAssertEqual(try browser.text(of: said), "Visit: blood pressure reviewed.")
        XCTAssertEqual(try browser.executeScript("return document.title") as? String, "Visit note")
        let requested = try browser.requestedURLs()
        XCTAssertFalse(requested.contains { $0.contains("from-the-note") }, "the note's script and request were never loaded: \(requested)")
    }

    func testAddAProviderFindsBrandsAsOneTypesInHeadlessChromium() throws {
        try initVault()
        let cache = ["XDG_CACHE_HOME": workDir.appendingPathComponent("cache").path]
        let bundle = workDir.appendingPathComponent("brands.json")
        var fixture = ProviderPagesTests.hostile
        fixture.brands[0].name = #"Evil <img src=x onerror="document.title='pwned'"> Clinic"#
        try fixture.data.write(to: bundle)
        XCTAssertEqual(try hreader(["providers", "update", "--from", bundle.path, "--vendor", "epic"], env: cache).status, 0)
        let served = try serve(env: cache)
        defer { stop(served) }
        try FileManager.default.createDirectory(at: Self.screenshots, withIntermediateDirectories: true)
        let browser = try WebDriver.start(screenshotsDirectory: Self.screenshots)
        defer { browser.quit() }

        try browser.navigate(to: served.url)
        try browser.click(browser.waitForElement(css: #"header nav a[href$="/providers"]"#))
        let box = try browser.waitForElement(css: #"#provider-search input[name="q"]"#)
        XCTAssertTrue(try browser.findElements(css: "li.provider").isEmpty)
        // Typing, no submit: the script asks /api/providers and draws the hits.
        try browser.sendKeys("samarit", to: box)
        try browser.waitUntil(timeout: 10, "a live result") { (try? browser.findElements(css: "li.provider").count) == 1 }
        XCTAssertEqual(try browser.text(of: browser.findElement(css: "li.provider .name")), "Good Samaritan Hospital")
        XCTAssertTrue(try browser.text(of: browser.findElement(css: "li.provider .meta")).contains("Madison, WI"))
        XCTAssertTrue(try browser.currentURL.hasSuffix("/providers?q=samarit"), "the address follows the search")
        _ = try browser.screenshot(named: "8-add-a-provider")

        try browser.clear(box)
        try browser.sendKeys("evil clinic", to: box)
        try browser.waitUntil(timeout: 10, "the hostile brand") {
            (try? browser.text(of: browser.findElement(css: "li.provider .name")))?.hasPrefix("Evil <img") ?? false
        }
        XCTAssertTrue(try browser.findElements(css: "li.provider img").isEmpty, "its name is text, not an image")
        try browser.click(browser.findElement(css: "li.provider .provider-link"))
        let heading = try browser.waitForElement(css: "section.provider-page h1")
        XCTAssertEqual(try browser.text(of: heading), #"Evil <img src=x onerror="document.title='pwned'"> Clinic"#)
        usleep(300_000)
        XCTAssertTrue((try browser.executeScript("return document.title") as? String ?? "").hasPrefix("Evil <img"), "no handler ran")
        let command = try browser.text(of: browser.findElement(css: "#login-command"))
        XCTAssertTrue(command.hasPrefix("hreader sources login --provider epic-"), command)
        XCTAssertEqual(try browser.findElements(css: "table.endpoints tr").count, 2, "a header and its endpoint")
        _ = try browser.screenshot(named: "9-provider-page")
        let foreign = try browser.requestedURLs().filter { !$0.hasPrefix(served.base + "/") }
        XCTAssertEqual(foreign, [], "every request stays on this server")
    }

    /// The provider page's *Log in* in a real browser (issue 38): the form posted with the session's
    /// cookie and CSRF token, the portal's sign-in page opened in a new tab (the sample server's SMART
    /// mode approves at once and sends the tab to hreader's listener), the login's page reloading
    /// itself when the portal has sent the browser back, and the Yes button storing the login.
    /// Under `Referrer-Policy: no-referrer` Chromium sent `Origin: null` with these form posts, which
    /// the origin check refused (403): this test failed then.
    func testALoginFromAProvidersPageInHeadlessChromium() throws {
        try initVault()
        let cache = ["XDG_CACHE_HOME": workDir.appendingPathComponent("cache").path]
        let server = try SampleServer(["--smart", "--smart-client-id", "web-app"], workDir: workDir)
        defer { server.stop() }
        try ok(["providers", "update", "--from", server.base.absoluteString + "/brands.json", "--vendor", "sample"], env: cache)
        try ok(withPassword(["providers", "client", "set", "sample", "--client-id", "web-app"]))
        let served = try serve(env: cache)
        defer { stop(served) }
        try FileManager.default.createDirectory(at: Self.screenshots, withIntermediateDirectories: true)
        let browser = try WebDriver.start(screenshotsDirectory: Self.screenshots)
        defer { browser.quit() }
        func text(_ css: String) throws -> String { try browser.text(of: browser.findElement(css: css)) }

        try browser.navigate(to: served.url)
        try browser.click(browser.waitForElement(css: #"header nav a[href$="/providers"]"#))
        try browser.sendKeys("sample general", to: browser.waitForElement(css: #"#provider-search input[name="q"]"#))
        try browser.waitUntil(timeout: 10, "a live result") { ((try? browser.findElements(css: "li.provider").count) ?? 0) >= 1 }
        XCTAssertEqual(try text("li.provider .name"), "Sample General Hospital")
        try browser.click(browser.findElement(css: "li.provider .provider-link"))
        try browser.click(browser.waitForElement(css: "form.provider-login-form button.login"))

        // The login's page: the portal's sign-in link, opened in a new tab; this tab stays and follows the login.
        let link = try browser.waitForElement(css: "a.sign-in-link", timeout: 20)
        let loginPage = try browser.currentURL
        XCTAssertTrue(loginPage.contains(served.prefix + "/providers/logins/"), loginPage)
        XCTAssertEqual(try browser.attribute("target", of: link), "_blank")
        XCTAssertEqual(try browser.attribute("rel", of: link), "noopener noreferrer")
        XCTAssertTrue(try browser.attribute("href", of: link)?.hasPrefix(server.base.absoluteString + "/oauth/authorize?") ?? false)
        _ = try browser.screenshot(named: "10-provider-login-sign-in")
        try browser.click(link)
        let yes = try browser.waitForElement(css: "button.yes", timeout: 30)
        let identity = try text(".identity")
        XCTAssertTrue(identity.hasPrefix("The portal logged you in as patient p1 ("), identity)
        _ = try browser.screenshot(named: "11-provider-login-question")
        try browser.click(yes)
        try browser.waitUntil(timeout: 15, "the login is kept") { (try? text("p.done"))?.hasPrefix("Logged in to") ?? false }
        _ = try browser.screenshot(named: "12-provider-login-stored")
        let sources = try json(try ok(withPassword(["sources", "list", "--json"])))["sources"] as? [[String: Any]] ?? []
        XCTAssertEqual(sources.first?["url"] as? String, server.fhir)
        XCTAssertEqual(sources.first?["login_patient"] as? String, "p1")
    }

    /// The Share page's forms in Chromium: a link made and revoked with the session's cookie and CSRF
    /// token. Under the former `Referrer-Policy: no-referrer` both posts carried `Origin: null` and were
    /// refused (403).
    func testTheSharePagesFormsMakeAndRevokeALinkInHeadlessChromium() throws {
        try seedFamily()
        let served = try serve(["--shares"])
        defer { stop(served) }
        try FileManager.default.createDirectory(at: Self.screenshots, withIntermediateDirectories: true)
        let browser = try WebDriver.start(screenshotsDirectory: Self.screenshots)
        defer { browser.quit() }

        try browser.navigate(to: served.url)
        try browser.click(browser.waitForElement(css: "li.patient .patient-link"))
        try browser.click(browser.waitForElement(css: "a.share-link"))
        try browser.sendKeys("For Dr. Lee", to: browser.waitForElement(css: #"section.new-share input[name="label"]"#))
        try browser.sendKeys(served.base, to: browser.findElement(css: #"section.new-share input[name="base_url"]"#))
        try browser.click(browser.findElement(css: "section.new-share button[type=submit]"))
        let made = try browser.waitForElement(css: "article.share h2")
        XCTAssertEqual(try browser.text(of: made), "For Dr. Lee")
        XCTAssertEqual(try browser.findElements(css: "article.share .qr svg").count, 1)
        _ = try browser.screenshot(named: "13-share-made")
        try browser.click(browser.findElement(css: "article.share button.revoke"))
        try browser.waitUntil(timeout: 10, "the link is revoked") {
            (try? browser.findElements(css: "article.share").isEmpty) == true && (try? browser.findElements(css: "p.empty").count) == 1
        }
        let shares = try json(try ok(withPassword(["share", "list", "--json"])))["shares"] as? [[String: Any]] ?? []
        XCTAssertEqual(shares.count, 1)
        XCTAssertNotNil(shares.first?["revoked"] as? String, "\(shares)")
    }

    func testLabTrendsReadableUnitsAndTheSearchBoxInHeadlessChromium() throws {
        try seedLabResults()
        let export = try file("export.xml", AppleHealthTests.export(extraRecords: [
            AppleHealthTests.record("HKQuantityTypeIdentifierOxygenSaturation", "0.97", "%", "2026-03-01 09:20:00 +0000"),
            AppleHealthTests.record("HKQuantityTypeIdentifierOxygenSaturation", "0.99", "%", "2026-03-02 09:20:00 +0000"),
        ]))
        try ok(withPassword(["import", "--apple-health", export, "--patient", "1"]))
        try ok(withPassword(["applets", "add", "org.mitre.hreader.vital-sign.oxygen-saturation", "--patient", "1"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "medication", "--date", "2026-01-11",
                             "--description", #"Metformin <img src=x onerror="document.title='pwned'"> 500 mg"#]))
        let served = try serve()
        defer { stop(served) }
        try FileManager.default.createDirectory(at: Self.screenshots, withIntermediateDirectories: true)
        let browser = try WebDriver.start(screenshotsDirectory: Self.screenshots)
        defer { browser.quit() }
        var requested: [String] = []
        func collect() throws { requested += try browser.requestedURLs() }
        func text(_ css: String) throws -> String { try browser.text(of: browser.findElement(css: css)) }
        func waitForTrends() throws {
            try browser.waitUntil(timeout: 15, "the trends are drawn") {
                (try? browser.executeScript("return document.getElementById('trends').dataset.loaded") as? String) == "1"
            }
        }

        try browser.navigate(to: served.url)
        try browser.click(browser.waitForElement(css: "li.patient .patient-link"))
        _ = try browser.waitForElement(css: "section.tiles")
        XCTAssertEqual(try text(#"article.tile[data-identifier="org.mitre.hreader.vital-sign.oxygen-saturation"] .value"#), "99 %")

        // Every result code's trend, from the summary.
        try browser.click(browser.findElement(css: "a.trends-link"))
        try waitForTrends()
        let keys = try browser.findElements(css: "figure.trend").map { try browser.attribute("data-key", of: $0) }
        XCTAssertEqual(keys, ["LOINC|4548-4", "LOINC|2093-3"])
        let cholesterol = #"figure.trend[data-key="LOINC|2093-3"]"#
        XCTAssertEqual(try browser.findElements(css: "\(cholesterol) svg rect.reference").count, 1, "the reference range is drawn")
        XCTAssertEqual(try browser.findElements(css: "\(cholesterol) svg circle.dot").count, 3)
        let outside = try browser.findElements(css: "\(cholesterol) svg circle.out-of-range")
        XCTAssertEqual(outside.count, 1, "232 is marked")
        XCTAssertEqual(try browser.attribute("data-flag", of: outside[0]), "H")
        XCTAssertEqual(try text("\(cholesterol) .reference-text"), "Reference range 100–199 mg/dL")
        // The band lies between 100 and 199 on the chart, and the marked dot above it.
        let geometry = try XCTUnwrap(browser.executeScript("""
            const f = document.querySelector('figure.trend[data-key="LOINC|2093-3"]');
            const band = f.querySelector('rect.reference').getBBox(), dot = f.querySelector('circle.out-of-range');
            return [band.y, band.y + band.height, Number(dot.getAttribute('cy'))];
            """) as? [Double])
        XCTAssertLessThan(geometry[2], geometry[0], "the high reading sits above the band")
        XCTAssertEqual(try browser.findElements(css: #"figure.trend[data-key="LOINC|4548-4"] svg circle.out-of-range"#).count, 1,
                       "6.1 % is over the 5.6 % bound, flagged or not")
        _ = try browser.screenshot(named: "5-lab-trends")
        try collect()

        // One code's page, with its readings in a table.
        try browser.click(browser.findElement(css: "\(cholesterol) a.trend-title"))
        try waitForTrends()
        let address = try browser.currentURL
        XCTAssertTrue(address.contains("code=LOINC%7C2093-3"), address)
        let rows = try browser.findElements(css: "table.readings-table tr.out-of-range").map { try browser.text(of: $0) }
        XCTAssertEqual(rows.count, 1)
        XCTAssertTrue(rows.first?.contains("232 mg/dL") == true && rows.first?.contains("H") == true, "\(rows)")
        _ = try browser.screenshot(named: "6-lab-trend-cholesterol")
        try collect()

        // From a result on the timeline to its trend; the saturation chart reads 99 %.
        let uuid = try XCTUnwrap(browser.executeScript("return document.getElementById('trends').dataset.patient") as? String)
        try browser.navigate(to: URL(string: "\(served.base)\(served.prefix)/patients/\(uuid)/timeline?page=year&at=2025-03-01")!)
        try waitForLoad(browser, scope: "year")
        let link = try browser.findElement(css: #"section.entry-list[data-key="results"] a.trend-link"#)
        XCTAssertTrue(try text(#"section.entry-list[data-key="results"] li"#).contains("232 mg/dL"))
        try browser.click(link)
        try waitForTrends()
        XCTAssertEqual(try browser.executeScript("return document.getElementById('trends').dataset.code") as? String, "LOINC|2093-3")
        try browser.navigate(to: URL(string: "\(served.base)\(served.prefix)/patients/\(uuid)/timeline?page=month&at=2026-03-15")!)
        try waitForLoad(browser, scope: "month")
        XCTAssertEqual(try text(#"figure.vital[data-description="Oxygen saturation"] .latest"#), "99 %")
        let tips = try browser.findElements(css: #"figure.vital[data-description="Oxygen saturation"] circle title"#)
            .map { try browser.property("textContent", of: $0) as? String ?? "" }
        XCTAssertTrue(tips.allSatisfy { $0.hasPrefix("97 %") || $0.hasPrefix("99 %") }, "\(tips)")
        try collect()

        // The search box in the page's header: a hit, the match marked, the record's HTML shown as text.
        try browser.sendKeys("metformin", to: browser.findElement(css: #".search-box input[name="q"]"#))
        try browser.click(browser.findElement(css: ".search-box button"))
        _ = try browser.waitForElement(css: "#search-results")
        XCTAssertEqual(try text(".hit .snippet mark"), "Metformin")
        XCTAssertTrue(try text(".hit .snippet").contains(#"<img src=x onerror="document.title='pwned'">"#), "shown as text")
        XCTAssertEqual(try browser.findElements(css: ".hit img").count, 0)
        XCTAssertNotEqual(try browser.executeScript("return document.title") as? String, "pwned")
        XCTAssertEqual(try browser.findElements(css: #".search-form select[name="patient"] option[selected]"#).map { try browser.text(of: $0) },
                       ["Grace Hopper"], "searched the patient whose page it was")
        _ = try browser.screenshot(named: "7-search")
        try collect()

        // The date fields' calendar icon is Chromium's own inline `data:` image: no request leaves the browser for it.
        let foreign = requested.filter { !$0.hasPrefix(served.base + "/") && !$0.hasPrefix("data:image/svg+xml;") }
        XCTAssertEqual(foreign, [], "requests outside \(served.base)")
        XCTAssertTrue(requested.contains { $0.contains("/api/patients/\(uuid)/trends") }, "the charts come from the trends API")
    }

    /// A plain HTTP server on 127.0.0.1 (python3's http.server) that writes the Cookie header of every
    /// request it gets to `log`, one line each.
    static func cookieLoggingServer(logging log: URL, in directory: URL) throws -> (process: Process, port: Int) {
        let script = directory.appendingPathComponent("cookie-server.py")
        try Data("""
            import http.server, sys
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    with open(sys.argv[1], "a") as log:
                        log.write("cookie: " + (self.headers.get("Cookie") or "") + "\\n")
                    body = b"<!doctype html><title>another local server</title><p>other</p>"
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def log_message(self, *args):
                    pass
            server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
            print(server.server_address[1], flush=True)
            server.serve_forever()
            """.utf8).write(to: script)
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script.path, log.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let line = String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let port = Int(line) else { process.terminate(); throw NSError(domain: "cookie-server", code: 1) }
        return (process, port)
    }

    /// A busy server refuses a request at once with 503 and `Retry-After` (a standing line, docs/web.md);
    /// the page asks again after it and loads, instead of showing the refusal (app.js `getJSON`). The
    /// test's own clients keep the one reader busy until the browser has been refused at least once.
    func testTheTimelineAsksAgainAfterABusyServersRetryAfterInHeadlessChromium() throws {
        try seedFamily()
        // A watch's ten years beside the family: its decade pages keep the reader busy for a while each.
        let export = workDir.appendingPathComponent("watch.zip")
        try HealthExportGenerator.write(export, records: 30_000, days: 3650)
        try ok(withPassword(["import", "--apple-health", export.path, "--as", "me"]))
        let served = try serve(env: ["HREADER_SERVE_READERS": "1", "HREADER_SERVE_LINE_MS": "1"])
        defer { stop(served) }
        let browser = try WebDriver.start(screenshotsDirectory: Self.screenshots)
        defer { browser.quit() }
        try browser.navigate(to: served.url)
        _ = try browser.waitForElement(css: "ol.patients")
        try browser.click(browser.findElement(css: "li.patient .patient-link"))
        _ = try browser.waitForElement(css: "a.timeline-link")
        try browser.click(browser.findElement(css: "a.timeline-link"))
        try waitForLoad(browser, scope: "week")
        let uuid = try XCTUnwrap(browser.executeScript("return document.getElementById('timeline').dataset.patient") as? String)

        // The statuses of the page's own requests for its data, in the order they were made.
        func statuses() throws -> [Int] {
            try browser.executeScript("""
                return performance.getEntriesByType('resource')
                  .filter((e) => e.name.includes('/timeline.json?') || e.name.includes('/vitals?'))
                  .map((e) => e.responseStatus)
                """) as? [Int] ?? []
        }
        let busy = NSLock()
        nonisolated(unsafe) var keepBusy = true
        let clients = DispatchGroup()
        for _ in 0..<4 {
            clients.enter()
            Thread.detachNewThread {
                var patient = 0
                while busy.withLock({ keepBusy }) {
                    patient = patient % 3 + 1
                    _ = try? served.bearer("/timeline.json?patient=\(patient)&page=decade")
                }
                clients.leave()
            }
        }
        try browser.navigate(to: URL(string: "\(served.base)\(served.prefix)/patients/\(uuid)/timeline?page=month&at=\(Self.seededAt)")!)
        do {
            try browser.waitUntil(timeout: 20, "the page is refused with 503") { try statuses().contains(503) }
        } catch {
            busy.withLock { keepBusy = false }
            clients.wait()
            throw error
        }
        busy.withLock { keepBusy = false }
        clients.wait()

        try browser.waitUntil(timeout: 30, "the month loads after asking again") {
            (try? browser.executeScript("return document.getElementById('timeline').dataset.loaded") as? String) == "month"
        }
        XCTAssertFalse(try browser.text(of: browser.findElement(css: "#status")).contains("Could not load"))
        let seen = try statuses()
        XCTAssertEqual(seen.last, 200, "\(seen)")
        XCTAssertTrue(seen.contains(503), "\(seen)")
    }

    /// The page marks the timeline root with the scope it has drawn.
    func waitForLoad(_ browser: WebDriver, scope: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try browser.waitUntil(timeout: 15, "the \(scope) timeline loads") {
            (try? browser.executeScript("return document.getElementById('timeline').dataset.loaded") as? String) == scope
        }
    }
}
