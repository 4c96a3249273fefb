import Foundation
import HReaderJSON
import HReaderKit
import Hummingbird

/// "Add a provider" (issue 38, docs/web.md): a search of the provider directory with live results,
/// a brand's page, and the login there. The directory is public data in the user's cache, not
/// the vault: the search and the brand's page never touch the gate. A brand's texts are the vendor's,
/// not ours, and every one of them is escaped on the page and written with `textContent` by the script.
///
/// The brand's page posts its *Log in* form (CSRF-checked, as every post) to run the login of
/// `sources login --provider ID` (`ProviderLogins`): the same endpoint, client registration and
/// refusals (422 with the reason), the login's own page (`/providers/logins/ID`) with the portal's
/// sign-in link and then the question whether the patient found is the person, Yes or No.
struct ProviderPages {
    let directory: ProviderDirectory
    let gate: VaultGate
    let logins: ProviderLogins

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
            let brand = try brand(try context.parameters.require("id"))
            return HTMLResponse.make(Self.brand(brand, visit: context.visit))
        }
        // Log in there: the choice and the refusals of `sources login --provider ID` (shared in Kit),
        // the vendor's registration read from the vault, and the login run beside the requests.
        router.post("/providers/:id/login") { _, context in
            let brand = try brand(try context.parameters.require("id"))
            do {
                _ = try brand.loginEndpoint()
            } catch let error as HReaderError {
                throw WebError(status: .unprocessableContent, message: error.message)
            }
            let registration = try await gate.read { try $0.providerClient(vendor: brand.vendor) }
            let request = try SmartLoginRequest(provider: brand, registration: registration)
            let id = try logins.start(brand: brand, request: request)
            return Response.redirect(to: "\(context.base)/providers/logins/\(id)", type: .normal)
        }
        router.get("/providers/logins/:login") { _, context in
            guard let login = logins.login(try context.parameters.require("login")) else { throw ProviderLogins.unknown }
            return HTMLResponse.make(Self.login(login, visit: context.visit))
        }
        router.get("/api/providers/logins/:login") { _, context in
            guard let login = logins.login(try context.parameters.require("login")) else { throw ProviderLogins.unknown }
            return JSONResponse.make(.object([("login", .object([("id", .string(login.id)), ("provider", .string(login.brandID)),
                                                                 ("phase", .string(login.phase.rawValue))]))]))
        }
        for (answer, yes) in [("yes", true), ("no", false)] {
            router.post(RouterPath("/providers/logins/:login/\(answer)")) { _, context in
                let id = try context.parameters.require("login")
                try await logins.answer(id, yes: yes, gate: gate)
                return Response.redirect(to: "\(context.base)/providers/logins/\(id)", type: .normal)
            }
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

    func brand(_ id: String) throws -> DirectoryBrand {
        guard directory.exists, let brand = try directory.brand(id: id) else {
            throw WebError.notFound("no provider has the id \(id) in the directory")
        }
        return brand
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
                <p>hreader logs in to <code>\(escape(endpoint.url))</code> with SMART App Launch: you sign in at the \
                portal in a new tab, the portal sends you back to hreader on this machine, and this page asks whether the \
                patient it logged you in as is you before anything is kept.</p>
                <form class="provider-login-form" method="post" action="\(base)/providers/\(escape(FormBody.encode(brand.id)))/login">\
                <input type="hidden" name="csrf_token" value="\(escape(visit.csrf ?? ""))">\
                <button type="submit" class="login">Log in</button></form>
                <p class="meta">Or in a terminal: <code id="login-command">\(escape(command))</code> \
                <button type="button" class="copy" data-copy="login-command">Copy</button>. A client id for \(escape(brand.vendor)) may be \
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

    /// A login's page: what it waits for, and, once the portal sent the person back, the question.
    /// The script (`#provider-login`) asks `/api/providers/logins/ID` and reloads when the phase
    /// changes; without it, the Refresh link does the same.
    static func login(_ login: ProviderLogins.Login, visit: Visit) -> String {
        let base = escape(visit.base)
        let page = "\(base)/providers/logins/\(escape(login.id))"
        let csrf = "<input type=\"hidden\" name=\"csrf_token\" value=\"\(escape(visit.csrf ?? ""))\">"
        let refresh = "<p class=\"meta\"><a class=\"refresh\" href=\"\(page)\">Refresh</a> (this page follows the login by itself)</p>"
        let ends = "The login ends at \(escape(Self.clock(login.expires))) if it is not finished."
        let body: String
        switch login.phase {
        case .starting:
            body = "<p>Asking <code>\(escape(login.server))</code> how to log in…</p>\(refresh)"
        case .waiting:
            let place = login.portal ?? login.brandName
            let host = login.authorizationURL?.host.map { " (\(escape($0)))" } ?? ""
            body = """
                <p class="sign-in"><a class="button sign-in-link" href="\(escape(login.authorizationURL?.absoluteString ?? ""))" \
                target="_blank" rel="noopener noreferrer">Sign in at \(escape(place))</a>\(host)</p>
                <p>Sign in and choose the patient there. The portal then sends you back to hreader on this machine, and this \
                page asks whether the patient it logged you in as is you. \(ends)</p>
                \(refresh)
                """
        case .confirm:
            let who = login.identity?.description ?? "no patient"
            body = """
                <p class="identity">The portal logged you in as \(escape(who)).</p>
                <p>Is this the person whose record you want in hreader? <b>Yes</b> keeps the login's tokens, encrypted in the \
                vault; <b>No</b> forgets them (log in again as the right patient). \(ends)</p>
                <div class="answers"><form method="post" action="\(page)/yes">\(csrf)<button type="submit" class="yes">Yes, keep it</button></form> \
                <form method="post" action="\(page)/no">\(csrf)<button type="submit" class="no">No</button></form></div>
                """
        case .storing:
            body = "<p>Keeping the login in the vault…</p>\(refresh)"
        case .stored:
            let outcome = login.outcome
            let patient = outcome?.patient.map { "patient \(escape($0))" + (outcome?.patientName.map { " (\(escape($0)))" } ?? "") }
            let server = escape(outcome?.server ?? login.server)
            body = """
                <p class="done">Logged in to <code>\(server)</code>\(patient.map { " as \($0)" } ?? ""). The tokens are kept, encrypted, in \
                the vault.</p>
                <p><code>hreader import --server \(server)</code> imports that record, and <code>hreader sync</code> keeps it current.</p>
                """
        case .declined:
            body = "<p class=\"done\">Nothing was kept, as you answered. Log in again as the right patient.</p>"
        case .failed:
            body = "<p class=\"empty\">The login did not go through: \(escape(login.problem ?? "it failed"))</p>"
        }
        return Pages.layout(title: "Log in to \(login.brandName)", visit: visit, body: """
            <p><a href="\(base)/providers/\(escape(FormBody.encode(login.brandID)))">← \(escape(login.brandName))</a></p>
            <section id="provider-login" class="provider-login" data-phase="\(login.phase.rawValue)" \
            data-api="\(base)/api/providers/logins/\(escape(login.id))">
            <h1>Log in to \(escape(login.brandName))</h1>
            \(body)
            </section>
            """)
    }

    /// "14:05" in the server's time zone (the browser is on the same machine).
    static func clock(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "HH:mm"
        return formatter.string(from: date)
    }
}
