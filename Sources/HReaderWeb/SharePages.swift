import Foundation
import HReaderKit
import HReaderModel
import HReaderRecords
import Hummingbird

/// The Share button of a patient's page (issue 37, docs/sharing.md): the patient's SMART Health
/// Links with their QR codes, a form that makes a new one (served by `hreader serve --shares`, as
/// `share create` without `--out`), and revoking. The page holds the links' keys: it is the app's
/// own (token, cookie, CSRF on every form), never cached, and its QR codes are inline SVG, no request.
struct SharePages {
    let gate: VaultGate
    /// Whether this server answers the links (`serve --shares`); the page says so when it does not.
    let servesShares: Bool

    func register(on router: RouterGroup<WebContext>) {
        router.get("/patients/:patient/share") { _, context in
            let reference = try context.parameters.require("patient")
            let (patient, shares) = try await gate.read { open in
                let patient = try Routes.patient(reference, in: open)
                return (patient, try open.shares().filter { $0.patientID == patient.id })
            }
            return HTMLResponse.make(try Self.page(patient, shares: shares, servesShares: servesShares, visit: context.visit))
        }
        router.post("/patients/:patient/share") { incoming, context in
            let reference = try context.parameters.require("patient")
            var request = incoming
            let form = FormBody(try await request.collectBody(upTo: WebGuard.maximumPostBody), of: request)
            let asked = try Self.newShare(form)
            let created = try await gate.write { open in
                try open.createShare(of: try Routes.patient(reference, in: open), destination: .served(baseURL: asked.baseURL),
                                     passcode: asked.passcode, expires: asked.expires, label: asked.label)
            }
            return Response.redirect(to: "\(context.base)/patients/\(FormBody.encode(reference))/share#share-\(created.share.id)", type: .normal)
        }
        router.post("/patients/:patient/share/:id/revoke") { _, context in
            let reference = try context.parameters.require("patient"), id = try context.parameters.require("id")
            try await gate.write { open in
                let patient = try Routes.patient(reference, in: open)
                guard try open.shares().contains(where: { $0.id == id && $0.patientID == patient.id }) else {
                    throw WebError.notFound("this patient has no such share")
                }
                try open.revokeShare(id)
            }
            return Response.redirect(to: "\(context.base)/patients/\(FormBody.encode(reference))/share", type: .normal)
        }
    }

    /// What the form asked for.
    struct NewShare {
        var baseURL: String
        var label: String?
        var passcode: String?
        var expires: Date?
    }

    static let lifetimes: [(value: String, label: String, seconds: Double?)] = [
        ("1d", "a day", 86_400), ("7d", "a week", 7 * 86_400), ("30d", "30 days", 30 * 86_400), ("never", "never", nil),
    ]

    static func newShare(_ form: FormBody) throws -> NewShare {
        func field(_ name: String) -> String? {
            form.value(name).map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let baseURL = field("base_url") else { throw WebError.badRequest("give the address recipients reach 'hreader serve --shares' at") }
        guard let lifetime = lifetimes.first(where: { $0.value == (field("expires") ?? "30d") }) else {
            throw WebError.badRequest("choose how long the link lasts")
        }
        // A passcode is taken as typed (spaces included), as --passcode-file's first line is.
        let passcode = form.value("passcode").flatMap { $0.isEmpty ? nil : $0 }
        return NewShare(baseURL: baseURL, label: field("label"), passcode: passcode,
                        expires: lifetime.seconds.map { Date().addingTimeInterval($0) })
    }

    static func page(_ patient: Patient, shares: [OpenVault.Share], servesShares: Bool, visit: Visit) throws -> String {
        let base = Pages.escape(visit.base), uuid = Pages.escape(patient.uuid)
        let csrf = "<input type=\"hidden\" name=\"csrf_token\" value=\"\(Pages.escape(visit.csrf ?? ""))\">"
        let live = shares.filter { $0.revoked == nil }
        let items = try live.map { share -> String in
            let link = OpenVault.link(of: share).text
            let state = share.attemptsLeft == 0 ? "locked after too many wrong passcodes"
                : share.mode == .static ? "a file at \(share.filePath ?? "")" : "served" + (share.passcodeHash == nil ? "" : ", passcode required")
            return """
                <article class="share" id="share-\(Pages.escape(share.id))">
                <h2>\(Pages.escape(share.label ?? "Summary link"))</h2>
                <div class="qr">\(try QRCode(link).svg())</div>
                <p class="meta">Made \(Pages.escape(share.created)) · \(Pages.escape(share.expires.map { "expires \($0)" } ?? "never expires")) · \
                \(share.accesses) access\(share.accesses == 1 ? "" : "es") · \(Pages.escape(state))</p>
                <details><summary>The link</summary><p class="link"><code>\(Pages.escape(link))</code></p></details>
                <form method="post" action="\(base)/patients/\(uuid)/share/\(Pages.escape(share.id))/revoke">\(csrf)\
                <button type="submit" class="revoke">Revoke</button></form>
                </article>
                """
        }
        let lastBase = live.last(where: { $0.mode == .served }).map { share in
            share.url.hasSuffix("/shl/" + share.id) ? String(share.url.dropLast(("/shl/" + share.id).count)) : share.url
        } ?? ""
        let options = lifetimes.map { "<option value=\"\($0.value)\"\($0.value == "30d" ? " selected" : "")>\($0.label)</option>" }.joined()
        return Pages.layout(title: "Share \(Pages.name(patient))", visit: visit, body: """
            <section class="person"><h1>Share \(Pages.escape(Pages.name(patient)))’s summary</h1>
            <p class="meta">A SMART Health Link to the International Patient Summary, encrypted under a key that is only in the \
            link and its QR code: whoever scans it can read the summary until it expires or you revoke it.</p>
            \(servesShares ? "" : "<p class=\"warning\">This server does not answer links: recipients reach them only while " +
                "<code>hreader serve --shares</code> runs at the address below.</p>")
            </section>
            \(items.isEmpty ? "<p class=\"empty\">No links shared yet.</p>" : items.joined(separator: "\n"))
            <section class="new-share"><h2>New link</h2>
            <form method="post" action="\(base)/patients/\(uuid)/share">\(csrf)
            <label>Label the recipient sees <input type="text" name="label" maxlength="\(HealthLink.maxLabelCharacters)"></label>
            <label>Lasts <select name="expires">\(options)</select></label>
            <label>Passcode (optional) <input type="password" name="passcode" autocomplete="new-password"></label>
            <label>Address of <code>hreader serve --shares</code> <input type="url" name="base_url" required \
            placeholder="https://me.example.org" value="\(Pages.escape(lastBase))"></label>
            <button type="submit">Make the link</button>
            </form></section>
            """, patient: patient)
    }
}
