import NIOHTTP1

/// Sends each request to its base: /fhir, /secure/fhir, /basic/fhir, /rhex, /oauth, /probe, /faults.
struct Router: HTTPResponder {
    let fhir: FHIRAPI
    let rhex: RHExAPI
    let oauth: OAuthServer
    let basic: BasicAuth?
    let probe: Probe
    let faults: Faults?
    /// `--shl`: SMART Health Links over the invented patients.
    let links: SmartHealthLinks?
    let requireAuth: Bool
    let delayMilliseconds: Int
    let verbose: Bool

    func respond(to request: HTTPRequest) async -> HTTPResponse {
        // The probe's own endpoints are not counted (reading the stats must not change them).
        if Probe.isProbePath(request.path) { return await probe.handle(request) }
        probe.count(request)
        let response = await route(request)
        if verbose {
            // The path only: a query may hold an access token.
            writeStandardError("\(request.method.rawValue) \(request.path) \(response.status.code)")
        }
        return response
    }

    private func route(_ request: HTTPRequest) async -> HTTPResponse {
        let segments = request.segments
        if request.path == BrandsBundle.path { return BrandsBundle.respond(request) }
        switch segments.first {
        case "fhir":
            await delay()
            let rest = Array(segments.dropFirst())
            if let smart = oauth.smart {
                // SMART: the configuration and the CapabilityStatement are public, the data is not.
                if rest == [".well-known", "smart-configuration"] { return smart.configuration(origin: request.origin) }
                if rest != ["metadata"], !oauth.isAuthorized(request, allowQuery: false) { return Self.bearerRequired() }
            }
            return fhir.execute(fhir.resolve(request, segments: rest), request: request, base: base(request, "/fhir", oauthSecured: oauth.smart != nil))
        case "secure" where segments.dropFirst().first == "fhir":
            await delay()
            let rest = Array(segments.dropFirst(2))
            // Its CapabilityStatement is public: it is how a client finds the token (and with
            // --smart the authorize) endpoint; there is no .well-known document here.
            guard rest == ["metadata"] || oauth.isAuthorized(request, allowQuery: false) else { return Self.bearerRequired() }
            let base = base(request, "/secure/fhir", oauthSecured: true)
            return fhir.execute(fhir.resolve(request, segments: rest), request: request, base: base)
        case "basic" where segments.dropFirst().first == "fhir":
            await delay()
            guard let basic else { return FHIRResponse.outcome(.notFound("/basic/fhir is not enabled (no --basic-credentials-file)")) }
            guard basic.isAuthorized(request) else { return BasicAuth.unauthorized() }
            return fhir.execute(fhir.resolve(request, segments: Array(segments.dropFirst(2))), request: request, base: base(request, "/basic/fhir"))
        case "rhex":
            await delay()
            if let denied = rhexAuthorization(request) { return denied }
            return rhex.execute(RHExAPI.route(request, segments: Array(segments.dropFirst())), base: request.origin + "/rhex")
        case "oauth" where segments == ["oauth", "authorize"]:
            guard let smart = oauth.smart else { return RHExAPI.error(.notFound, "not_found", "/oauth/authorize needs --smart") }
            return smart.authorize(request, audiences: [request.origin + "/fhir", request.origin + "/secure/fhir"])
        case "oauth" where segments == ["oauth", "token"]:
            return oauth.token(request)
        case "oauth" where segments == ["oauth", "revoke"]:
            return oauth.revoke(request)
        case "faults":
            return routeFault(request, segments: segments)
        case "shl":
            guard let links else { return RHExAPI.error(.notFound, "not_found", "/shl needs --shl") }
            return links.handle(request, segments: segments)
        default:
            return RHExAPI.error(.notFound, "not_found", "Nothing at \(request.path)")
        }
    }

    private func routeFault(_ request: HTTPRequest, segments: [String]) -> HTTPResponse {
        guard let faults, segments.count >= 3, let mode = FaultMode(rawValue: segments[1]) else {
            return RHExAPI.error(.notFound, "not_found", "Nothing at \(request.path)")
        }
        let path = "/faults/\(mode.rawValue)/\(segments[2])"
        let rest = Array(segments.dropFirst(3))
        switch segments[2] {
        case "fhir":
            return faults.fhir(mode, request: request, segments: rest, base: base(request, path), api: fhir)
        case "rhex":
            return faults.rhex(mode, request: request, segments: rest, base: request.origin + path, api: rhex) {
                rhexAuthorization(request)
            }
        default:
            return RHExAPI.error(.notFound, "not_found", "Nothing at \(request.path)")
        }
    }

    /// With --require-auth, RHEx wants a token in the query (as hReader sent it) or a Bearer header.
    private func rhexAuthorization(_ request: HTTPRequest) -> HTTPResponse? {
        guard requireAuth, !oauth.isAuthorized(request, allowQuery: true) else { return nil }
        return OAuthServer.unauthorized()
    }

    /// Links and fullUrls use the base the request came in on.
    private func base(_ request: HTTPRequest, _ path: String, oauthSecured: Bool = false) -> FHIRBase {
        FHIRBase(url: request.origin + path, origin: request.origin, oauthSecured: oauthSecured, smart: oauthSecured && oauth.smart != nil)
    }

    private static func bearerRequired() -> HTTPResponse {
        FHIRResponse.outcome(
            FHIRError(status: 401, code: "login", diagnostics: "A valid bearer access token is required"),
            headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
    }

    /// --delay-ms: a timer, so a slow answer costs no thread.
    private func delay() async {
        guard delayMilliseconds > 0 else { return }
        try? await Task.sleep(nanoseconds: UInt64(delayMilliseconds) * 1_000_000)
    }
}
