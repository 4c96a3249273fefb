import Foundation
import HReaderJSON
import HReaderKit
import Hummingbird

/// "Add a provider" (issue 38, docs/web.md): a search of the provider directory with live results,
/// a brand's page, and how to log in there. The directory is public data in the user's cache, not
/// the vault: these routes never touch the gate. A brand's texts are the vendor's, not ours, and
/// every one of them is escaped on the page and written with `textContent` by the script.
///
/// The login itself is not run by the server: `sources login --provider` waits up to five minutes
/// for the browser's redirect on a loopback port of its own and asks on the terminal whether the
/// patient it logged in as is the right one, which a request of the web view (one writer, a 10 s
/// budget) cannot do. The page gives the exact command instead.
struct ProviderPages {
    let directory: ProviderDirectory

    func register(on router: RouterGroup<WebContext>) {
        router.get("/providers") { request, context in
            let query = request.uri.queryParameters
            let text = query.get("q") ?? ""
            let state = Self.state(query.get("state"))
            var hits: [ProviderHit] = []
            var problem: String?
            if !directory.exists {
                problem = "There is no provider directory on this machine yet. Fetch it with hreader providers update."
            } else if !text.trimmingCharacters(in: .whitespaces).isEmpty || state != nil {
                hits = try directory.search(ProviderQuery(text: text, state: state, limit: 20))
            }
            return HTMLResponse.make(Self.search(text, state: state, hits: hits, problem: problem, visit: context.visit))
        }
        router.get("/providers/:id") { _, context in
            let id = try context.parameters.require("id")
            guard directory.exists, let brand = try directory.brand(id: id) else {
                throw WebError.notFound("no provider has the id \(id) in the directory")
            }
            return HTMLResponse.make(Self.brand(brand, visit: context.visit))
        }
        // The same search and the same JSON as `hreader providers search --json`.
        router.get("/api/providers") { request, _ in
            let query = request.uri.queryParameters
            let text = query.get("q") ?? ""
            let state = Self.state(query.get("state"))
            let city = query.get("city").flatMap { $0.isEmpty ? nil : $0 }
            let limit = try Routes.integer(query.get("limit"), name: "limit", default: 20, in: 1...1000)
            guard !text.trimmingCharacters(in: .whitespaces).isEmpty || state != nil || city != nil else {
                throw WebError.badRequest("give words to search for (q), or a state or city")
            }
            guard directory.exists else {
                throw WebError.notFound("no provider directory yet; run 'hreader providers update'")
            }
            let hits = try directory.search(ProviderQuery(text: text, state: state, city: city, limit: limit))
            return JSONResponse.make(.object([("providers", .array(hits.map { $0.brand.hitJSON(state: state) }))]))
        }
    }

    static func state(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        return text
    }

    // MARK: - Pages

    static func escape(_ text: String) -> String { Pages.escape(text) }

    static func place(_ brand: DirectoryBrand, state: String? = nil) -> String {
        brand.place(in: state).map { [$0.city, $0.state].compactMap { $0 }.joined(separator: ", ") } ?? ""
    }

    /// The search page: a plain GET form (it works without the script) and the results of `q`; the
    /// script (`#provider-search`) asks `/api/providers` as one types and redraws the list.
    static func search(_ text: String, state: String?, hits: [ProviderHit], problem: String?, visit: Visit) -> String {
        let base = escape(visit.base)
        let items = hits.map { hit in
            let brand = hit.brand
            return """
                <li class="provider"><a class="provider-link" href="\(base)/providers/\(escape(FormBody.encode(brand.id)))">\
                <span class="name">\(escape(brand.brand.name))</span></a> \
                <span class="meta">\(escape([brand.brand.portalName, place(brand, state: state), brand.vendor]
                    .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " · ")))</span> \
                <span class="r4">R4: \(escape(brand.r4Text))</span></li>
                """
        }.joined()
        let asked = !text.trimmingCharacters(in: .whitespaces).isEmpty || state != nil
        let results = problem.map { "<p class=\"empty\">\(escape($0))</p>" }
            ?? (asked && hits.isEmpty ? "<p class=\"empty\">No provider matches; try fewer words.</p>" : "")
        return Pages.layout(title: "Add a provider", visit: visit, body: """
            <h1>Add a provider</h1>
            <p class="meta">Find your hospital or practice by its name, its portal's name or its city, from the \
            vendors' public directory on this machine. Nothing you type leaves it.</p>
            <form id="provider-search" class="provider-search" role="search" method="get" action="\(base)/providers">\
            <input type="search" name="q" value="\(escape(text))" maxlength="200" autocomplete="off" \
            placeholder="Saint Mary's Madison" aria-label="Provider name, portal or city">\
            <input type="text" name="state" value="\(escape(state ?? ""))" maxlength="2" size="3" placeholder="ST" aria-label="State">\
            <button type="submit">Search</button></form>
            <div id="provider-results" aria-live="polite">\(results)<ul class="providers">\(items)</ul></div>
            """)
    }

    /// A brand's page: what the directory knows, its endpoints, and the command that logs in there.
    static func brand(_ brand: DirectoryBrand, visit: Visit) -> String {
        let base = escape(visit.base)
        let b = brand.brand
        var facts: [(String, String)] = []
        if let portal = b.portalName { facts.append(("Portal", escape(portal))) }
        if let url = b.portalURL { facts.append(("Portal address", escape(url))) }
        if let website = b.website { facts.append(("Website", escape(website))) }
        let places = b.places.map { [$0.city, $0.state].compactMap { $0 }.joined(separator: ", ") }.filter { !$0.isEmpty }
        if !places.isEmpty { facts.append((places.count == 1 ? "Place" : "Places", escape(places.joined(separator: "; ")))) }
        if !b.aliases.isEmpty { facts.append(("Also known as", escape(b.aliases.joined(separator: "; ")))) }
        if let parent = b.affiliatedWith { facts.append(("Part of", escape(parent))) }
        facts.append(("Vendor", escape(brand.vendor)))
        facts.append(("Id", "<code>\(escape(brand.id))</code>"))
        let endpoints = b.endpoints.isEmpty ? "<p class=\"empty\">No FHIR endpoint is known for this provider.</p>" : """
            <table class="endpoints"><tr><th>FHIR base URL</th><th>Version</th><th>Status</th></tr>\
            \(b.endpoints.map { e in
                "<tr><td><code>\(escape(e.url))</code></td><td>\(escape(e.versionName))</td><td>\(escape(e.status))</td></tr>"
            }.joined())</table>
            """
        let command = "hreader sources login --provider \(brand.id)"
        let login: String
        do {
            let endpoint = try brand.loginEndpoint()   // the same choice, and the same refusals, as the command
            login = """
                <p>hreader logs in to <code>\(escape(endpoint.url))</code> with SMART App Launch: your browser opens the \
                portal's sign-in page, and the portal sends you back to hreader on this machine. Run this in a terminal \
                (the login asks there whether the patient it found is you, and keeps the tokens in the vault):</p>
                <p class="login-command"><code id="login-command">\(escape(command))</code> \
                <button type="button" class="copy" data-copy="login-command">Copy</button></p>
                <p class="meta">The web view does not run the login itself: the login waits for the portal on a port of \
                its own for up to five minutes and asks you on the terminal. A client id for \(escape(brand.vendor)) may be \
                needed first: <code>hreader providers client set \(escape(brand.vendor)) --client-id ID</code>.</p>
                """
        } catch {
            login = "<p class=\"empty\">\(escape((error as? HReaderError)?.message ?? "\(error)"))</p>"
        }
        return Pages.layout(title: b.name, visit: visit, body: """
            <p><a href="\(base)/providers">← Add a provider</a></p>
            <section class="provider-page">
            <h1>\(escape(b.name))</h1>
            <dl class="facts">\(facts.map { "<dt>\($0.0)</dt><dd>\($0.1)</dd>" }.joined())</dl>
            <h2>Endpoints</h2>
            \(endpoints)
            <h2>Log in</h2>
            \(login)
            </section>
            """)
    }
}
