import Foundation
import TestSupport
import XCTest

/// "Add a provider" in `hreader serve` (issue 38, docs/web.md): the search page, its JSON (the
/// same search and shape as `hreader providers search --json`), a brand's page, and brands whose
/// names are hostile HTML, all through a real server process on 127.0.0.1.
final class ProviderPagesTests: CLITestCase {
    var cache: [String: String] { ["XDG_CACHE_HOME": workDir.appendingPathComponent("cache").path] }

    static var hostile: BrandsFixture { BrandsFixture(
        brands: [
            .init("evil", #"<script>alert(1)</script> Clinic & "Co""#, aliases: ["<img src=x onerror=alert(2)>"],
                  places: [("Evil<City", "WI")], portal: "</title><b>MyChart</b>", endpoints: ["evil-r4"]),
            .init("good", "Good Samaritan Hospital", places: [("Madison", "WI")], portal: "MyChart Good", endpoints: ["good-r4", "good-r2"]),
            .init("old", "Oldtown Clinic", places: [("Oldtown", "ME")], endpoints: ["old-r2"]),
        ],
        endpoints: [
            .init("evil-r4", #"https://evil.example.org/r4?x="><script>alert(3)</script>"#),
            .init("good-r4", "https://good.example.org/api/FHIR/R4/"),
            .init("good-r2", "https://good.example.org/api/FHIR/DSTU2/", version: "1.0.2"),
            .init("old-r2", "https://old.example.org/api/FHIR/DSTU2/", version: "1.0.2"),
        ]) }

    func update() throws {
        let bundle = workDir.appendingPathComponent("brands.json")
        try Self.hostile.data.write(to: bundle)
        let result = try hreader(["providers", "update", "--from", bundle.path, "--vendor", "epic"], env: cache)
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    func testTheSearchAnswersAsTheCommandLineDoesAndThePagesEscapeHostileNames() throws {
        try initVault()
        try update()
        let served = try serve(env: cache)
        defer { stop(served) }

        // The JSON: the same search, the same shape, as the command line.
        for query in ["clinic", "good%20samaritan", "hospital&state=WI", "mychart"] {
            let api = try served.bearer("/api/providers?q=\(query)")
            XCTAssertEqual(api.status, 200, api.body)
            XCTAssertTrue(api.header("Content-Type")?.hasPrefix("application/json") ?? false)
            let words = query.split(separator: "&")[0].replacingOccurrences(of: "%20", with: " ").split(separator: " ").map(String.init)
            let state = query.contains("state=") ? ["--state", "WI"] : []
            let cli = try hreader(["providers", "search"] + words + state + ["--json"], env: cache)
            XCTAssertEqual(cli.status, 0, cli.stderr)
            let web = try JSONSerialization.jsonObject(with: Data(api.body.utf8)) as? NSDictionary
            let command = try JSONSerialization.jsonObject(with: Data(cli.stdout.utf8)) as? NSDictionary
            XCTAssertEqual(web, command, "GET /api/providers?q=\(query)")
            XCTAssertFalse((web?["providers"] as? [Any] ?? []).isEmpty, query)
        }
        XCTAssertEqual(try served.bearer("/api/providers").status, 400, "no word to look for")
        XCTAssertEqual(try served.bearer("/api/providers?q=x&limit=0").status, 400)

        // The search page: results rendered by the server (the script redraws them as one types).
        let page = try served.bearer("/providers?q=clinic")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains(#"id="provider-search""#))
        XCTAssertTrue(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt; Clinic &amp; &quot;Co&quot;"), page.body)
        XCTAssertTrue(page.body.contains("&lt;/title&gt;&lt;b&gt;MyChart&lt;/b&gt;"))
        XCTAssertTrue(page.body.contains("Oldtown Clinic"))
        for raw in ["<script>alert", "<b>MyChart", "<img src=x"] { XCTAssertFalse(page.body.contains(raw), raw) }
        XCTAssertEqual(page.body.components(separatedBy: "<script").count - 1, 1, "only the app's own script, no inline one")
        XCTAssertTrue(page.header("Content-Security-Policy")?.contains("script-src 'self'") ?? false)

        // A brand's page: its facts, its endpoints with version and status, and the command to log in.
        let evilID = try XCTUnwrap(((try JSONSerialization.jsonObject(with: Data(try served.bearer("/api/providers?q=evil").body.utf8))
            as? [String: Any])?["providers"] as? [[String: Any]])?.first?["id"] as? String)
        let brand = try served.bearer("/providers/\(evilID)")
        XCTAssertEqual(brand.status, 200, brand.body)
        XCTAssertTrue(brand.body.contains("<title>&lt;script&gt;alert(1)&lt;/script&gt; Clinic &amp; &quot;Co&quot; · hreader</title>"))
        XCTAssertTrue(brand.body.contains("&lt;img src=x onerror=alert(2)&gt;"), "the alias")
        XCTAssertTrue(brand.body.contains("Evil&lt;City, WI"))
        XCTAssertTrue(brand.body.contains("https://evil.example.org/r4?x=&quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;"))
        for raw in ["<script>alert", "<img src=x", "<b>MyChart", #""><script>"#] { XCTAssertFalse(brand.body.contains(raw), raw) }
        XCTAssertTrue(brand.body.contains("hreader sources login --provider \(evilID)"))

        let goodID = try XCTUnwrap(((try JSONSerialization.jsonObject(with: Data(try served.bearer("/api/providers?q=samaritan").body.utf8))
            as? [String: Any])?["providers"] as? [[String: Any]])?.first?["id"] as? String)
        let good = try served.bearer("/providers/\(goodID)").body
        XCTAssertTrue(good.contains("https://good.example.org/api/FHIR/R4/</code></td><td>R4 (4.0.1)</td><td>active</td>"), good)
        XCTAssertTrue(good.contains("DSTU2 (1.0.2)"))
        XCTAssertTrue(good.contains("Madison, WI"))
        XCTAssertTrue(good.contains("MyChart Good"))

        // A brand hreader cannot log in to says why, and offers no command.
        let oldID = try XCTUnwrap(((try JSONSerialization.jsonObject(with: Data(try served.bearer("/api/providers?q=oldtown").body.utf8))
            as? [String: Any])?["providers"] as? [[String: Any]])?.first?["id"] as? String)
        let old = try served.bearer("/providers/\(oldID)").body
        XCTAssertTrue(old.contains("offers only DSTU2 (1.0.2) endpoints"), old)
        XCTAssertFalse(old.contains("sources login --provider"))

        XCTAssertEqual(try served.bearer("/providers/epic-0000000000").status, 404)
    }

    func testWithoutADirectoryThePageSaysHowToFetchIt() throws {
        try initVault()
        let served = try serve(env: cache)
        defer { stop(served) }
        let page = try served.bearer("/providers?q=hospital")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains("hreader providers update"), page.body)
        let api = try served.bearer("/api/providers?q=hospital")
        XCTAssertEqual(api.status, 404)
        XCTAssertTrue(api.body.contains("providers update"), api.body)
    }
}
